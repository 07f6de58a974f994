import { HttpSignInHooks } from '../../src/adapters/hooks/http-sign-in-hooks';
import { ADMIN_ENV, adminApi, createRealm, createUser, storedEvents, superAdmin } from '../support/admin-flows';
import { login, PASSWORD, uniqueEmail } from '../support/flows';
import { HookServer } from '../support/hook-server';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Hooks end to end: a real endpoint on loopback (verifying each call with the `standardwebhooks`
 * library) allows, refuses or fails, and the sign-up, the sign-in and the tokens follow.
 */

const ENV = { ...ADMIN_ENV, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
let realmCounter = 0;

function claimsOf(accessToken: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString('utf8'));
}

describe('hooks', () => {
  let t: TestApp;
  let root: string;
  let server: HookServer;

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    root = (await superAdmin(t)).accessToken;
    server = await HookServer.start();
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });
  beforeEach(() => {
    server.calls.length = 0;
    server.reply = () => ({ body: { decision: 'allow' } });
  });

  async function newRealm(): Promise<string> {
    realmCounter += 1;
    const realm = `hooks-${Date.now().toString(36)}-${realmCounter}`;
    await createRealm(t, root, realm);
    return realm;
  }

  async function putHook(realm: string, name: string, body: Record<string, unknown> = {}) {
    const res = await adminApi(t, root, realm)
      .put(`/hooks/${name}`)
      .send({ url: server.url, ...body });
    expect(res.status).toBe(200);
    if (res.body.secret) server.secret = res.body.secret;
    return res;
  }

  const registerIn = (realm: string, email = uniqueEmail('hook')) =>
    t.api().post('/api/v1/auth/register').set('X-Realm-Id', realm).send({ email, password: PASSWORD, name: 'Ada Lovelace' });

  const usersWithEmail = async (realm: string, email: string) =>
    (await t.dataSource.query(`SELECT id FROM users WHERE realm_id = $1 AND email = $2`, [realm, email])).length;

  /** The audit events of refusals and failures are written beside the request: wait for them. */
  const settled = () => t.app.get(HttpSignInHooks).settled();

  describe('the admin API', () => {
    it('creates a hook with its secret once, replaces it, rotates the secret, lists without secrets and deletes it, audited', async () => {
      const realm = await newRealm();
      const api = adminApi(t, root, realm);
      expect((await api.get('/hooks')).body).toEqual({ hooks: [] });

      const created = await api.put('/hooks/before-sign-in').send({ url: server.url });
      expect(created.status).toBe(200);
      expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(created.body.hook).toEqual({
        name: 'before-sign-in',
        url: server.url,
        enabled: true,
        timeoutMs: 2000,
        failure: 'deny',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const claims = await api.put('/hooks/token-claims').send({ url: server.url, timeoutMs: 100 });
      expect(claims.body.hook).toMatchObject({ failure: 'allow', timeoutMs: 100 });

      const replaced = await api.put('/hooks/before-sign-in').send({ url: server.url, enabled: false, timeoutMs: 5000, failure: 'allow' });
      expect(replaced.status).toBe(200);
      expect(replaced.body.secret).toBeUndefined();
      expect(replaced.body.hook).toMatchObject({ enabled: false, timeoutMs: 5000, failure: 'allow' });

      const rotated = await api.post('/hooks/before-sign-in/rotate-secret').send({});
      expect(rotated.status).toBe(200);
      expect(rotated.body.secret).toMatch(/^whsec_/);
      expect(rotated.body.secret).not.toBe(created.body.secret);

      const listed = await api.get('/hooks');
      expect(listed.body.hooks.map((h: { name: string }) => h.name)).toEqual(['before-sign-in', 'token-claims']);
      expect(JSON.stringify(listed.body)).not.toContain('whsec_');
      const stored: { secret: string }[] = await t.dataSource.query(`SELECT secret FROM hooks WHERE realm_id = $1`, [realm]);
      expect(stored.every((row) => !row.secret.includes(rotated.body.secret.slice(6)))).toBe(true);

      expect((await api.delete('/hooks/before-sign-in')).body).toEqual({ success: true });
      expect((await api.delete('/hooks/before-sign-in')).body.error.code).toBe('NOT_FOUND');
      const types = (await storedEvents(t, realm)).map((e) => e.type).filter((type) => type.startsWith('hook.'));
      expect(types).toEqual(['hook.updated', 'hook.updated', 'hook.updated', 'hook.secret_rotated', 'hook.deleted']);
    });

    it('refuses unknown names (404), timeouts outside 100–5000, unknown policies and non-https URLs', async () => {
      const realm = await newRealm();
      const api = adminApi(t, root, realm);
      const unknown = await api.put('/hooks/after-sign-in').send({ url: server.url });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('NOT_FOUND');
      expect((await api.post('/hooks/after-sign-in/rotate-secret').send({})).status).toBe(404);
      expect((await api.delete('/hooks/after-sign-in')).status).toBe(404);
      for (const body of [
        { timeoutMs: 99 },
        { timeoutMs: 5001 },
        { timeoutMs: 1.5 },
        { failure: 'maybe' },
        { url: 'ftp://example.com/' },
      ]) {
        const res = await api.put('/hooks/token-claims').send({ url: server.url, ...body });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('VALIDATION_FAILED');
      }
    });

    it('in master, hooks are the super-admins’ alone', async () => {
      const admin = await createUser(t, root, 'master', { roles: ['realm-admin'] });
      const res = await adminApi(t, admin.accessToken, 'master').put('/hooks/before-sign-in').send({ url: server.url });
      expect(res.status).toBe(403);
      expect((await adminApi(t, admin.accessToken, 'master').get('/hooks')).status).toBe(403);
    });
  });

  describe('before-registration', () => {
    it('allow: the account is created; the call is signed and carries the sign-up, never the password', async () => {
      const realm = await newRealm();
      await putHook(realm, 'before-registration');
      const email = uniqueEmail('allowed');
      const res = await registerIn(realm, email);
      expect(res.status).toBe(201);
      const [call] = server.ofType('before-registration');
      expect(call.verified).toBe(true);
      expect(call.headers['content-type']).toBe('application/json');
      expect(call.payload).toEqual({
        type: 'before-registration',
        timestamp: expect.any(String),
        realmId: realm,
        data: { email, firstName: 'Ada', lastName: 'Lovelace', method: 'password', ip: expect.any(String) },
      });
      expect(call.body).not.toContain(PASSWORD);
    });

    it('deny: 403 HOOK_DENIED with the hook’s message (cut to 200 characters); no account, no email', async () => {
      const realm = await newRealm();
      await putHook(realm, 'before-registration');
      server.reply = () => ({ body: { decision: 'deny', message: `Invitation only. ${'x'.repeat(300)}` } });
      const email = uniqueEmail('denied');
      const res = await registerIn(realm, email);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('HOOK_DENIED');
      expect(res.body.error.message).toMatch(/^Invitation only\. x+$/);
      expect([...res.body.error.message]).toHaveLength(200);
      expect(await usersWithEmail(realm, email)).toBe(0);
      expect(await t.dataSource.query(`SELECT 1 FROM email_outbox WHERE recipient = $1`, [email])).toHaveLength(0);
      await settled();
      expect((await storedEvents(t, realm, { type: 'hook.denied' }))[0].details).toMatchObject({ name: 'before-registration' });
    });

    const failures: [string, () => { status?: number; body?: unknown; delayMs?: number; headers?: Record<string, string> }][] = [
      ['a 500', () => ({ status: 500, body: { decision: 'allow' } })],
      ['a redirect', () => ({ status: 307, headers: { location: 'http://127.0.0.1:1/' }, body: '' })],
      ['an answer that is not JSON', () => ({ body: 'allow' })],
      ['an answer without a decision', () => ({ body: { decision: 'perhaps' } })],
      ['no answer in time', () => ({ delayMs: 1500, body: { decision: 'allow' } })],
    ];
    it.each(failures)('fails on %s: 503 HOOK_FAILED and no account under deny; the account under allow', async (_what, reply) => {
      const realm = await newRealm();
      await putHook(realm, 'before-registration', { timeoutMs: 300 });
      server.reply = reply;
      const email = uniqueEmail('failing');
      const started = Date.now();
      const res = await registerIn(realm, email);
      expect(Date.now() - started).toBeLessThan(300 + 1000);
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('HOOK_FAILED');
      expect(await usersWithEmail(realm, email)).toBe(0);

      await putHook(realm, 'before-registration', { timeoutMs: 300, failure: 'allow' });
      const allowed = await registerIn(realm, email);
      expect(allowed.status).toBe(201);
      await settled();
      const failed = await storedEvents(t, realm, { type: 'hook.failed' });
      expect(failed).toHaveLength(2);
      expect(failed[0].details).toMatchObject({ name: 'before-registration', reason: expect.any(String), ms: expect.any(Number) });
    });

    it('a hook that takes longer than its timeout answers 503 within the timeout and a second', async () => {
      const realm = await newRealm();
      await putHook(realm, 'before-registration', { timeoutMs: 1000 });
      server.reply = () => ({ delayMs: 4000, body: { decision: 'allow' } });
      const started = Date.now();
      const res = await registerIn(realm);
      const took = Date.now() - started;
      expect(res.status).toBe(503);
      expect(took).toBeGreaterThanOrEqual(1000 - 50);
      expect(took).toBeLessThan(2000);
      await settled();
      expect((await storedEvents(t, realm, { type: 'hook.failed' }))[0].details).toMatchObject({ reason: 'timeout' });
    });
  });

  describe('before-sign-in', () => {
    it('allow: the sign-in goes on; the call carries the user, the method, the address and the user agent', async () => {
      const realm = await newRealm();
      const user = await createUser(t, root, realm);
      await putHook(realm, 'before-sign-in');
      const res = await t.api().post('/api/v1/auth/login').set('X-Realm-Id', realm).set('User-Agent', 'hook-test/1.0').send({
        email: user.email,
        password: PASSWORD,
      });
      expect(res.status).toBe(200);
      const [call] = server.ofType('before-sign-in');
      expect(call.verified).toBe(true);
      expect(call.payload.data).toMatchObject({
        user: { id: user.id, email: user.email, roles: [], status: 'active' },
        method: 'password',
        ip: expect.any(String),
        userAgent: 'hook-test/1.0',
      });
      expect(call.body).not.toContain(PASSWORD);
    });

    it('deny: 403 HOOK_DENIED with the message; no session, no counted failure', async () => {
      const realm = await newRealm();
      const user = await createUser(t, root, realm);
      await putHook(realm, 'before-sign-in');
      server.reply = () => ({ body: { decision: 'deny', message: 'Your subscription has ended' } });
      const sessionsBefore = await t.dataSource.query(`SELECT id FROM sessions WHERE user_id = $1`, [user.id]);
      const res = await login(t, user.email, PASSWORD, {}, realm);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'HOOK_DENIED', message: 'Your subscription has ended' });
      expect(await t.dataSource.query(`SELECT id FROM sessions WHERE user_id = $1`, [user.id])).toHaveLength(sessionsBefore.length);
      const [row] = await t.dataSource.query(`SELECT failed_login_count FROM users WHERE id = $1`, [user.id]);
      expect(Number(row.failed_login_count)).toBe(0);
      await settled();
      expect((await storedEvents(t, realm, { type: 'hook.denied', userId: user.id }))[0].details).toMatchObject({
        name: 'before-sign-in',
        message: 'Your subscription has ended',
      });
    });

    it('fails closed by default (503 HOOK_FAILED, no session) and open with failure allow', async () => {
      const realm = await newRealm();
      const user = await createUser(t, root, realm);
      await putHook(realm, 'before-sign-in', { timeoutMs: 200 });
      server.reply = () => ({ status: 502, body: '' });
      const res = await login(t, user.email, PASSWORD, {}, realm);
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('HOOK_FAILED');
      await putHook(realm, 'before-sign-in', { failure: 'allow' });
      expect((await login(t, user.email, PASSWORD, {}, realm)).status).toBe(200);
    });

    it('a disabled hook is not called', async () => {
      const realm = await newRealm();
      const user = await createUser(t, root, realm);
      await putHook(realm, 'before-sign-in', { enabled: false });
      server.reply = () => ({ body: { decision: 'deny' } });
      expect((await login(t, user.email, PASSWORD, {}, realm)).status).toBe(200);
      expect(server.calls).toHaveLength(0);
    });
  });

  describe('token-claims', () => {
    it('adds the claims to the access token at login and at refresh, and nothing once the hook is removed', async () => {
      const realm = await newRealm();
      const user = await createUser(t, root, realm);
      await putHook(realm, 'token-claims');
      server.reply = () => ({ body: { claims: { plan: 'gold', tenant: { id: 't-1' } } } });
      const res = await login(t, user.email, PASSWORD, {}, realm);
      expect(res.status).toBe(200);
      expect(claimsOf(res.body.tokens.accessToken)).toMatchObject({ plan: 'gold', tenant: { id: 't-1' }, sub: user.id });
      const [call] = server.ofType('token-claims');
      expect(call.verified).toBe(true);
      expect(call.payload.data).toMatchObject({ user: { id: user.id }, sessionId: expect.any(String), amr: ['pwd'] });
      expect(JSON.stringify(call.payload)).not.toContain(res.body.tokens.refreshToken);

      const refreshed = await t
        .api()
        .post('/api/v1/auth/refresh')
        .set('X-Realm-Id', realm)
        .send({ refreshToken: res.body.tokens.refreshToken });
      expect(refreshed.status).toBe(200);
      expect(claimsOf(refreshed.body.tokens.accessToken)).toMatchObject({ plan: 'gold' });

      expect((await adminApi(t, root, realm).delete('/hooks/token-claims')).status).toBe(200);
      const again = await t
        .api()
        .post('/api/v1/auth/refresh')
        .set('X-Realm-Id', realm)
        .send({ refreshToken: refreshed.body.tokens.refreshToken });
      expect(again.status).toBe(200);
      expect(claimsOf(again.body.tokens.accessToken).plan).toBeUndefined();
    });

    it('a failure under deny at a refresh spends nothing: the same refresh token works once the hook answers', async () => {
      const realm = await newRealm();
      const user = await createUser(t, root, realm);
      await putHook(realm, 'token-claims', { failure: 'deny', timeoutMs: 200 });
      server.reply = () => ({ body: { claims: { plan: 'gold' } } });
      const signedIn = await login(t, user.email, PASSWORD, {}, realm);
      expect(signedIn.status).toBe(200);
      const refresh = () =>
        t.api().post('/api/v1/auth/refresh').set('X-Realm-Id', realm).send({ refreshToken: signedIn.body.tokens.refreshToken });
      server.reply = () => ({ status: 500 });
      const failed = await refresh();
      expect(failed.status).toBe(503);
      expect(failed.body.error.code).toBe('HOOK_FAILED');
      // Well past the leeway in which a rotated token may come back: it was never rotated.
      t.clock.advance(t.config.refreshReuseLeewaySeconds + 5);
      server.reply = () => ({ body: { claims: { plan: 'gold' } } });
      const retried = await refresh();
      expect(retried.status).toBe(200);
      expect(claimsOf(retried.body.tokens.accessToken)).toMatchObject({ plan: 'gold' });
    });

    const bad: [string, unknown][] = [
      ['a reserved name', { claims: { plan: 'gold', roles: ['super-admin'] } }],
      ['claims over 2 KiB', { claims: { blob: 'x'.repeat(2100) } }],
      ['claims that are not an object', { claims: ['gold'] }],
    ];
    it.each(bad)('%s is a failure: allowed without the claims by default, 503 under deny', async (_what, body) => {
      const realm = await newRealm();
      const user = await createUser(t, root, realm);
      await putHook(realm, 'token-claims');
      server.reply = () => ({ body });
      const res = await login(t, user.email, PASSWORD, {}, realm);
      expect(res.status).toBe(200);
      const claims = claimsOf(res.body.tokens.accessToken);
      expect(claims.plan).toBeUndefined();
      expect(claims.blob).toBeUndefined();
      expect(claims.roles).toEqual([]);

      await putHook(realm, 'token-claims', { failure: 'deny' });
      const sessionsBefore = (await t.dataSource.query(`SELECT id FROM sessions WHERE user_id = $1`, [user.id])).length;
      const denied = await login(t, user.email, PASSWORD, {}, realm);
      expect(denied.status).toBe(503);
      expect(denied.body.error.code).toBe('HOOK_FAILED');
      expect(await t.dataSource.query(`SELECT id FROM sessions WHERE user_id = $1`, [user.id])).toHaveLength(sessionsBefore);
      await settled();
      expect(await storedEvents(t, realm, { type: 'hook.failed' })).toHaveLength(2);
    });
  });

  // Instances share a database only on PostgreSQL (PGlite lives inside one process).
  const onPostgres = process.env.DATABASE_URL ? it : it.skip;
  onPostgres('a change made on one instance reaches another within 5 seconds', async () => {
    const realm = await newRealm();
    const user = await createUser(t, root, realm);
    const other = await createTestApp({ env: ENV, database: t.database });
    try {
      // The other instance has read the realm's hooks (none) and keeps that copy for a while.
      expect((await login(other, user.email, PASSWORD, {}, realm)).status).toBe(200);
      await putHook(realm, 'before-sign-in');
      server.reply = () => ({ body: { decision: 'deny', message: 'Changed elsewhere' } });
      const changed = Date.now();
      let status = 200;
      while (status === 200 && Date.now() - changed < 6000) {
        status = (await login(other, user.email, PASSWORD, {}, realm)).status;
        if (status === 200) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(status).toBe(403);
      expect(Date.now() - changed).toBeLessThan(5000);
    } finally {
      await other.close();
    }
  });

  it('counts calls, failures and their duration per hook in /metrics', async () => {
    const realm = await newRealm();
    const user = await createUser(t, root, realm);
    await putHook(realm, 'token-claims');
    server.reply = () => ({ body: { claims: {} } });
    await login(t, user.email, PASSWORD, {}, realm);
    server.reply = () => ({ body: { claims: { sub: 'someone-else' } } });
    await login(t, user.email, PASSWORD, {}, realm);
    const metrics = await t.api().get('/metrics');
    expect(metrics.text).toMatch(/identity_hook_calls_total\{hook="token-claims",outcome="claims"\} [1-9]/);
    expect(metrics.text).toMatch(/identity_hook_call_duration_seconds_count\{hook="token-claims"\} [1-9]/);
    expect(metrics.text).toMatch(/identity_hook_failures_total\{hook="token-claims",reason="reserved_claim"\} [1-9]/);
  });
});

describe('hooks on a default instance', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses a hook on a private or loopback address, and plain http (400)', async () => {
    const root = (await superAdmin(t)).accessToken;
    for (const url of [
      'https://127.0.0.1/hook',
      'https://10.0.0.8/hook',
      'https://169.254.169.254/latest',
      'https://[::1]/hook',
      'http://example.com/hook',
    ]) {
      const res = await adminApi(t, root, 'default').put('/hooks/before-sign-in').send({ url });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
    }
    expect((await adminApi(t, root, 'default').get('/hooks')).body.hooks).toEqual([]);
  });
});
