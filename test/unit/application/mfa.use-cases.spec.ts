import { MfaChallenges } from '../../../src/application/sign-in/mfa-challenges';
import { ConfirmTotpUseCase } from '../../../src/application/mfa/confirm-totp.use-case';
import { DisableTotpUseCase } from '../../../src/application/mfa/disable-totp.use-case';
import { SetupTotpUseCase } from '../../../src/application/mfa/setup-totp.use-case';
import { VerifyMfaUseCase } from '../../../src/application/mfa/verify-mfa.use-case';
import { Session } from '../../../src/domain/session/session';
import { aUser } from '../../builders/user.builder';
import { useCaseFixture } from './fixture';

const PASSWORD = 'correct horse battery staple';

/** The MFA use cases on the fakes, around one user whose MFA methods follow from their factors, as on the database. */
function fixture(user = aUser()) {
  const f = useCaseFixture({ users: [user], mfaFromFactors: true });
  // The caller's session, signed in just now (adding a factor needs a recent sign-in).
  const signedIn = Session.open({
    id: crypto.randomUUID(),
    realmId: f.realm.id,
    userId: user.id,
    device: { id: 'd1', name: 'Test browser', type: 'browser', fingerprint: null },
    referenceFingerprint: {},
    ip: f.client.ip,
    location: { country: null, city: null },
    userAgent: null,
    amr: ['pwd'],
    now: f.clock.now(),
    lifetime: { idleTimeoutSeconds: f.config.sessionIdleTimeoutSeconds, maxLifetimeSeconds: f.config.sessionMaxLifetimeSeconds },
  });
  f.sessions.rows.set(signedIn.id, signedIn);
  const actor = { realm: f.realm, userId: user.id, sessionId: signedIn.id, ip: f.client.ip };
  return {
    ...f,
    user,
    mfa: f.mfaCredentials,
    actor,
    verify: f.build(VerifyMfaUseCase),
    challenges: f.build(MfaChallenges),
    setup: f.build(SetupTotpUseCase),
    confirm: f.build(ConfirmTotpUseCase),
    disable: f.build(DisableTotpUseCase),
    step: () => Math.floor(f.clock.now().getTime() / 30_000),
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
