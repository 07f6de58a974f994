import { adminApi, ADMIN_ENV, superAdmin } from '../support/admin-flows';
import { codeFor, verifyCode } from '../support/email-codes';
import { bearer, login, PASSWORD, signedInUser, uniqueEmail } from '../support/flows';
import { auditEvents, code, midStep } from '../support/mfa';
import { addPasskey, AUTH, passkeySignIn } from '../support/passkeys';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(90_000);

describe('Accounts without a password', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
  });
  afterAll(async () => {
    await t.close();
  });

  /** A new account made by an email code: verified, no password, signed in just now. */
  async function passwordless() {
    const email = uniqueEmail('nopass');
    const mail = await codeFor(t, email);
    const res = await verifyCode(t, { email, code: mail.code });
    if (res.status !== 200) throw new Error(`email-code sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
    return {
      email,
      id: res.body.user.id as string,
      accessToken: res.body.tokens.accessToken as string,
      refreshToken: res.body.tokens.refreshToken as string,
    };
  }

  const api = (token: string) => ({
    post: (path: string, body: Record<string, unknown> = {}) =>
      t
        .api()
        .post(`${AUTH}${path}`)
        .set(...bearer(token))
        .send(body),
    delete: (path: string, body: Record<string, unknown> = {}) =>
      t
        .api()
        .delete(`${AUTH}${path}`)
        .set(...bearer(token))
        .send(body),
    get: (path: string) =>
      t
        .api()
        .get(`${AUTH}${path}`)
        .set(...bearer(token)),
  });

  describe('a first password', () => {
    it('is set without a current one, and then signs in', async () => {
      const user = await passwordless();
      expect((await api(user.accessToken).get('/me')).body.user.hasPassword).toBe(false);
      const res = await api(user.accessToken).post('/password/change', { newPassword: PASSWORD });
      expect([res.status, res.body]).toEqual([200, { success: true }]);
      expect((await api(user.accessToken).get('/me')).body.user.hasPassword).toBe(true);
      expect((await login(t, user.email)).status).toBe(200);
      const changed = await auditEvents(t, user.id, 'password.changed');
      expect(changed.at(-1)!.details).toMatchObject({ firstPassword: true });
    });

    it('follows the password policy, and refuses a currentPassword for an account without one', async () => {
      const user = await passwordless();
      const weak = await api(user.accessToken).post('/password/change', { newPassword: 'password1234' });
      expect([weak.status, weak.body.error.details[0].field]).toEqual([400, 'newPassword']);
      const withCurrent = await api(user.accessToken).post('/password/change', { currentPassword: 'x', newPassword: PASSWORD });
      expect([withCurrent.status, withCurrent.body.error.details[0].field]).toEqual([400, 'currentPassword']);
    });

    it('needs a recent sign-in (it adds a way in)', async () => {
      const user = await passwordless();
      t.clock.advance(16 * 60);
      // Refreshing keeps the session alive, but it is not a new sign-in.
      const refreshed = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken });
      expect(refreshed.status).toBe(200);
      const res = await api(refreshed.body.tokens.accessToken).post('/password/change', { newPassword: PASSWORD });
      expect([res.status, res.body.error.code]).toEqual([403, 'FORBIDDEN']);
    });

    it('is no shortcut for an account that has a password: omitting the current one is 400', async () => {
      const user = await signedInUser(t);
      const res = await api(user.accessToken).post('/password/change', { newPassword: 'a brand new password' });
      expect([res.status, res.body.error.code, res.body.error.details[0].field]).toEqual([400, 'VALIDATION_FAILED', 'currentPassword']);
      expect((await login(t, user.email)).status).toBe(200);
    });
  });

  describe('confirming a removal', () => {
    it('takes a sign-in within the last 10 minutes instead of a password', async () => {
      const user = await passwordless();
      const setup = await api(user.accessToken).post('/mfa/totp/setup');
      midStep(t);
      const confirm = await api(user.accessToken).post('/mfa/totp/confirm', { code: code(t, setup.body.secret) });
      expect(confirm.status).toBe(200);
      const codes = await api(user.accessToken).post('/mfa/recovery-codes', {});
      expect([codes.status, codes.body.recoveryCodes.length]).toEqual([200, 10]);
      const withPassword = await api(user.accessToken).delete('/mfa/totp', { password: 'anything' });
      expect([withPassword.status, withPassword.body.error.details[0].field]).toEqual([400, 'password']);
      t.clock.advance(8 * 60);
      expect((await api(user.accessToken).delete('/mfa/totp', {})).status).toBe(200);
    });

    it('refuses a session that signed in more than 10 minutes ago', async () => {
      const user = await passwordless();
      const { body } = await addPasskey(t, user.accessToken);
      await addPasskey(t, user.accessToken);
      t.clock.advance(601);
      const res = await api(user.accessToken).delete(`/mfa/webauthn/${body.credential.id}`, {});
      expect([res.status, res.body.error.code]).toEqual([403, 'FORBIDDEN']);
      expect(res.body.error.message).toMatch(/sign in again/);
      const codes = await api(user.accessToken).post('/mfa/recovery-codes', {});
      expect(codes.status).toBe(403);
    });

    it('still asks an account with a password for it', async () => {
      const user = await signedInUser(t);
      const { body } = await addPasskey(t, user.accessToken);
      const res = await api(user.accessToken).delete(`/mfa/webauthn/${body.credential.id}`, {});
      expect([res.status, res.body.error.details[0].field]).toEqual([400, 'password']);
      expect((await api(user.accessToken).delete(`/mfa/webauthn/${body.credential.id}`, { password: PASSWORD })).status).toBe(200);
    });
  });

  describe('the last way in', () => {
    it('refuses to remove the last passkey of an account without a password or identity, also when two removals race', async () => {
      const user = await passwordless();
      const first = await addPasskey(t, user.accessToken);
      const second = await addPasskey(t, user.accessToken);
      const raced = await Promise.all([
        api(user.accessToken).delete(`/mfa/webauthn/${first.body.credential.id}`),
        api(user.accessToken).delete(`/mfa/webauthn/${second.body.credential.id}`),
      ]);
      expect(raced.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(raced.find((r) => r.status === 409)!.body.error.code).toBe('INVALID_USER_STATE');
      const status = await api(user.accessToken).get('/mfa');
      expect(status.body.webauthnCredentials).toHaveLength(1);
      // With a password set, the passkey may go.
      expect((await api(user.accessToken).post('/password/change', { newPassword: PASSWORD })).status).toBe(200);
      const remaining = status.body.webauthnCredentials[0].id;
      const removed = await api(user.accessToken).delete(`/mfa/webauthn/${remaining}`, { password: PASSWORD });
      expect(removed.status).toBe(200);
    });

    it('lets the owner remove a passkey disabled as a clone, even the only one: it is no way in any more', async () => {
      const user = await passwordless();
      const { authenticator, body } = await addPasskey(t, user.accessToken);
      const clone = authenticator.clone();
      expect((await passkeySignIn(t, authenticator)).status).toBe(200);
      expect((await passkeySignIn(t, authenticator)).status).toBe(200);
      expect((await passkeySignIn(t, clone)).status).toBe(401); // its counter went back: disabled
      const removed = await api(user.accessToken).delete(`/mfa/webauthn/${body.credential.id}`);
      expect(removed.status).toBe(200);
      expect((await api(user.accessToken).get('/mfa')).body.webauthnCredentials).toEqual([]);
    });

    it('lets a password-less account sign in with its passkey alone', async () => {
      const user = await passwordless();
      const { authenticator } = await addPasskey(t, user.accessToken);
      const res = await passkeySignIn(t, authenticator);
      expect(res.status).toBe(200);
      expect(res.body.user.id).toBe(user.id);
    });
  });

  it('shows hasPassword in the admin views', async () => {
    const user = await passwordless();
    const root = await superAdmin(t);
    const view = await adminApi(t, root.accessToken, 'default').get(`/users/${user.id}`);
    expect(view.body.user).toMatchObject({ id: user.id, hasPassword: false, emailVerified: true });
    const list = await adminApi(t, root.accessToken, 'default').get(`/users?search=${encodeURIComponent(user.email)}`);
    expect(list.body.users.map((u: { id: string; hasPassword: boolean }) => [u.id, u.hasPassword])).toEqual([[user.id, false]]);
  });
});
