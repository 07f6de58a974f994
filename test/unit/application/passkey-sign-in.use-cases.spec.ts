import { PasskeySignInUseCase, StartPasskeySignInUseCase } from '../../../src/application/auth/passkey-sign-in.use-case';
import { WebauthnCredential } from '../../../src/application/ports/mfa-credential.repository';
import { User, UserState } from '../../../src/domain/user/user';
import { aUser } from '../../builders/user.builder';
import { aPasskey } from '../../builders/webauthn-credential.builder';
import { ScriptedAssertion } from '../../fakes/scripted-webauthn-relying-party';
import { useCaseFixture } from './fixture';

async function passkeys(userState: Partial<UserState> = {}, credential: Partial<WebauthnCredential> = {}) {
  const user: User = aUser({ email: 'ada@example.com', emailVerified: true, ...userState });
  const f = useCaseFixture({ users: [user], mfaFromFactors: true });
  const key = aPasskey(user.id, f.clock.now(), { counter: 10, ...credential });
  await f.mfaCredentials.insertWebauthn(key);
  const start = f.build(StartPasskeySignInUseCase);
  const signIn = f.build(PasskeySignInUseCase);
  /** A challenge, and the authenticator's answer to it (`answer` changes it). */
  async function answer(overrides: Partial<ScriptedAssertion> = {}) {
    const { challengeId, options } = await start.execute({ realm: f.realm });
    const response: ScriptedAssertion = {
      credentialId: key.id,
      challenge: String(options.challenge),
      userHandle: user.id,
      counter: 11,
      ...overrides,
    };
    return { challengeId, response };
  }
  const attempt = async (overrides: Partial<ScriptedAssertion> = {}) =>
    signIn.execute({ realm: f.realm, ...(await answer(overrides)), client: f.client });
  const refusals = () => f.audit.entries.filter((e) => e.type === 'login.failed').map((e) => e.details?.reason);
  return { ...f, user, key, start, signIn, answer, attempt, refusals };
}

describe('StartPasskeySignInUseCase', () => {
  it('asks for a discoverable credential of the realm, its challenge kept server-side for 5 minutes', async () => {
    const f = await passkeys();
    const { challengeId, options } = await f.start.execute({ realm: f.realm });
    expect(options).toMatchObject({ allowCredentials: [], rpId: f.realm.policy.relyingParty.rpId, userVerification: 'required' });
    const stored = await f.oneTimeTokens.find(f.secureTokens.hash(challengeId), 'passkey_challenge');
    expect(stored).toMatchObject({ userId: null, realmId: 'default', payload: { challenge: options.challenge } });
    expect(stored!.expiresAt.getTime() - f.clock.now().getTime()).toBe(300_000);
  });
});

describe('PasskeySignInUseCase', () => {
  it('signs in with a passkey alone, amr hwk and mfa, recording the new counter', async () => {
    const f = await passkeys({ mfaMethods: [] });
    const outcome = await f.attempt();
    expect(outcome).toMatchObject({ kind: 'authenticated', user: { id: f.user.id } });
    if (outcome.kind !== 'authenticated') return;
    expect((await f.sessions.findById('default', outcome.sessionId))?.amr).toEqual(['hwk', 'mfa']);
    const used = await f.mfaCredentials.findWebauthn(f.key.id);
    expect([used?.counter, used?.lastUsedAt]).toEqual([11, f.clock.now()]);
  });

  it('uses the challenge up with any answer, so an answer is never accepted twice', async () => {
    const f = await passkeys();
    const { challengeId, response } = await f.answer();
    await f.signIn.execute({ realm: f.realm, challengeId, response, client: f.client });
    await expect(f.signIn.execute({ realm: f.realm, challengeId, response, client: f.client })).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
    await expect(f.signIn.execute({ realm: f.realm, challengeId: 'unknown', response, client: f.client })).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
    const late = await f.answer();
    f.clock.advance(301);
    await expect(f.signIn.execute({ realm: f.realm, ...late, client: f.client })).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(f.refusals()).toEqual(['challenge', 'challenge', 'challenge']);
  });

  it('refuses an unknown credential, a security key that is no passkey, a foreign user handle and a failed verification', async () => {
    const f = await passkeys();
    await expect(f.attempt({ credentialId: 'nope' })).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    await expect(f.attempt({ userHandle: crypto.randomUUID() })).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    await expect(f.attempt({ userHandle: null })).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    await expect(f.attempt({ signedFor: 'evil.example.net' })).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    await expect(f.attempt({ forged: true })).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    const g = await passkeys({}, { passkey: false });
    await expect(g.attempt()).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(f.refusals()).toEqual(['unknown_credential', 'user_handle', 'user_handle', 'rp_id', 'signature']);
    expect(g.refusals()).toEqual(['not_a_passkey']);
    expect(
      await f.sessions.list({ realmId: 'default', page: 1, limit: 5, now: f.clock.now(), lifetime: f.realm.policy.sessionLifetime }),
    ).toMatchObject({
      total: 0,
    });
  });

  it('disables a passkey whose counter went back, tells its owner once, and refuses it from then on', async () => {
    const f = await passkeys();
    await expect(f.attempt({ counter: 5 })).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    const disabled = await f.mfaCredentials.findWebauthn(f.key.id);
    expect(disabled?.disabledReason).toBe('counter_regression');
    expect(f.mailer.sent.filter((m) => m.to === 'ada@example.com')).toHaveLength(1);
    expect(f.lastMail().text).toContain('disabled');
    await expect(f.attempt({ counter: 12 })).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(f.refusals()).toEqual(['counter_regression', 'credential_disabled']);
    expect(f.mailer.sent).toHaveLength(1);
  });

  it('refuses a suspended account after the passkey verified', async () => {
    const f = await passkeys({ status: 'suspended' });
    await expect(f.attempt()).rejects.toMatchObject({ code: 'ACCOUNT_SUSPENDED' });
    expect(f.refusals()).toEqual(['suspended']);
  });

  it("refuses a credential of another realm's user", async () => {
    const f = await passkeys({ realmId: 'master' });
    await expect(f.attempt()).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(f.refusals()).toEqual(['unknown_credential']);
  });
});
