import { fakeDpopBinding } from '../../fakes/dpop-fakes';
import { AccountEmails } from '../../../src/application/auth/account-emails';
import { DeviceObserver } from '../../../src/application/auth/device-observation';
import { MfaChallenges } from '../../../src/application/auth/mfa-challenges';
import { RecentAuthentication } from '../../../src/application/auth/recent-authentication';
import { SessionIssuer } from '../../../src/application/auth/session-issuer';
import { ConfirmTotpUseCase } from '../../../src/application/mfa/confirm-totp.use-case';
import { DisableTotpUseCase } from '../../../src/application/mfa/disable-totp.use-case';
import { MfaAccount } from '../../../src/application/mfa/mfa-account';
import { SetupTotpUseCase } from '../../../src/application/mfa/setup-totp.use-case';
import { SignInContinuation } from '../../../src/application/auth/sign-in-continuation';
import { RecoveryCodeFactor, SecondFactors, TotpFactor, WebauthnFactor } from '../../../src/application/mfa/second-factors';
import { VerifyMfaUseCase } from '../../../src/application/mfa/verify-mfa.use-case';
import { DetectedDevice, DeviceDetector } from '../../../src/application/ports/device-detector';
import { QrCodeRenderer } from '../../../src/application/ports/qr-code-renderer';
import { SecretCipher } from '../../../src/application/ports/secret-cipher';
import { TotpVerifier } from '../../../src/application/ports/totp-verifier';
import { WebAuthnRelyingParty } from '../../../src/application/ports/webauthn-relying-party';
import { loadConfig } from '../../../src/config/load-config';
import { realmDefaultsFrom } from '../../../src/application/realm/realm-defaults';
import { Realm } from '../../../src/domain/realm/realm';
import { Session } from '../../../src/domain/session/session';
import { MfaMethod, User } from '../../../src/domain/user/user';
import { aUser } from '../../builders/user.builder';
import { InMemoryMfaCredentialRepository } from '../../fakes/in-memory-mfa-credential.repository';
import { InMemoryOneTimeTokenRepository } from '../../fakes/in-memory-one-time-token.repository';
import { InMemoryRefreshTokenRepository } from '../../fakes/in-memory-refresh-token.repository';
import { InMemorySessionRepository } from '../../fakes/in-memory-session.repository';
import { InMemoryUserRepository } from '../../fakes/in-memory-user.repository';
import {
  FakeAccessTokens,
  FakePasswordHasher,
  FakeSecureTokens,
  FixedClock,
  immediateTransaction,
  InMemoryAuditLog,
  InMemoryMailer,
  NullGeoIpFake,
} from '../../fakes/simple-fakes';

const PASSWORD = 'correct horse battery staple';

/** Codes are `<secret>:<step>`; steps are 30-second slots of the clock. Enough to test the use cases' rules. */
class FakeTotp extends TotpVerifier {
  generateSecret(): string {
    return `S${Math.random().toString(36).slice(2, 8).toUpperCase()}`;
  }
  keyUri({ secret, issuer, account }: { secret: string; issuer: string; account: string }): string {
    return `otpauth://totp/${issuer}:${account}?secret=${secret}`;
  }
  matchingStep(secret: string, code: string, now: Date): number | null {
    const step = Math.floor(now.getTime() / 30_000);
    for (const s of [step - 1, step, step + 1]) if (code === `${secret}:${s}`) return s;
    return null;
  }
}

class ReversibleCipher extends SecretCipher {
  async encrypt(plaintext: string, context: string) {
    return `enc(${context}|${plaintext})`;
  }
  async decrypt(value: string, context: string) {
    const prefix = `enc(${context}|`;
    if (!value.startsWith(prefix)) throw new Error('wrong context');
    return value.slice(prefix.length, -1);
  }
}

class NoQr extends QrCodeRenderer {
  async pngDataUrl(text: string) {
    return `data:image/png;base64,${Buffer.from(text).toString('base64')}`;
  }
}

class StaticDeviceDetector extends DeviceDetector {
  detect(): DetectedDevice {
    return { browser: 'Chrome', browserMajor: '131', os: 'macOS', osVersion: '15', deviceType: 'browser', name: 'Chrome 131 on macOS' };
  }
}

