import { adminApi, ADMIN_ENV, createRealm, createUser, superAdmin } from '../support/admin-flows';
import { codeFor, consoleReturnTo, mailCount, pkcePair, requestCode, signInMails, verifyCode, wrongCode } from '../support/email-codes';
import { bearer, login, register, uniqueEmail } from '../support/flows';
import { auditEvents, code, decodeJwt, nextStep, userWithTotp, verify } from '../support/mfa';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(90_000);

const REFUSED = { error: { code: 'INVALID_CREDENTIALS', message: 'The code or link is invalid or has expired', status: 401 } };

function expectRefused(res: { status: number; body: unknown }) {
  expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: REFUSED });
}

describe('Email codes and sign-in links', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
  });
  afterAll(async () => {
    await t.close();
  });

  async function attempts(email: string): Promise<number[]> {
    const rows: { attempts: number }[] = await t.dataSource.query(
      `SELECT attempts FROM one_time_tokens WHERE kind = 'email_code' AND email = $1 ORDER BY created_at, token_hash`,
      [email],
    );
    return rows.map((r) => Number(r.attempts));
  }

  describe('POST /email-code', () => {
    it('answers 202 alike for a known and an unknown address, and emails an 8-digit code', async () => {
      const known = await register(t);
      const ghost = uniqueEmail('ghost');
      const a = await requestCode(t, { email: known.email });
      const b = await requestCode(t, { email: ghost });
      expect([a.status, a.body]).toEqual([202, { success: true }]);
      expect([b.status, b.body]).toEqual([a.status, a.body]);
      const [mail] = await mailCount(t, known.email, 1);
      expect(mail.code).toMatch(/^\d{8}$/);
      expect(mail.link).toBeNull();
      // Registration is open in this realm: the unknown address gets a code too (it will make an account).
      expect(await mailCount(t, ghost, 1)).toHaveLength(1);
    });

    it('stores the code only as a keyed hash', async () => {
      const user = await register(t);
      const mail = await codeFor(t, user.email);
      const rows: { token_hash: string; payload: Record<string, unknown> }[] = await t.dataSource.query(
        `SELECT token_hash, payload FROM one_time_tokens WHERE kind = 'email_code' AND email = $1`,
        [user.email],
      );
      expect(rows).toHaveLength(1);
      expect(JSON.stringify(rows)).not.toContain(mail.code);
      expect(rows[0].payload.codeHash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });

    it('refuses a returnTo that is not allowed, a returnTo without its challenge, and a malformed challenge, whatever the address', async () => {
      const { codeChallenge } = pkcePair();
      for (const returnTo of [
        'https://evil.test/account/x',
        'http://localhost:3000/elsewhere',
        `${consoleReturnTo(t)}#x`,
        'javascript:alert(1)',
      ]) {
        const res = await requestCode(t, { email: uniqueEmail(), returnTo, codeChallenge });
        expect([res.status, res.body.error?.details?.[0]?.field]).toEqual([400, 'returnTo']);
      }
      const alone = await requestCode(t, { email: uniqueEmail(), returnTo: consoleReturnTo(t) });
      expect([alone.status, alone.body.error.details[0].field]).toEqual([400, 'codeChallenge']);
      const malformed = await requestCode(t, { email: uniqueEmail(), returnTo: consoleReturnTo(t), codeChallenge: 'short' });
      expect([malformed.status, malformed.body.error.details[0].field]).toEqual([400, 'codeChallenge']);
      const notAnEmail = await requestCode(t, { email: 'not an address' });
      expect(notAnEmail.status).toBe(400);
    });

    it('emails nothing to an unknown address of a realm whose registration is closed, and answers alike', async () => {
      const root = await superAdmin(t);
      const realm = `closed-${Date.now().toString(36)}`;
      await createRealm(t, root.accessToken, realm);
      await adminApi(t, root.accessToken, realm)
        .patch('/realm')
        .send({ settings: { registration: 'closed' } });
      const member = await createUser(t, root.accessToken, realm, { emailVerified: true });
      const ghost = uniqueEmail('ghost');
      const a = await requestCode(t, { email: member.email }, realm);
      const b = await requestCode(t, { email: ghost }, realm);
      expect([b.status, b.body]).toEqual([a.status, a.body]);
      const [mail] = await mailCount(t, member.email, 1);
      expect(await signInMails(t, ghost)).toEqual([]);
      // The member signs in; the unknown address has nothing to sign in with.
      expect((await verifyCode(t, { email: member.email, code: mail.code }, realm)).status).toBe(200);
      expectRefused(await verifyCode(t, { email: ghost, code: '12345678' }, realm));
    });
  });

  describe('POST /email-code/verify with a code', () => {
    it('signs in with amr ["email"] and audits the method', async () => {
      const user = await register(t);
      const mail = await codeFor(t, user.email);
      const res = await verifyCode(t, { email: user.email.toUpperCase(), code: `${mail.code.slice(0, 4)} ${mail.code.slice(4)}` });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ user: { id: user.id, emailVerified: true, mfaEnabled: false }, requiresMfa: false });
      expect(decodeJwt(res.body.tokens.accessToken)).toMatchObject({ sub: user.id, amr: ['email'] });
      const succeeded = await auditEvents(t, user.id, 'login.succeeded');
      expect(succeeded.at(-1)!.details).toMatchObject({ method: 'email-code', amr: ['email'] });
      // Single use.
      expectRefused(await verifyCode(t, { email: user.email, code: mail.code }));
    });

    it('kills the code at the 5th wrong try, also when the tries arrive in parallel', async () => {
      const user = await register(t);
      const mail = await codeFor(t, user.email);
      const guesses = await Promise.all(
        Array.from({ length: 12 }, (_, i) => verifyCode(t, { email: user.email, code: wrongCode(mail.code, i + 1) })),
      );
      for (const res of guesses) expectRefused(res);
      expect(await attempts(user.email)).toEqual([5]);
      expectRefused(await verifyCode(t, { email: user.email, code: mail.code }));
      // Exactly 5 codes were compared; the other tries found the code out of tries or dead.
      const reasons = (await auditEvents(t, user.id, 'login.failed')).map((f) => f.details.reason as string);
      expect(reasons.filter((r) => r.startsWith('wrong_code')).sort()).toEqual([
        'wrong_code',
        'wrong_code',
        'wrong_code',
        'wrong_code',
        'wrong_code_last_try',
      ]);
      expect(reasons.filter((r) => !r.startsWith('wrong_code'))).toHaveLength(8);
    });

    it('still takes the right code after four wrong ones', async () => {
      const user = await register(t);
      const mail = await codeFor(t, user.email);
      for (let i = 1; i <= 4; i += 1) expectRefused(await verifyCode(t, { email: user.email, code: wrongCode(mail.code, i) }));
      expect((await verifyCode(t, { email: user.email, code: mail.code })).status).toBe(200);
    });

    it('voids the older code when a newer one is asked for', async () => {
      const user = await register(t);
      const older = await codeFor(t, user.email);
      const newer = await codeFor(t, user.email);
      expectRefused(await verifyCode(t, { email: user.email, code: older.code }));
      expect((await verifyCode(t, { email: user.email, code: newer.code })).status).toBe(200);
    });

    it('expires after 10 minutes', async () => {
      const user = await register(t);
      const mail = await codeFor(t, user.email);
      t.clock.advance(601);
      expectRefused(await verifyCode(t, { email: user.email, code: mail.code }));
    });

    it('gives users with MFA their second step, which completes amr ["email","otp"]', async () => {
      const user = await userWithTotp(t);
      await t.dataSource.query(`UPDATE users SET email_verified = true WHERE id = $1`, [user.id]);
      const mail = await codeFor(t, user.email);
      const first = await verifyCode(t, { email: user.email, code: mail.code });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ tokens: null, requiresMfa: true, mfaMethods: ['totp'], mfaToken: expect.any(String) });
      nextStep(t);
      const second = await verify(t, { mfaToken: first.body.mfaToken, type: 'totp', code: code(t, user.secret) });
      expect(second.status).toBe(200);
      expect(decodeJwt(second.body.tokens.accessToken).amr).toEqual(['email', 'otp']);
    });

    it('keeps realms apart', async () => {
      const root = await superAdmin(t);
      const realm = `codes-${Date.now().toString(36)}`;
      await createRealm(t, root.accessToken, realm);
      const user = await register(t);
      const mail = await codeFor(t, user.email);
      expectRefused(await verifyCode(t, { email: user.email, code: mail.code }, realm));
      expect((await verifyCode(t, { email: user.email, code: mail.code })).status).toBe(200);
    });

    it('answers account states as a login does', async () => {
      const root = await superAdmin(t);
      const member = await createUser(t, root.accessToken, 'default', { emailVerified: true });
      await adminApi(t, root.accessToken, 'default').post(`/users/${member.id}/suspend`).send({});
      const mail = await codeFor(t, member.email);
      const res = await verifyCode(t, { email: member.email, code: mail.code });
      expect([res.status, res.body.error.code]).toEqual([403, 'ACCOUNT_SUSPENDED']);
    });

    it('rejects a body that mixes a code and a link, or gives half of one', async () => {
      const { codeVerifier } = pkcePair();
      for (const body of [
        { email: 'a@example.com', code: '12345678', token: 'x'.repeat(43), codeVerifier },
        { email: 'a@example.com' },
        { token: 'x'.repeat(43) },
        { token: 'x'.repeat(43), codeVerifier: 'short' },
        {},
      ]) {
        expect((await verifyCode(t, body)).status).toBe(400);
      }
    });
  });

  describe('POST /email-code/verify with a link', () => {
    it('is not spent by opening the link; works once with the verifier of the browser that asked', async () => {
      const user = await register(t);
      const pkce = pkcePair();
      const mail = await codeFor(t, user.email, { link: pkce });
      expect(mail.link).toMatch(new RegExp(`^${consoleReturnTo(t)}\\?email_token=`));
      // A mail scanner fetches the link: nothing is spent.
      const scanned = await t.api().get(new URL(mail.link!).pathname + new URL(mail.link!).search);
      expect(scanned.status).toBeLessThan(500);
      const res = await verifyCode(t, { token: mail.token, codeVerifier: pkce.codeVerifier });
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.tokens.accessToken)).toMatchObject({ sub: user.id, amr: ['email'] });
      expectRefused(await verifyCode(t, { token: mail.token, codeVerifier: pkce.codeVerifier }));
      // The code was the same credential: spent with it.
      expectRefused(await verifyCode(t, { email: user.email, code: mail.code }));
    });

    it('dies at a wrong verifier, while the code still works', async () => {
      const user = await register(t);
      const pkce = pkcePair();
      const mail = await codeFor(t, user.email, { link: pkce });
      expectRefused(await verifyCode(t, { token: mail.token, codeVerifier: pkcePair().codeVerifier }));
      expectRefused(await verifyCode(t, { token: mail.token, codeVerifier: pkce.codeVerifier }));
      expect((await verifyCode(t, { email: user.email, code: mail.code })).status).toBe(200);
    });

    it('lets exactly one of parallel redemptions through', async () => {
      const user = await register(t);
      const pkce = pkcePair();
      const mail = await codeFor(t, user.email, { link: pkce });
      const results = await Promise.all(
        Array.from({ length: 5 }, () => verifyCode(t, { token: mail.token, codeVerifier: pkce.codeVerifier })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401, 401, 401]);
    });

    it('carries no link without a challenge, and a link works only in its own realm', async () => {
      const user = await register(t);
      const mail = await codeFor(t, user.email);
      expect(mail.link).toBeNull();
      const pkce = pkcePair();
      const withLink = await codeFor(t, user.email, { link: pkce });
      const root = await superAdmin(t);
      const realm = `links-${Date.now().toString(36)}`;
      await createRealm(t, root.accessToken, realm);
      expectRefused(await verifyCode(t, { token: withLink.token, codeVerifier: pkce.codeVerifier }, realm));
      expect((await verifyCode(t, { token: withLink.token, codeVerifier: pkce.codeVerifier })).status).toBe(200);
    });
  });

  describe('accounts the code proves', () => {
    it('makes a verified account without a password for a new address (open registration)', async () => {
      const email = uniqueEmail('fresh');
      const mail = await codeFor(t, email);
      const res = await verifyCode(t, { email, code: mail.code });
      expect(res.status).toBe(200);
      expect(res.body.user).toMatchObject({ email, emailVerified: true, mfaEnabled: false });
      const [row] = await t.dataSource.query(`SELECT password_hash, email_verified FROM users WHERE id = $1`, [res.body.user.id]);
      expect(row).toEqual({ password_hash: null, email_verified: true });
      const registered = await auditEvents(t, res.body.user.id, 'user.registered');
      expect(registered.map((e) => e.details)).toEqual([{ method: 'email-code' }]);
      const me = await t
        .api()
        .get('/api/v1/auth/me')
        .set(...bearer(res.body.tokens.accessToken));
      expect(me.body.user).toMatchObject({ email, emailVerified: true, hasPassword: false });
      // A password sign-in has nothing to match.
      expect((await login(t, email, 'any password at all')).status).toBe(401);
    });

    it('takes over an unverified account: the squatter’s password and sessions stop working, the address is verified', async () => {
      const victim = uniqueEmail('victim');
      const squatter = await register(t, victim);
      const squatterSession = await login(t, victim);
      expect(squatterSession.status).toBe(200);
      const mail = await codeFor(t, victim);
      const res = await verifyCode(t, { email: victim, code: mail.code });
      expect(res.status).toBe(200);
      expect(res.body.user).toMatchObject({ id: squatter.id, emailVerified: true });
      expect((await login(t, victim)).status).toBe(401);
      const refreshed = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: squatterSession.body.tokens.refreshToken });
      expect(refreshed.status).toBe(401);
      const verified = await auditEvents(t, squatter.id, 'email.verified');
      expect(verified.at(-1)!.details).toMatchObject({ method: 'email-code', takeover: true });
    });

    it('never signs in to an unverified administrator account', async () => {
      const root = await superAdmin(t);
      const admin = await createUser(t, root.accessToken, 'default', { roles: ['realm-admin'], emailVerified: false });
      const mail = await codeFor(t, admin.email);
      expectRefused(await verifyCode(t, { email: admin.email, code: mail.code }));
      expect((await login(t, admin.email)).status).toBe(200);
    });
  });
});
