import { adminApi, ADMIN_ENV, createRealm, superAdmin } from '../support/admin-flows';
import { bearer, login, PASSWORD, signedInUser } from '../support/flows';
import { addSoftKey, auditEvents, code, decodeJwt, midStep, nextStep, userWithTotp, verify } from '../support/mfa';
import { addPasskey, AUTH, passkeyOptions, passkeySignIn, passkeyVerify } from '../support/passkeys';
import { SoftAuthenticator } from '../support/soft-authenticator';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(60_000);

function expectRefused(res: { status: number; body: Record<string, unknown> }) {
  expect({ status: res.status, body: res.body }).toEqual({
    status: 401,
    body: { error: { code: 'INVALID_CREDENTIALS', message: 'The passkey could not be verified', status: 401 } },
  });
}

async function lastFailure(t: TestApp, userId: string) {
  const failures = await auditEvents(t, userId, 'login.failed');
  return failures[failures.length - 1]?.details;
}

describe('Passkeys: sign-in without a password', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { ...ADMIN_ENV, LOCKOUT_MAX_FAILURES: '3' } });
  });
  afterAll(async () => {
    await t.close();
  });

  async function userWithPasskey() {
    const user = await signedInUser(t);
    const { authenticator, options, body } = await addPasskey(t, user.accessToken);
    return { ...user, authenticator, registrationOptions: options, credentialId: body.credential.id as string };
  }

  describe('registration', () => {
    it('asks for a discoverable, user-verified credential and lists it as a passkey', async () => {
      const user = await userWithPasskey();
      expect(user.registrationOptions.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
      await addSoftKey(t, user.accessToken, 'Plain key');
      const status = await t
        .api()
        .get(`${AUTH}/mfa`)
        .set(...bearer(user.accessToken));
      expect(status.status).toBe(200);
      expect(status.body.webauthnCredentials.map((c: { name: string; passkey: boolean }) => [c.name, c.passkey])).toEqual([
        ['Passkey', true],
        ['Plain key', false],
      ]);
      expect(status.body.methods).toEqual(['webauthn']);
    });

    it('keeps resident keys merely preferred for a security key', async () => {
      const { accessToken } = await signedInUser(t);
      const options = await t
        .api()
        .post(`${AUTH}/mfa/webauthn/register/options`)
        .set(...bearer(accessToken))
        .send({});
      expect(options.body.authenticatorSelection).toMatchObject({ residentKey: 'preferred', userVerification: 'required' });
      const invalid = await t
        .api()
        .post(`${AUTH}/mfa/webauthn/register/options`)
        .set(...bearer(accessToken))
        .send({ passkey: 'yes' });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error.details).toEqual([expect.objectContaining({ field: 'passkey' })]);
    });
  });

  describe('POST /passkeys/options', () => {
    it('gives a fresh challenge of at least 128 bits with an empty allowCredentials and user verification required', async () => {
      const first = await passkeyOptions(t);
      const second = await passkeyOptions(t);
      expect(first.challengeId).not.toBe(second.challengeId);
      expect(first.options.challenge).not.toBe(second.options.challenge);
      expect(Buffer.from(first.options.challenge, 'base64url').length).toBeGreaterThanOrEqual(16);
      expect(first.options).toMatchObject({ rpId: 'localhost', userVerification: 'required', timeout: 300000 });
      expect(first.options.allowCredentials ?? []).toEqual([]);
      const extra = await t.api().post(`${AUTH}/passkeys/options`).send({ email: 'someone@example.com' });
      expect(extra.status).toBe(400);
    });
  });

  describe('POST /passkeys/verify', () => {
    it('signs in at once with amr ["hwk","mfa"], even when the user also has TOTP', async () => {
      const user = await userWithTotp(t);
      const { authenticator } = await addPasskey(t, user.accessToken);
      const res = await passkeySignIn(t, authenticator, {}, undefined);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ user: { id: user.id, email: user.email, mfaEnabled: true }, requiresMfa: false });
      expect(res.body.mfaToken).toBeUndefined();
      const claims = decodeJwt(res.body.tokens.accessToken);
      expect(claims).toMatchObject({ sub: user.id, amr: ['hwk', 'mfa'] });
      const me = await t
        .api()
        .get(`${AUTH}/me`)
        .set(...bearer(res.body.tokens.accessToken));
      expect(me.status).toBe(200);
      const succeeded = await auditEvents(t, user.id, 'login.succeeded');
      expect(succeeded[succeeded.length - 1].details).toMatchObject({ method: 'passkey', amr: ['hwk', 'mfa'] });
      // The password still asks for the second step.
      midStep(t);
      const password = await login(t, user.email);
      expect(password.body.requiresMfa).toBe(true);
      nextStep(t);
      const second = await verify(t, { mfaToken: password.body.mfaToken, type: 'totp', code: code(t, user.secret) });
      expect(decodeJwt(second.body.tokens.accessToken).amr).toEqual(['pwd', 'otp']);
    });

    it('lets the passkey also be the second step of a password sign-in', async () => {
      const user = await userWithPasskey();
      const password = await login(t, user.email);
      expect(password.body).toMatchObject({ requiresMfa: true, mfaMethods: ['webauthn'] });
      const options = await t.api().post(`${AUTH}/mfa/webauthn/options`).send({ mfaToken: password.body.mfaToken });
      const res = await verify(t, {
        mfaToken: password.body.mfaToken,
        type: 'webauthn',
        code: JSON.stringify(user.authenticator.assertion(options.body)),
      });
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.tokens.accessToken).amr).toEqual(['pwd', 'hwk']);
    });

    it('refuses a security key that was not registered as a passkey', async () => {
      const { accessToken, id } = await signedInUser(t);
      const { authenticator } = await addSoftKey(t, accessToken, 'Plain key');
      authenticator.resident = true;
      expectRefused(await passkeySignIn(t, authenticator));
      expect(await lastFailure(t, id)).toMatchObject({ method: 'passkey', reason: 'not_a_passkey' });
    });

    it('uses the challenge up with any answer: a second answer to it is refused', async () => {
      const user = await userWithPasskey();
      const { challengeId, options } = await passkeyOptions(t);
      const first = await passkeyVerify(t, { challengeId, response: user.authenticator.assertion(options) });
      expect(first.status).toBe(200);
      expectRefused(await passkeyVerify(t, { challengeId, response: user.authenticator.assertion(options) }));
      // A failed answer uses it up too.
      const other = await passkeyOptions(t);
      expectRefused(
        await passkeyVerify(t, {
          challengeId: other.challengeId,
          response: user.authenticator.assertion(other.options, { userVerified: false }),
        }),
      );
      expectRefused(await passkeyVerify(t, { challengeId: other.challengeId, response: user.authenticator.assertion(other.options) }));
      // Of parallel answers to one challenge exactly one signs in.
      const raced = await passkeyOptions(t);
      const clone = user.authenticator.clone();
      const results = await Promise.all([
        passkeyVerify(t, { challengeId: raced.challengeId, response: user.authenticator.assertion(raced.options) }),
        passkeyVerify(t, {
          challengeId: raced.challengeId,
          response: clone.assertion(raced.options, { counter: user.authenticator.counter + 5 }),
        }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
    });

    it('refuses an answer made for another challenge than the one named', async () => {
      const user = await userWithPasskey();
      const named = await passkeyOptions(t);
      const other = await passkeyOptions(t);
      expectRefused(await passkeyVerify(t, { challengeId: named.challengeId, response: user.authenticator.assertion(other.options) }));
      expectRefused(await passkeyVerify(t, { challengeId: 'not-a-challenge', response: user.authenticator.assertion(other.options) }));
    });

    it('refuses an answer without user verification', async () => {
      const user = await userWithPasskey();
      expectRefused(await passkeySignIn(t, user.authenticator, { userVerified: false }));
      expect(await lastFailure(t, user.id)).toMatchObject({ method: 'passkey', reason: 'user_verification' });
    });

    it('refuses a signature counter that went back and disables the passkey until an administrator resets MFA, and tells the owner', async () => {
      const user = await userWithPasskey();
      const clone = user.authenticator.clone();
      expect((await passkeySignIn(t, user.authenticator)).status).toBe(200);
      expect((await passkeySignIn(t, user.authenticator)).status).toBe(200);
      expectRefused(await passkeySignIn(t, clone));
      expect(await lastFailure(t, user.id)).toMatchObject({ reason: 'counter_regression', storedCounter: 2, receivedCounter: 1 });
      expectRefused(await passkeySignIn(t, clone, { counter: 1000 }));
      expectRefused(await passkeySignIn(t, user.authenticator));
      expect(await lastFailure(t, user.id)).toMatchObject({ reason: 'credential_disabled' });
      const notices: { text_body: string }[] = await t.dataSource.query(
        `SELECT text_body FROM email_outbox WHERE recipient = $1 AND text_body LIKE '%counter went backwards%'`,
        [user.email],
      );
      expect(notices).toHaveLength(1);
      // An administrator's MFA reset removes it; the genuine passkey registered again signs in.
      const root = await superAdmin(t);
      expect((await adminApi(t, root.accessToken, 'default').post(`/users/${user.id}/mfa/reset`).send({})).status).toBe(200);
      const { accessToken } = (await login(t, user.email)).body.tokens as { accessToken: string };
      await addPasskey(t, accessToken, user.authenticator);
      expect((await passkeySignIn(t, user.authenticator)).status).toBe(200);
    });

    it('refuses another origin, another relying party, a tampered signature and an expired challenge', async () => {
      const user = await userWithPasskey();
      expectRefused(await passkeySignIn(t, user.authenticator, { origin: 'http://localhost:4000' }));
      expectRefused(await passkeySignIn(t, user.authenticator, { rpId: 'evil.test' }));
      expectRefused(await passkeySignIn(t, user.authenticator, { type: 'webauthn.create' }));
      const { challengeId, options } = await passkeyOptions(t);
      const tampered = user.authenticator.assertion(options);
      tampered.response.signature = Buffer.from('not a signature').toString('base64url');
      expectRefused(await passkeyVerify(t, { challengeId, response: tampered }));
      const late = await passkeyOptions(t);
      t.clock.advance(301);
      expectRefused(await passkeyVerify(t, { challengeId: late.challengeId, response: user.authenticator.assertion(late.options) }));
      expect((await passkeySignIn(t, user.authenticator)).status).toBe(200);
    });

    it('refuses a user handle that is not the credential owner’s, and an unknown credential', async () => {
      const user = await userWithPasskey();
      const other = await userWithPasskey();
      expectRefused(await passkeySignIn(t, user.authenticator, { userHandle: Buffer.from(other.id).toString('base64url') }));
      expectRefused(await passkeySignIn(t, new SoftAuthenticator()));
    });

    it('answers account states as a login does, only after the passkey is proven', async () => {
      const user = await userWithPasskey();
      const root = await superAdmin(t);
      expect((await adminApi(t, root.accessToken, 'default').post(`/users/${user.id}/suspend`).send({})).status).toBe(200);
      const suspended = await passkeySignIn(t, user.authenticator);
      expect(suspended.status).toBe(403);
      expect(suspended.body.error.code).toBe('ACCOUNT_SUSPENDED');
      expectRefused(await passkeySignIn(t, user.authenticator, { userVerified: false }));
      await adminApi(t, root.accessToken, 'default').post(`/users/${user.id}/activate`).send({});

      for (let i = 0; i < 3; i += 1) await login(t, user.email, 'wrong password entirely');
      const locked = await passkeySignIn(t, user.authenticator);
      expect(locked.status).toBe(423);
      expect(locked.body.error.code).toBe('ACCOUNT_LOCKED');
      t.clock.advance(901);
      expect((await passkeySignIn(t, user.authenticator)).status).toBe(200);
    });

    it('keeps realms apart: a passkey of one realm does not sign in to another', async () => {
      const root = await superAdmin(t);
      const realm = `pk-${Date.now().toString(36)}`;
      await createRealm(t, root.accessToken, realm);
      const user = await userWithPasskey();
      expectRefused(await passkeySignIn(t, user.authenticator, {}, realm));
      expect((await passkeySignIn(t, user.authenticator)).status).toBe(200);
    });

    it('counts as a second factor where administration requires one', async () => {
      const admins = await createTestApp({ env: { ...ADMIN_ENV, ADMIN_REQUIRE_MFA: 'true' } });
      try {
        const root = await login(admins, 'root@example.com', 'root password for the tests', {}, 'master');
        const { authenticator } = await addPasskey(admins, root.body.tokens.accessToken, new SoftAuthenticator(), 'master');
        const denied = await adminApi(admins, root.body.tokens.accessToken, 'master').get('/users');
        expect(denied.status).toBe(403);
        const signedIn = await passkeySignIn(admins, authenticator, {}, 'master');
        expect(signedIn.status).toBe(200);
        const allowed = await adminApi(admins, signedIn.body.tokens.accessToken, 'master').get('/users');
        expect(allowed.status).toBe(200);
      } finally {
        await admins.close();
      }
    });

    it('rejects malformed bodies before anything is spent', async () => {
      const { challengeId } = await passkeyOptions(t);
      const res = await passkeyVerify(t, { challengeId, response: 'text' });
      expect(res.status).toBe(400);
      const extra = await passkeyVerify(t, { challengeId, response: {}, password: PASSWORD });
      expect(extra.status).toBe(400);
    });
  });
});
