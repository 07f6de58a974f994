import { AccountEmails } from '../../../src/application/account/account-emails';
import { ClientContext } from '../../../src/application/sign-in/client-context';
import { DeviceObserver } from '../../../src/application/sign-in/device-observation';
import { FingerprintSessionGuardian } from '../../../src/application/sign-in/fingerprint-session-guardian';
import { MfaChallenges } from '../../../src/application/sign-in/mfa-challenges';
import { DetectedDevice, DeviceDetector } from '../../../src/application/ports/device-detector';
import { Transaction } from '../../../src/application/ports/transaction';
import { loadConfig } from '../../../src/config/load-config';
import { DomainError } from '../../../src/domain/errors';
import { realmDefaultsFrom } from '../../../src/application/realm/realm-defaults';
import { Realm } from '../../../src/domain/realm/realm';
import { Session } from '../../../src/domain/session/session';
import { User } from '../../../src/domain/user/user';
import { aUser } from '../../builders/user.builder';
import { InMemoryOneTimeTokenRepository } from '../../fakes/in-memory-one-time-token.repository';
import { InMemorySessionRepository } from '../../fakes/in-memory-session.repository';
import { FakeSecureTokens, FixedClock, InMemoryAuditLog, InMemoryMailer } from '../../fakes/simple-fakes';

/** User-Agents are plain names here: "Chrome/macOS", "Firefox/Windows". */
class SlashDeviceDetector extends DeviceDetector {
  detect(userAgent: string | undefined): DetectedDevice {
    const [browser, os] = (userAgent ?? '').split('/');
    return browser && os
      ? { browser, os, deviceType: 'browser', name: `${browser} on ${os}` }
      : { deviceType: 'unknown', name: 'Unknown device' };
  }
}

/** Counts units of work, so tests see which writes were grouped. */
class CountingTransaction implements Transaction {
  runs = 0;
  async run<T>(work: () => Promise<T>): Promise<T> {
    this.runs += 1;
    return work();
  }
  batch<T>(work: () => Promise<T>): Promise<T> {
    return this.run(work);
  }
  afterCommit(effect: () => void): void {
    effect();
  }
}

const laptop = {
  canvas: 'c1',
  audio: 'a1',
  webglRenderer: 'M2',
  fonts: 'f1',
  screen: '1512x982',
  cores: 8,
  tz: 'Europe/Berlin',
  lang: 'en-US',
};
const desktop = {
  canvas: 'c9',
  audio: 'a9',
  webglRenderer: 'RTX',
  fonts: 'f9',
  screen: '1920x1080',
  cores: 16,
  tz: 'Europe/Berlin',
  lang: 'de-DE',
};

const client = (components: object, userAgent = 'Chrome/macOS', ip = '203.0.113.7'): ClientContext => ({
  ip,
  userAgent,
  acceptLanguage: 'en-US',
  fingerprint: JSON.stringify(components),
});

function setup(user: User) {
  const config = loadConfig({});
  const clock = new FixedClock();
  const realm = Realm.create({ id: 'default', name: 'Default', now: clock.now() }, realmDefaultsFrom(config));
  const sessions = new InMemorySessionRepository();
  const oneTimeTokens = new InMemoryOneTimeTokenRepository();
  const secureTokens = new FakeSecureTokens();
  const audit = new InMemoryAuditLog();
  const mailer = new InMemoryMailer();
  const tx = new CountingTransaction();
  const devices = new DeviceObserver(new SlashDeviceDetector());
  const guardian = new FingerprintSessionGuardian(
    devices,
    sessions,
    new MfaChallenges(oneTimeTokens, secureTokens),
    new AccountEmails(oneTimeTokens, secureTokens, mailer, config),
    audit,
    tx,
  );
  const loginClient = client(laptop);
  const session = Session.open({
    id: crypto.randomUUID(),
    realmId: realm.id,
    userId: user.id,
    device: devices.device(devices.observe(loginClient), loginClient, crypto.randomUUID()),
    // As stored: through JSON, like the jsonb column.
    referenceFingerprint: JSON.parse(JSON.stringify(devices.observe(loginClient).fingerprint)),
    ip: loginClient.ip,
    location: { country: null, city: null },
    userAgent: loginClient.userAgent,
    amr: ['pwd'],
    now: clock.now(),
    lifetime: { idleTimeoutSeconds: config.sessionIdleTimeoutSeconds, maxLifetimeSeconds: config.sessionMaxLifetimeSeconds },
  });
  void sessions.insert(session);
  const check = (c: ClientContext) => guardian.check({ realm, user, session, client: c, now: clock.now() });
  return { check, session, sessions, oneTimeTokens, audit, mailer, tx };
}

