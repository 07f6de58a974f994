import { firstFactorAmr } from '../../../src/application/mfa/verify-mfa.use-case';
import { AccountTakeover } from '../../../src/application/account/account-takeover';
import { DeviceObserver } from '../../../src/application/sign-in/device-observation';
import { PendingLogin } from '../../../src/application/sign-in/mfa-challenges';
import { DetectedDevice, DeviceDetector } from '../../../src/application/ports/device-detector';
import { Session } from '../../../src/domain/session/session';
import { aUser } from '../../builders/user.builder';
import { aPasskey } from '../../builders/webauthn-credential.builder';
import { InMemoryLinkedIdentityRepository } from '../../fakes/in-memory-linked-identity.repository';
import { InMemoryMfaCredentialRepository } from '../../fakes/in-memory-mfa-credential.repository';
import { immediateTransaction } from '../../fakes/simple-fakes';
import { authFixture } from './auth-fixture';

class Detector extends DeviceDetector {
  detect(): DetectedDevice {
    return { browser: 'Chrome', browserMajor: '131', os: 'macOS', osVersion: '15', deviceType: 'browser', name: 'Chrome 131 on macOS' };
  }
}

function proven(f: ReturnType<typeof authFixture>, user = aUser({ emailVerified: true })) {
  return {
    realm: f.realm,
    user,
    client: f.client,
    observation: new DeviceObserver(new Detector()).observe(f.client),
    amr: ['fed'],
    method: 'federated' as const,
    multiFactor: false,
    details: { provider: 'corp' },
    dpopJkt: null,
  };
}

describe('SignInContinuation', () => {
  it('opens a session with the factor’s amr and audits login.succeeded with its method and details', async () => {
    const user = aUser({ emailVerified: true });
    const f = authFixture([user]);
    const result = await f.continuation.continue(proven(f, user));
    expect(result.kind).toBe('authenticated');
    const [session] = [...f.sessions.rows.values()];
    expect(session.amr).toEqual(['fed']);
    expect(f.audit.entries.at(-1)).toMatchObject({
      type: 'login.succeeded',
      userId: user.id,
      sessionId: session.id,
      details: { method: 'federated', provider: 'corp', amr: ['fed'] },
    });
    expect((await f.userRepo.findById('default', user.id))?.lastLoginAt).toEqual(f.clock.now());
  });

  it('asks an MFA user for the second factor and keeps the first factor with the challenge', async () => {
    const user = aUser({ emailVerified: true, mfaMethods: ['totp'] });
    const f = authFixture([user]);
    const result = await f.continuation.continue(proven(f, user));
    expect(result).toMatchObject({ kind: 'mfa-required', methods: ['totp'] });
    expect(f.sessions.rows.size).toBe(0);
    const [challenge] = [...f.oneTimeTokens.rows.values()];
    expect(challenge.payload as unknown as PendingLogin).toMatchObject({
      amr: ['fed'],
      method: 'federated',
      details: { provider: 'corp' },
    });
  });

  it('asks no second factor of a factor that is two at once (a passkey)', async () => {
    const user = aUser({ emailVerified: true, mfaMethods: ['webauthn'] });
    const f = authFixture([user]);
    const result = await f.continuation.continue({ ...proven(f, user), amr: ['hwk', 'mfa'], method: 'passkey', multiFactor: true });
    expect(result.kind).toBe('authenticated');
    expect([...f.sessions.rows.values()][0].amr).toEqual(['hwk', 'mfa']);
  });

  it.each([
    ['suspended', { status: 'suspended' as const }, 'ACCOUNT_SUSPENDED'],
    ['locked', { status: 'locked' as const, lockedUntil: new Date('2030-01-01T00:00:00.000Z') }, 'ACCOUNT_LOCKED'],
  ])('refuses a %s account with no session, audited with the method', async (reason, state, code) => {
    const user = aUser({ emailVerified: true, ...state });
    const f = authFixture([user]);
    await expect(f.continuation.continue(proven(f, user))).rejects.toMatchObject({ code });
    expect(f.sessions.rows.size).toBe(0);
    expect(f.audit.entries.at(-1)).toMatchObject({ type: 'login.failed', details: { method: 'federated', reason } });
  });

  it('holds to the realm’s requireVerifiedEmail', async () => {
    const user = aUser({ emailVerified: false });
    const f = authFixture([user]);
    f.realm.update({ settings: { requireVerifiedEmail: true } }, f.clock.now());
    await expect(f.continuation.continue(proven(f, user))).rejects.toMatchObject({ code: 'EMAIL_NOT_VERIFIED' });
    expect(f.sessions.rows.size).toBe(0);
  });

  it('stores nothing when the account was suspended while the factor was checked', async () => {
    const user = aUser({ emailVerified: true });
    const f = authFixture([user]);
    const stored = (await f.userRepo.findById('default', user.id))!;
    stored.suspend(f.clock.now());
    await f.userRepo.save(stored);
    await expect(f.continuation.continue(proven(f, user))).rejects.toMatchObject({ code: 'ACCOUNT_SUSPENDED' });
    expect(f.sessions.rows.size).toBe(0);
  });
});

