import { DomainError } from '../../../src/domain/errors';
import { MASTER_REALM, Realm } from '../../../src/domain/realm/realm';
import { RealmPolicy } from '../../../src/domain/realm/realm-policy';
import { parseSettingsPatch, RealmSettings } from '../../../src/domain/realm/realm-settings';
import { Session } from '../../../src/domain/session/session';

const DEFAULTS: RealmSettings = {
  publicUrl: 'http://localhost:3000',
  webauthn: { rpId: 'localhost', rpName: 'Identity Service', origins: ['http://localhost:3000'] },
  registration: 'open',
  requireVerifiedEmail: false,
  accessTokenTtlSeconds: 900,
  sessionIdleTimeoutSeconds: 604_800,
  sessionMaxLifetimeSeconds: 2_592_000,
  lockout: { maxFailures: 10, durationSeconds: 900 },
  passwordMinLength: 8,
  fingerprintMatchThreshold: 0.7,
  allowedReturnUrls: [],
  clientRegistration: 'closed',
};
const NOW = new Date('2026-11-25T12:00:00.000Z');

function aRealm(id = 'acme'): Realm {
  return Realm.create({ id, name: 'Acme', now: NOW }, DEFAULTS);
}

function failure(work: () => unknown): { code: string; fields: string[] } | null {
  try {
    work();
    return null;
  } catch (error) {
    const e = error as DomainError;
    return { code: e.code, fields: (e.meta.details ?? []).map((d) => d.field) };
  }
}

describe('RealmPolicy', () => {
  it('follows the deployment defaults until the realm sets a value, and again once it is reset to null', () => {
    const realm = aRealm();
    expect(realm.settings).toEqual(DEFAULTS);
    realm.update({ settings: parseSettingsPatch({ accessTokenTtlSeconds: 300, lockout: { maxFailures: 3 } }) }, NOW);
    expect(realm.policy.accessTokenTtlSeconds).toBe(300);
    expect(realm.policy.lockout).toEqual({ maxFailures: 3, durationSeconds: 900 });
    realm.update({ settings: parseSettingsPatch({ accessTokenTtlSeconds: null, lockout: { maxFailures: null } }) }, NOW);
    expect(realm.settings).toEqual(DEFAULTS);
  });

  it('refuses registration only while it is closed, and always in master', () => {
    const realm = aRealm();
    expect(() => realm.policy.assertRegistrationOpen()).not.toThrow();
    realm.update({ settings: { registration: 'closed' } }, NOW);
    expect(failure(() => realm.policy.assertRegistrationOpen())?.code).toBe('REGISTRATION_DISABLED');
    const master = aRealm(MASTER_REALM);
    expect(master.settings.registration).toBe('closed');
    expect(failure(() => master.policy.assertRegistrationOpen())?.code).toBe('REGISTRATION_DISABLED');
    expect(failure(() => master.update({ settings: { registration: 'open' } }, NOW))).toEqual({
      code: 'VALIDATION_FAILED',
      fields: ['settings.registration'],
    });
    expect(failure(() => master.update({ enabled: false }, NOW))?.fields).toEqual(['enabled']);
  });

  it('lets an unverified address sign in unless the realm requires a verified one', () => {
    const realm = aRealm();
    expect(() => realm.policy.assertMaySignIn({ emailVerified: false })).not.toThrow();
    realm.update({ settings: { requireVerifiedEmail: true } }, NOW);
    expect(failure(() => realm.policy.assertMaySignIn({ emailVerified: false }))?.code).toBe('EMAIL_NOT_VERIFIED');
    expect(() => realm.policy.assertMaySignIn({ emailVerified: true })).not.toThrow();
  });

  it('applies its minimum password length on top of the other password rules', () => {
    const policy = RealmPolicy.of({ ...DEFAULTS, passwordMinLength: 12 });
    const never = () => false;
    expect(failure(() => policy.assertAcceptablePassword('eleven char', never))?.code).toBe('VALIDATION_FAILED');
    expect(() => policy.assertAcceptablePassword('twelve chars', never)).not.toThrow();
    expect(failure(() => policy.assertAcceptablePassword('twelve chars', (c) => c === 'twelve chars'))?.code).toBe('VALIDATION_FAILED');
  });

  it('matches fingerprints at its own threshold', () => {
    const strict = RealmPolicy.of({ ...DEFAULTS, fingerprintMatchThreshold: 0.9 });
    expect(strict.fingerprintMatches(0.85)).toBe(false);
    expect(strict.fingerprintMatches(0.9)).toBe(true);
    expect(RealmPolicy.of(DEFAULTS).fingerprintMatches(0.85)).toBe(true);
  });

  it('ends open sessions sooner when the lifetime shrinks, never later when it grows', () => {
    const session = Session.open({
      id: 's1',
      realmId: 'acme',
      userId: 'u1',
      device: { id: 'd1', name: 'Firefox', type: 'browser', fingerprint: null },
      referenceFingerprint: null,
      ip: '203.0.113.1',
      location: { country: null, city: null },
      userAgent: null,
      amr: ['pwd'],
      now: NOW,
      lifetime: { idleTimeoutSeconds: 3600, maxLifetimeSeconds: 86_400 },
    });
    const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
    const shorter = RealmPolicy.of({ ...DEFAULTS, sessionIdleTimeoutSeconds: 600, sessionMaxLifetimeSeconds: 1800 }).sessionLifetime;
    expect(session.isLive(at(601), shorter)).toBe(false);
    session.touch(at(500), '203.0.113.1');
    expect(session.isLive(at(1000), shorter)).toBe(true);
    expect(session.expiresAt(shorter)).toEqual(at(1100));
    session.touch(at(1700), '203.0.113.1');
    expect(session.isLive(at(1801), shorter)).toBe(false);
    const longer = RealmPolicy.of({
      ...DEFAULTS,
      sessionIdleTimeoutSeconds: 31_536_000,
      sessionMaxLifetimeSeconds: 31_536_000,
    }).sessionLifetime;
    expect(session.isLive(at(86_401), longer)).toBe(false);
  });

  it('hands out copies: changing what it returns changes nothing', () => {
    const policy = RealmPolicy.of(DEFAULTS);
    policy.relyingParty.origins.push('https://evil.example');
    policy.settings.lockout.maxFailures = 1;
    expect(policy.relyingParty.origins).toEqual(['http://localhost:3000']);
    expect(policy.lockout.maxFailures).toBe(10);
  });
});