async function errorOf(work: Promise<unknown>): Promise<DomainError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('FingerprintSessionGuardian', () => {
  it('lets the same device through after soft changes, and writes nothing', async () => {
    const f = setup(aUser());
    await f.check(client({ ...laptop, tz: 'Europe/Paris' }, 'Chrome/macOS', '198.51.100.7'));
    expect(f.audit.entries).toEqual([]);
    expect(f.mailer.sent).toEqual([]);
    expect(f.tx.runs).toBe(0);
    expect((await f.sessions.findById('default', f.session.id))?.status).toBe('active');
  });

  it('flags and revokes on another device for a user without MFA, in one unit of work, then answers REAUTHENTICATION_REQUIRED', async () => {
    const user = aUser();
    const f = setup(user);
    const error = await errorOf(f.check(client(desktop, 'Firefox/Windows', '192.0.2.9')));
    expect(error.code).toBe('REAUTHENTICATION_REQUIRED');
    expect(error.meta.mfaToken).toBeUndefined();
    expect(f.tx.runs).toBe(1);
    const stored = (await f.sessions.findById('default', f.session.id))!;
    expect(stored.status).toBe('flagged');
    expect(stored.flag).toEqual({
      reason: 'fingerprint_mismatch',
      score: expect.any(Number),
      flaggedAt: new Date('2026-11-25T12:00:00.000Z'),
    });
    expect(stored.flag!.score).toBeLessThan(0.7);
    expect(stored.revokedAt).not.toBeNull();
    expect(f.audit.types()).toEqual(['session.flagged', 'session.revoked']);
    expect(f.audit.entries[0]).toMatchObject({
      sessionId: f.session.id,
      ip: '192.0.2.9',
      details: { score: stored.flag!.score, device: 'Firefox on Windows' },
    });
    expect(f.audit.entries[1].details).toEqual({ reason: 'fingerprint_mismatch' });
    expect(f.mailer.sent).toHaveLength(1);
    expect(f.mailer.sent[0]).toMatchObject({ to: user.email });
    expect(f.mailer.sent[0].text).toContain('Firefox on Windows');
  });

  it('answers INVALID_TOKEN and flags, mails and audits nothing when the session was revoked after the refresh read it', async () => {
    const f = setup(aUser({ mfaMethods: ['totp'] }));
    await f.sessions.revoke('default', f.session.id, new Date('2026-11-25T12:00:00.000Z'), 'logout'); // f.session is the copy read before

    const error = await errorOf(f.check(client(desktop, 'Firefox/Windows', '192.0.2.9')));

    expect(error.code).toBe('INVALID_TOKEN');
    const stored = (await f.sessions.findById('default', f.session.id))!;
    expect(stored.revokedAt).not.toBeNull();
    expect(stored.status).toBe('active');
    expect(f.audit.entries).toEqual([]);
    expect(f.mailer.sent).toEqual([]);
  });

  it('flags without revoking for a user with MFA and answers MFA_REQUIRED with a reverify mfaToken for this session', async () => {
    const f = setup(aUser({ mfaMethods: ['totp'] }));
    const error = await errorOf(f.check(client(desktop, 'Firefox/Windows', '192.0.2.9')));
    expect(error.code).toBe('MFA_REQUIRED');
    expect(error.meta.mfaToken).toEqual(expect.any(String));
    const [challenge] = [...f.oneTimeTokens.rows.values()].filter((t) => t.kind === 'mfa');
    expect(challenge.payload).toMatchObject({ purpose: 'reverify', sessionId: f.session.id, client: { ip: '192.0.2.9' } });
    const stored = (await f.sessions.findById('default', f.session.id))!;
    expect(stored.status).toBe('flagged');
    expect(stored.revokedAt).toBeNull();
    expect(f.audit.types()).toEqual(['session.flagged']);
  });

  it('keeps refusing a flagged session, even from the original device, without flagging or mailing again', async () => {
    const f = setup(aUser({ mfaMethods: ['totp'] }));
    await errorOf(f.check(client(desktop, 'Firefox/Windows')));
    const again = await errorOf(f.check(client(laptop)));
    expect(again.code).toBe('MFA_REQUIRED');
    expect(f.audit.types()).toEqual(['session.flagged']);
    expect(f.mailer.sent).toHaveLength(1);
    expect([...f.oneTimeTokens.rows.values()].filter((t) => t.kind === 'mfa')).toHaveLength(2);
  });

  it('refuses a malformed fingerprint before comparing anything', async () => {
    const f = setup(aUser());
    const error = await errorOf(f.check({ ...client(laptop), fingerprint: '{"canvas": [1]}' }));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(f.audit.entries).toEqual([]);
  });
});