describe('AccountTakeover', () => {
  it('removes the password, every factor, every identity and every session, voids pending MFA sign-ins, and audits it', async () => {
    const squatted = aUser({ emailVerified: false, mfaMethods: ['totp', 'webauthn'] });
    const f = authFixture([squatted]);
    const credentials = new InMemoryMfaCredentialRepository();
    const now = f.clock.now();
    await credentials.savePendingTotp({ userId: squatted.id, secretEncrypted: 's', confirmedAt: now, lastUsedStep: 0, createdAt: now });
    await credentials.insertWebauthn(aPasskey(squatted.id, now));
    await credentials.replaceRecoveryCodes(squatted.id, ['h1', 'h2']);
    const identities = new InMemoryLinkedIdentityRepository([
      {
        id: crypto.randomUUID(),
        realmId: 'default',
        userId: squatted.id,
        providerId: crypto.randomUUID(),
        provider: 'other',
        subject: 'squatter-sub',
        email: squatted.email,
        linkedAt: now,
        lastUsedAt: null,
      },
    ]);
    const opened = await f.login.execute({
      realm: f.realm,
      email: squatted.email,
      password: 'correct horse battery staple',
      client: f.client,
    });
    expect(opened.kind).toBe('mfa-required');
    await f.sessions.insert(
      Session.open({
        id: crypto.randomUUID(),
        realmId: 'default',
        userId: squatted.id,
        device: { id: 'd', name: 'x', type: 'browser', fingerprint: null },
        referenceFingerprint: null,
        ip: '203.0.113.1',
        location: { country: null, city: null },
        userAgent: null,
        amr: ['pwd'],
        dpopJkt: null,
        now,
        lifetime: f.realm.policy.sessionLifetime,
      }),
    );
    const takeover = new AccountTakeover(f.userRepo, credentials, identities, f.sessions, f.oneTimeTokens, f.audit, immediateTransaction);

    const user = (await f.userRepo.findById('default', squatted.id))!;
    await takeover.execute({ user, now, ip: '198.51.100.4', event: { type: 'identity.linked', details: { provider: 'corp' } } });

    const stored = (await f.userRepo.findById('default', squatted.id))!;
    expect(stored.passwordHash).toBeNull();
    expect(stored.emailVerified).toBe(true);
    expect(await credentials.findTotp(squatted.id)).toBeNull();
    expect(await credentials.listWebauthn(squatted.id)).toEqual([]);
    expect(await credentials.countUnusedRecoveryCodes(squatted.id)).toBe(0);
    expect(identities.rows.size).toBe(0);
    expect([...f.sessions.rows.values()].every((s) => s.revokedAt !== null)).toBe(true);
    expect([...f.oneTimeTokens.rows.values()].every((t) => t.usedAt !== null)).toBe(true);
    expect(f.audit.entries.at(-1)).toMatchObject({
      type: 'identity.linked',
      userId: squatted.id,
      details: {
        provider: 'corp',
        takeover: true,
        removed: { password: true, mfaMethods: ['totp', 'webauthn'], identities: 1, sessions: 1 },
      },
    });
  });

  it('changes nothing of a verified account', async () => {
    const owner = aUser({ emailVerified: true });
    const f = authFixture([owner]);
    const takeover = new AccountTakeover(
      f.userRepo,
      new InMemoryMfaCredentialRepository(),
      new InMemoryLinkedIdentityRepository(),
      f.sessions,
      f.oneTimeTokens,
      f.audit,
      immediateTransaction,
    );
    const user = (await f.userRepo.findById('default', owner.id))!;
    await expect(
      takeover.execute({ user, now: f.clock.now(), ip: null, event: { type: 'email.verified', details: {} } }),
    ).rejects.toMatchObject({ code: 'INVALID_USER_STATE' });
    expect((await f.userRepo.findById('default', owner.id))!.hasPassword).toBe(true);
    expect(f.audit.entries).toEqual([]);
  });
});

describe('firstFactorAmr', () => {
  it.each([
    [['pwd', 'otp'], ['pwd']],
    [['fed', 'hwk'], ['fed']],
    [['fed'], ['fed']],
    [
      ['hwk', 'mfa'],
      ['hwk', 'mfa'],
    ],
    [['email', 'otp'], ['email']],
  ])('keeps the first factor of %j: %j', (amr, first) => {
    expect(firstFactorAmr(amr)).toEqual(first);
  });
});