describe('realm settings changes', () => {
  it('checks every field against its range and names each bad one', () => {
    expect(
      failure(() =>
        parseSettingsPatch({
          accessTokenTtlSeconds: 59,
          sessionIdleTimeoutSeconds: 31_536_001,
          lockout: { maxFailures: 0, durationSeconds: 86_401, extra: 1 },
          passwordMinLength: 7.5,
          fingerprintMatchThreshold: 0.96,
          publicUrl: 'ftp://files.example',
          registration: 'maybe',
          requireVerifiedEmail: 1,
          webauthn: { rpId: 'Bad Host', origins: ['https://a.example/path'], rpName: '' },
          unknown: true,
        }),
      ),
    ).toEqual({
      code: 'VALIDATION_FAILED',
      fields: [
        'settings.accessTokenTtlSeconds',
        'settings.sessionIdleTimeoutSeconds',
        'settings.lockout.maxFailures',
        'settings.lockout.durationSeconds',
        'settings.lockout.extra',
        'settings.passwordMinLength',
        'settings.fingerprintMatchThreshold',
        'settings.publicUrl',
        'settings.registration',
        'settings.requireVerifiedEmail',
        'settings.webauthn.rpId',
        'settings.webauthn.origins',
        'settings.webauthn.rpName',
        'settings.unknown',
      ],
    });
  });

  it('normalises what it accepts: trailing slashes off URLs, duplicate origins merged', () => {
    expect(parseSettingsPatch({ publicUrl: 'https://app.example.com/portal//' })).toEqual({ publicUrl: 'https://app.example.com/portal' });
    expect(parseSettingsPatch({ webauthn: { origins: ['https://a.example.com', 'https://a.example.com/'] } })).toEqual({
      webauthn: { origins: ['https://a.example.com'] },
    });
  });

  it('keeps the idle timeout within the maximum lifetime and the origins on the relying party’s domain', () => {
    const realm = aRealm();
    expect(
      failure(() => realm.update({ settings: { sessionMaxLifetimeSeconds: 600, sessionIdleTimeoutSeconds: 900 } }, NOW))?.fields,
    ).toEqual(['settings.sessionIdleTimeoutSeconds']);
    // The default idle timeout (7 days) exceeds a 1-hour maximum lifetime set alone.
    expect(failure(() => realm.update({ settings: { sessionMaxLifetimeSeconds: 3600 } }, NOW))?.fields).toEqual([
      'settings.sessionIdleTimeoutSeconds',
    ]);
    expect(failure(() => realm.update({ settings: { webauthn: { rpId: 'shop.example.com' } } }, NOW))?.fields).toEqual([
      'settings.webauthn.origins',
    ]);
    const changes = realm.update(
      { settings: { webauthn: { rpId: 'example.com', origins: ['https://shop.example.com', 'https://example.com'] } } },
      NOW,
    );
    expect(changes.changed).toEqual(['settings.webauthn.rpId', 'settings.webauthn.origins']);
    expect(realm.policy.relyingParty).toEqual({
      rpId: 'example.com',
      rpName: 'Identity Service',
      origins: ['https://shop.example.com', 'https://example.com'],
    });
  });

  it('changes nothing when any part is refused', () => {
    const realm = aRealm();
    expect(failure(() => realm.update({ name: 'New name', settings: { sessionMaxLifetimeSeconds: 300 } }, NOW))?.code).toBe(
      'VALIDATION_FAILED',
    );
    expect(realm.name).toBe('Acme');
    expect(realm.settings).toEqual(DEFAULTS);
  });

  it('reports what changed with the values in force before and after', () => {
    const realm = aRealm();
    const later = new Date(NOW.getTime() + 1000);
    expect(realm.update({ enabled: false, settings: { passwordMinLength: 12 } }, later)).toEqual({
      changed: ['enabled', 'settings.passwordMinLength'],
      from: { enabled: true, 'settings.passwordMinLength': 8 },
      to: { enabled: false, 'settings.passwordMinLength': 12 },
    });
    expect(realm.updatedAt).toEqual(later);
    expect(realm.update({ settings: { passwordMinLength: 12 } }, NOW).changed).toEqual([]);
    // Setting the default's value explicitly is a change of what the realm stores.
    expect(realm.update({ settings: { accessTokenTtlSeconds: 900 } }, NOW).changed).toEqual(['settings.accessTokenTtlSeconds']);
  });
});