/** Like the database, the users' MFA methods follow from their confirmed factors. */
class MfaAwareUsers extends InMemoryUserRepository {
  constructor(
    users: User[],
    private readonly mfa: InMemoryMfaCredentialRepository,
  ) {
    super(users);
  }
  override async findById(realmId: string, id: string) {
    return this.withMethods(await super.findById(realmId, id));
  }
  override async findByEmail(realmId: string, email: string) {
    return this.withMethods(await super.findByEmail(realmId, email));
  }
  private withMethods(user: User | null): User | null {
    if (!user) return null;
    const methods: MfaMethod[] = [];
    if (this.mfa.totp.get(user.id)?.confirmedAt) methods.push('totp');
    if ([...this.mfa.webauthn.values()].some((c) => c.userId === user.id)) methods.push('webauthn');
    user.setMfaMethods(methods);
    return user;
  }
}

function fixture(user = aUser()) {
  const config = loadConfig({});
  const clock = new FixedClock();
  const realm = Realm.create({ id: 'default', name: 'Default', now: clock.now() }, realmDefaultsFrom(config));
  const mfa = new InMemoryMfaCredentialRepository();
  const users = new MfaAwareUsers([user], mfa);
  const sessions = new InMemorySessionRepository();
  const refreshTokens = new InMemoryRefreshTokenRepository(sessions, users);
  const oneTimeTokens = new InMemoryOneTimeTokenRepository();
  const audit = new InMemoryAuditLog();
  const secureTokens = new FakeSecureTokens();
  const devices = new DeviceObserver(new StaticDeviceDetector());
  const totp = new FakeTotp();
  const cipher = new ReversibleCipher();
  const issuer = new SessionIssuer(
    sessions,
    refreshTokens,
    new FakeAccessTokens(),
    secureTokens,
    devices,
    new NullGeoIpFake(),
    fakeDpopBinding(config),
  );
  const challenges = new MfaChallenges(oneTimeTokens, secureTokens);
  const mailer = new InMemoryMailer();
  const emails = new AccountEmails(oneTimeTokens, secureTokens, mailer, config);
  const account = new MfaAccount(
    users,
    mfa,
    new FakePasswordHasher(),
    secureTokens,
    audit,
    immediateTransaction,
    emails,
    sessions,
    new RecentAuthentication(sessions, clock, config),
  );
  const relyingParty = {} as WebAuthnRelyingParty; // not reached by TOTP and recovery codes
  const factors = new SecondFactors(
    new TotpFactor(mfa, cipher, totp),
    new RecoveryCodeFactor(mfa, account),
    new WebauthnFactor(mfa, oneTimeTokens, relyingParty, account),
  );
  const verify = new VerifyMfaUseCase(
    challenges,
    oneTimeTokens,
    users,
    factors,
    issuer,
    new SignInContinuation(users, issuer, devices, challenges, audit, immediateTransaction, clock),
    sessions,
    refreshTokens,
    devices,
    audit,
    immediateTransaction,
    clock,
  );
  const client = { ip: '203.0.113.9', userAgent: 'Mozilla/5.0', acceptLanguage: 'en', fingerprint: null };
  // The caller's session, signed in just now (adding a factor needs a recent sign-in).
  const signedIn = Session.open({
    id: crypto.randomUUID(),
    realmId: realm.id,
    userId: user.id,
    device: { id: 'd1', name: 'Test browser', type: 'browser', fingerprint: null },
    referenceFingerprint: {},
    ip: client.ip,
    location: { country: null, city: null },
    userAgent: null,
    amr: ['pwd'],
    now: clock.now(),
    lifetime: { idleTimeoutSeconds: config.sessionIdleTimeoutSeconds, maxLifetimeSeconds: config.sessionMaxLifetimeSeconds },
  });
  sessions.rows.set(signedIn.id, signedIn);
  const actor = { realm, userId: user.id, sessionId: signedIn.id, ip: client.ip };
  return {
    user,
    config,
    clock,
    realm,
    mfa,
    users,
    sessions,
    refreshTokens,
    oneTimeTokens,
    mailer,
    audit,
    client,
    actor,
    verify,
    challenges,
    setup: new SetupTotpUseCase(account, mfa, totp, cipher, new NoQr(), clock, new RecentAuthentication(sessions, clock, config)),
    confirm: new ConfirmTotpUseCase(account, mfa, totp, cipher, immediateTransaction, clock),
    disable: new DisableTotpUseCase(account, mfa, immediateTransaction, clock),
    step: () => Math.floor(clock.now().getTime() / 30_000),
  };
}

async function enrolled() {
  const f = fixture();
  const { secret } = await f.setup.execute(f.actor);
  const confirmed = await f.confirm.execute({ ...f.actor, code: `${secret}:${f.step()}` });
  f.clock.advance(30);
  const pendingLogin = async () =>
    f.challenges.create({
      realm: f.realm,
      user: (await f.users.findById('default', f.user.id))!,
      client: f.client,
      purpose: 'login',
      now: f.clock.now(),
    });
  return { ...f, secret, recoveryCodes: confirmed.recoveryCodes!, pendingLogin };
}

