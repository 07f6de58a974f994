import { HttpSignInHooks } from '../../src/adapters/hooks/http-sign-in-hooks';
import { adminApi, storedEvents } from '../support/admin-flows';
import { codeFor, verifyCode } from '../support/email-codes';
import { FederationHarness, providerAccount } from '../support/federation';
import { login, PASSWORD, register, signedInUser, uniqueEmail } from '../support/flows';
import { HookReply, HookServer } from '../support/hook-server';
import { code, decodeJwt, mfaToken, nextStep, userWithTotp, verify } from '../support/mfa';
import { ProviderAccount } from '../support/oidc-provider';
import { addPasskey, passkeySignIn } from '../support/passkeys';
import { TestApp } from '../support/test-app';

/**
 * Every way in asks the realm's hooks: a new account by email code or by an identity provider
 * asks `before-registration`; passkeys, email codes, identity providers and the second step ask
 * `before-sign-in` once per sign-in; every access token (after a second step too) asks
 * `token-claims`. A provider's callback carries a refusal as `error=hook_denied`.
 */
describe('hooks on every way in', () => {
  let h: FederationHarness;
  let t: TestApp;
  let server: HookServer;
  const accounts: Record<string, Required<Omit<ProviderAccount, 'name'>>> = {};

  beforeAll(async () => {
    for (const name of ['newbie', 'refused', 'known', 'failing']) accounts[name] = providerAccount(name);
    h = await FederationHarness.start({
      accounts,
      app: { env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } },
    });
    t = h.t;
    server = await HookServer.start();
  });
  afterAll(async () => {
    await server?.close();
    await h?.stop();
  });
  beforeEach(() => {
    server.calls.length = 0;
  });
  afterEach(async () => {
    for (const name of ['before-registration', 'before-sign-in', 'token-claims']) await admin().delete(`/hooks/${name}`);
  });

  const admin = () => adminApi(t, h.rootToken, 'default');

  /** Hooks in realm default, all answered by `reply`. */
  async function hooks(names: string[], reply: (type: string) => HookReply, settings: Record<string, unknown> = {}) {
    for (const name of names) {
      const res = await admin()
        .put(`/hooks/${name}`)
        .send({ url: server.url, ...settings });
      expect(res.status).toBe(200);
    }
    server.reply = (call) => reply(call.type);
  }

  const decide = (decision: 'allow' | 'deny', message?: string) => (type: string) =>
    type === 'token-claims' ? { body: { claims: { plan: 'gold' } } } : { body: { decision, ...(message ? { message } : {}) } };

  describe('email codes', () => {
    it('a new address asks before-registration (method email-code); refused, no account exists and the code still works once allowed', async () => {
      await hooks(['before-registration'], decide('deny', 'Sign-ups are paused'));
      const email = uniqueEmail('code-new');
      const mail = await codeFor(t, email);
      const refused = await verifyCode(t, { email, code: mail.code });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'HOOK_DENIED', message: 'Sign-ups are paused' });
      expect(await t.dataSource.query(`SELECT id FROM users WHERE email = $1`, [email])).toHaveLength(0);
      expect(server.ofType('before-registration')[0].payload.data).toMatchObject({ email, method: 'email-code' });

      server.reply = () => ({ body: { decision: 'allow' } });
      const allowed = await verifyCode(t, { email, code: mail.code });
      expect(allowed.status).toBe(200);
      expect(allowed.body.tokens.accessToken).toEqual(expect.any(String));
    });

    it('an existing account asks before-sign-in (method email-code) and its token gets the claims', async () => {
      const user = await register(t, uniqueEmail('code-known'));
      await hooks(['before-registration', 'before-sign-in', 'token-claims'], decide('allow'));
      const mail = await codeFor(t, user.email);
      const res = await verifyCode(t, { email: user.email, code: mail.code });
      expect(res.status).toBe(200);
      expect(server.calls.map((c) => c.type)).toEqual(['before-sign-in', 'token-claims']);
      expect(server.calls[0].payload.data).toMatchObject({ method: 'email-code', user: { id: user.id } });
      expect(decodeJwt(res.body.tokens.accessToken)).toMatchObject({ plan: 'gold', amr: ['email'] });

      server.reply = () => ({ body: { decision: 'deny', message: 'Not today' } });
      const next = await codeFor(t, user.email);
      const refused = await verifyCode(t, { email: user.email, code: next.code });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'HOOK_DENIED', message: 'Not today' });
    });
  });

  describe('passkeys', () => {
    it('a passkey sign-in asks before-sign-in (method passkey): refused → 403 and no session; allowed → the claims', async () => {
      const user = await signedInUser(t);
      const { authenticator } = await addPasskey(t, user.accessToken);
      await hooks(['before-sign-in', 'token-claims'], decide('deny', 'Passkeys are off for you'));
      const sessions = (await t.dataSource.query(`SELECT id FROM sessions WHERE user_id = $1`, [user.id])).length;
      const refused = await passkeySignIn(t, authenticator);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'HOOK_DENIED', message: 'Passkeys are off for you' });
      expect(await t.dataSource.query(`SELECT id FROM sessions WHERE user_id = $1`, [user.id])).toHaveLength(sessions);
      expect(server.ofType('before-sign-in')[0].payload.data).toMatchObject({ method: 'passkey', user: { id: user.id } });

      server.reply = (call) => decide('allow')(call.type);
      const allowed = await passkeySignIn(t, authenticator);
      expect(allowed.status).toBe(200);
      expect(decodeJwt(allowed.body.tokens.accessToken)).toMatchObject({ plan: 'gold' });
    });
  });

  describe('the second step', () => {
    it('asks before-sign-in once, at the password; the token after the second factor gets the claims', async () => {
      const user = await userWithTotp(t);
      await hooks(['before-sign-in', 'token-claims'], decide('allow'));
      const token = await mfaToken(t, user.email);
      expect(server.calls.map((c) => c.type)).toEqual(['before-sign-in']);
      const res = await verify(t, { mfaToken: token, type: 'totp', code: code(t, user.secret) });
      expect(res.status).toBe(200);
      expect(server.calls.map((c) => c.type)).toEqual(['before-sign-in', 'token-claims']);
      expect(decodeJwt(res.body.tokens.accessToken)).toMatchObject({ plan: 'gold', amr: expect.arrayContaining(['otp']) });
      expect(server.ofType('token-claims')[0].payload.data).toMatchObject({ amr: expect.arrayContaining(['pwd', 'otp']) });
      nextStep(t);
    });

    it('a refusal at the password asks for no second factor', async () => {
      const user = await userWithTotp(t);
      await hooks(['before-sign-in'], decide('deny', 'Locked by your administrator'));
      const res = await login(t, user.email, PASSWORD);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('HOOK_DENIED');
      expect(res.body.mfaToken).toBeUndefined();
    });
  });

  describe('identity providers', () => {
    it('a new user by the provider asks before-registration; refused → the callback redirects with error=hook_denied and the message, no account', async () => {
      await hooks(['before-registration'], decide('deny', 'Only employees may join'));
      const { location } = await h.throughProvider('refused');
      expect(location.searchParams.get('error')).toBe('hook_denied');
      expect(location.searchParams.get('error_description')).toBe('Only employees may join');
      expect(location.searchParams.get('code')).toBeNull();
      expect(await t.dataSource.query(`SELECT id FROM users WHERE email = $1`, [accounts.refused.email])).toHaveLength(0);
      expect(server.ofType('before-registration')[0].payload.data).toMatchObject({
        email: accounts.refused.email,
        firstName: 'Refused',
        lastName: 'Tester',
        method: 'federated',
        provider: 'corp',
      });
    });

    it('a failing before-registration under deny → error=hook_failed, no account', async () => {
      await hooks(['before-registration'], () => ({ status: 500 }));
      const { location } = await h.throughProvider('failing');
      expect(location.searchParams.get('error')).toBe('hook_failed');
      expect(await t.dataSource.query(`SELECT id FROM users WHERE email = $1`, [accounts.failing.email])).toHaveLength(0);
    });

    it('before-sign-in is asked once, at the callback: refused → error=hook_denied; allowed → the exchange signs in with the claims', async () => {
      await hooks(['before-registration', 'before-sign-in', 'token-claims'], decide('allow'));
      const first = await h.signIn('newbie');
      expect(first.status).toBe(200);
      expect(server.calls.map((c) => c.type)).toEqual(['before-registration', 'before-sign-in', 'token-claims']);
      expect(server.ofType('before-sign-in')[0].payload.data).toMatchObject({ method: 'federated', provider: 'corp' });
      expect(decodeJwt(first.body.tokens.accessToken)).toMatchObject({ plan: 'gold', amr: ['fed'] });

      server.reply = (call) =>
        call.type === 'before-sign-in' ? { body: { decision: 'deny', message: 'Come back tomorrow' } } : decide('allow')(call.type);
      const { location } = await h.throughProvider('newbie');
      expect(location.searchParams.get('error')).toBe('hook_denied');
      expect(location.searchParams.get('error_description')).toBe('Come back tomorrow');
      expect(location.searchParams.get('code')).toBeNull();
      await t.app.get(HttpSignInHooks).settled();
      expect((await storedEvents(t, 'default', { type: 'hook.denied' })).at(-1)?.details).toMatchObject({ name: 'before-sign-in' });
    });
  });
});