describe('TOTP enrolment use cases', () => {
  it('keeps the secret encrypted and pending until a code confirms it; the first factor brings 10 recovery codes', async () => {
    const f = fixture();
    const { secret, otpauthUrl, qrCode } = await f.setup.execute(f.actor);
    expect(otpauthUrl).toContain('Default:');
    expect(qrCode).toMatch(/^data:image\/png;base64,/);
    expect(f.mfa.totp.get(f.user.id)).toMatchObject({ secretEncrypted: `enc(${f.user.id}|${secret})`, confirmedAt: null });
    await expect(f.confirm.execute({ ...f.actor, code: `${secret}:${f.step() + 2}` })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    const result = await f.confirm.execute({ ...f.actor, code: `${secret}:${f.step()}` });
    expect(result.user.mfaMethods).toEqual(['totp']);
    expect(result.recoveryCodes).toHaveLength(10);
    expect(f.mfa.recoveryCodes).toHaveLength(10);
    expect(f.mfa.totp.get(f.user.id)?.lastUsedStep).toBe(f.step());
    expect(f.audit.types()).toEqual(['mfa.enabled']);
    expect(f.mailer.sent.map((m) => m.to)).toEqual([f.user.email]);
    expect(f.mailer.sent[0].text).toContain('authenticator app (TOTP) was added');
  });

  it('disabling needs the password; the last factor gone, the recovery codes go too', async () => {
    const f = await enrolled();
    await expect(f.disable.execute({ ...f.actor, password: 'wrong' })).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(f.audit.types()).toContain('login.failed');
    const after = await f.disable.execute({ ...f.actor, password: PASSWORD });
    expect(after.mfaEnabled).toBe(false);
    expect(f.mfa.recoveryCodes).toEqual([]);
    expect(f.audit.types().at(-1)).toBe('mfa.disabled');
    expect(f.mailer.sent.at(-1)?.text).toContain('two-step sign-in is now off');
  });

  it('a flagged session sets up, confirms and removes nothing, even with the right code or password, until the flag clears', async () => {
    const f = fixture();
    const { secret } = await f.setup.execute(f.actor);
    const session = f.sessions.rows.get(f.actor.sessionId)!;
    session.flagMismatch(0.2, f.clock.now());
    const onHold = { code: 'FORBIDDEN', message: expect.stringContaining('sign in again') };
    await expect(f.setup.execute(f.actor)).rejects.toMatchObject(onHold);
    await expect(f.confirm.execute({ ...f.actor, code: `${secret}:${f.step()}` })).rejects.toMatchObject(onHold);
    expect(f.mfa.totp.get(f.user.id)?.confirmedAt).toBeNull();
    expect(f.audit.types()).toEqual([]);

    session.clearFlag({}, null, ['pwd', 'otp']);
    await f.confirm.execute({ ...f.actor, code: `${secret}:${f.step()}` });
    session.flagMismatch(0.2, f.clock.now());
    await expect(f.disable.execute({ ...f.actor, password: PASSWORD })).rejects.toMatchObject(onHold);
    // Refused before the password is looked at: no wrong-password count either.
    await expect(f.disable.execute({ ...f.actor, password: 'wrong' })).rejects.toMatchObject(onHold);
    expect(f.audit.types()).toEqual(['mfa.enabled']);
    expect(f.mfa.totp.get(f.user.id)?.confirmedAt).not.toBeNull();
  });
});

describe('VerifyMfaUseCase', () => {
  it('completes another first factor with its own amr and method: [fed, otp], audited as federated', async () => {
    const f = await enrolled();
    const token = await f.challenges.create({
      realm: f.realm,
      user: (await f.users.findById('default', f.user.id))!,
      client: f.client,
      purpose: 'login',
      amr: ['fed'],
      method: 'federated',
      details: { provider: 'corp' },
      now: f.clock.now(),
    });
    const result = await f.verify.execute({
      realm: f.realm,
      mfaToken: token,
      type: 'totp',
      code: `${f.secret}:${f.step()}`,
      client: f.client,
    });
    expect(f.sessions.rows.get(result.sessionId)?.amr).toEqual(['fed', 'otp']);
    expect(f.audit.entries.at(-1)).toMatchObject({
      type: 'login.succeeded',
      sessionId: result.sessionId,
      details: { method: 'federated', provider: 'corp', amr: ['fed', 'otp'] },
    });
  });

  it('opens a session with amr [pwd, otp] for a current code, once', async () => {
    const f = await enrolled();
    const token = await f.pendingLogin();
    const result = await f.verify.execute({
      realm: f.realm,
      mfaToken: token,
      type: 'totp',
      code: `${f.secret}:${f.step()}`,
      client: f.client,
    });
    expect(result.purpose).toBe('login');
    expect(f.sessions.rows.get(result.sessionId)?.amr).toEqual(['pwd', 'otp']);
    expect(f.audit.types().slice(-2)).toEqual(['mfa.succeeded', 'login.succeeded']);
    await expect(
      f.verify.execute({ realm: f.realm, mfaToken: token, type: 'totp', code: `${f.secret}:${f.step()}`, client: f.client }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    // The same step through a new login: a replay.
    await expect(
      f.verify.execute({
        realm: f.realm,
        mfaToken: await f.pendingLogin(),
        type: 'totp',
        code: `${f.secret}:${f.step()}`,
        client: f.client,
      }),
    ).rejects.toMatchObject({ code: 'INVALID_MFA_CODE' });
  });

  it('counts wrong codes on the token and kills it at the fifth', async () => {
    const f = await enrolled();
    const token = await f.pendingLogin();
    for (let i = 0; i < 5; i += 1) {
      await expect(
        f.verify.execute({ realm: f.realm, mfaToken: token, type: 'totp', code: 'nope', client: f.client }),
      ).rejects.toMatchObject({ code: 'INVALID_MFA_CODE' });
    }
    await expect(
      f.verify.execute({ realm: f.realm, mfaToken: token, type: 'totp', code: `${f.secret}:${f.step()}`, client: f.client }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    expect(f.audit.types().filter((t) => t === 'mfa.failed')).toHaveLength(5);
  });

  it('answers TOKEN_EXPIRED after five minutes', async () => {
    const f = await enrolled();
    const token = await f.pendingLogin();
    f.clock.advance(300);
    await expect(
      f.verify.execute({ realm: f.realm, mfaToken: token, type: 'totp', code: `${f.secret}:${f.step()}`, client: f.client }),
    ).rejects.toMatchObject({ code: 'TOKEN_EXPIRED' });
  });

  it('accepts a recovery code once, in any case and with spaces', async () => {
    const f = await enrolled();
    const code = f.recoveryCodes[3];
    const typed = code.toUpperCase().replace(/-/g, ' ');
    await f.verify.execute({ realm: f.realm, mfaToken: await f.pendingLogin(), type: 'recovery', code: typed, client: f.client });
    await expect(
      f.verify.execute({ realm: f.realm, mfaToken: await f.pendingLogin(), type: 'recovery', code, client: f.client }),
    ).rejects.toMatchObject({ code: 'INVALID_MFA_CODE' });
  });

  it('re-verification clears the flag of the same session, makes this device the reference and drops older refresh tokens', async () => {
    const f = await enrolled();
    const user = (await f.users.findById('default', f.user.id))!;
    const login = await f.verify.execute({
      realm: f.realm,
      mfaToken: await f.pendingLogin(),
      type: 'totp',
      code: `${f.secret}:${f.step()}`,
      client: f.client,
    });
    const session = f.sessions.rows.get(login.sessionId)!;
    session.flagMismatch(0.2, f.clock.now());
    const before = [...f.refreshTokens.rows.keys()];
    expect(before).toHaveLength(1);
    const elsewhere = { ...f.client, ip: '198.51.100.4', fingerprint: '{"canvas":"other"}' };
    const token = await f.challenges.create({
      realm: f.realm,
      user,
      client: elsewhere,
      purpose: 'reverify',
      sessionId: login.sessionId,
      now: f.clock.now(),
    });
    f.clock.advance(30);
    const result = await f.verify.execute({
      realm: f.realm,
      mfaToken: token,
      type: 'totp',
      code: `${f.secret}:${f.step()}`,
      client: elsewhere,
    });
    expect(result).toMatchObject({ purpose: 'reverify', sessionId: login.sessionId });
    const restored = f.sessions.rows.get(login.sessionId)!;
    expect(restored.status).toBe('active');
    expect(restored.snapshot().device.fingerprint).toBe('{"canvas":"other"}');
    const after = [...f.refreshTokens.rows.values()].filter((r) => r.sessionId === login.sessionId);
    expect(after).toHaveLength(1);
    expect(after[0].tokenHash).not.toBe(before[0]);
    expect(f.audit.types().at(-1)).toBe('mfa.succeeded');
    expect(f.audit.entries.at(-1)?.details).toMatchObject({ purpose: 'reverify' });
  });
});
