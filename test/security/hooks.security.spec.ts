import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { HttpSignInHooks } from '../../src/adapters/hooks/http-sign-in-hooks';
import { ADMIN_ENV, adminApi, createRealm, createUser, storedEvents, superAdmin } from '../support/admin-flows';
import { login, PASSWORD, uniqueEmail } from '../support/flows';
import { HookServer } from '../support/hook-server';
import { createTestApp, TestApp } from '../support/test-app';

const LOOPBACK_ENV = { ...ADMIN_ENV, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };

function claimsOf(accessToken: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString('utf8'));
}

describe('HOOK — synchronous hooks (SECURITY.md)', () => {
  let t: TestApp;
  let root: string;
  let server: HookServer;
  let counter = 0;

  beforeAll(async () => {
    t = await createTestApp({ env: LOOPBACK_ENV });
    root = (await superAdmin(t)).accessToken;
    server = await HookServer.start();
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });
  beforeEach(() => {
    server.calls.length = 0;
  });

  async function realmWithHook(name: string, settings: Record<string, unknown> = {}): Promise<string> {
    counter += 1;
    const realm = `hooksec-${Date.now().toString(36)}-${counter}`;
    await createRealm(t, root, realm);
    const res = await adminApi(t, root, realm)
      .put(`/hooks/${name}`)
      .send({ url: server.url, ...settings });
    expect(res.status).toBe(200);
    server.secret = res.body.secret;
    return realm;
  }

  const registerIn = (realm: string, email: string) =>
    t.api().post('/api/v1/auth/register').set('X-Realm-Id', realm).send({ email, password: PASSWORD, name: 'Grace Hopper' });

  describe('HOOK-01', () => {
    it('HOOK-01 a hook URL on a private, loopback or link-local address is refused (400) on a strict instance', async () => {
      const strict = await createTestApp({ env: ADMIN_ENV });
      try {
        const token = (await superAdmin(strict)).accessToken;
        for (const url of [
          'https://127.0.0.1/h',
          'https://192.168.1.10/h',
          'https://169.254.169.254/latest/meta-data',
          'https://[::1]/h',
        ]) {
          const res = await adminApi(strict, token, 'default').put('/hooks/token-claims').send({ url });
          expect(res.status).toBe(400);
          expect(res.body.error.code).toBe('VALIDATION_FAILED');
        }
      } finally {
        await strict.close();
      }
    });

    it('HOOK-01 a hook that stalls → 503 HOOK_FAILED within timeout + 1 s, and no user row', async () => {
      const realm = await realmWithHook('before-registration', { timeoutMs: 500 });
      server.reply = () => ({ delayMs: 10_000, body: { decision: 'allow' } });
      const email = uniqueEmail('stall');
      const started = Date.now();
      const res = await registerIn(realm, email);
      expect(Date.now() - started).toBeLessThan(500 + 1000);
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('HOOK_FAILED');
      expect(await t.dataSource.query(`SELECT id FROM users WHERE realm_id = $1 AND email = $2`, [realm, email])).toHaveLength(0);
      await t.app.get(HttpSignInHooks).settled();
      expect((await storedEvents(t, realm, { type: 'hook.failed' }))[0].details).toMatchObject({ reason: 'timeout' });
    });

    it('HOOK-01 a redirecting hook is a failure: its Location is never followed', async () => {
      const elsewhere: string[] = [];
      const target = http.createServer((req, res) => {
        elsewhere.push(req.url ?? '');
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ decision: 'allow' }));
      });
      await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
      try {
        const location = `http://127.0.0.1:${(target.address() as AddressInfo).port}/followed`;
        const realm = await realmWithHook('before-registration');
        for (const status of [301, 302, 307, 308]) {
          server.reply = () => ({ status, headers: { location }, body: { decision: 'allow' } });
          const res = await registerIn(realm, uniqueEmail('redirect'));
          expect(res.status).toBe(503);
          expect(res.body.error.code).toBe('HOOK_FAILED');
        }
        expect(elsewhere).toEqual([]);
      } finally {
        target.closeAllConnections();
        await new Promise<void>((resolve) => target.close(() => resolve()));
      }
    });

    it('HOOK-01 every call is signed (standardwebhooks verifies it) and carries no password, token or secret', async () => {
      const realm = await realmWithHook('before-registration');
      const claimsSecret: string = (await adminApi(t, root, realm).put('/hooks/token-claims').send({ url: server.url })).body.secret;
      server.reply = (call) => ({ body: call.type === 'token-claims' ? { claims: {} } : { decision: 'allow' } });
      const email = uniqueEmail('signed');
      expect((await registerIn(realm, email)).status).toBe(201);
      const signedIn = await login(t, email, PASSWORD, {}, realm);
      expect(signedIn.status).toBe(200);
      expect(server.calls.map((c) => c.type)).toEqual(['before-registration', 'token-claims']);
      expect(server.calls[0].verified).toBe(true);
      const [, claimsCall] = server.calls;
      const headers = (name: string) => String(claimsCall.headers[name]);
      expect(() =>
        new Webhook(claimsSecret).verify(claimsCall.body, {
          'webhook-id': headers('webhook-id'),
          'webhook-timestamp': headers('webhook-timestamp'),
          'webhook-signature': headers('webhook-signature'),
        }),
      ).not.toThrow();
      // Each hook signs with its own secret.
      expect(claimsCall.verified).toBe(false);
      const secrets = [
        PASSWORD,
        signedIn.body.tokens.accessToken,
        signedIn.body.tokens.refreshToken,
        server.secret.slice(6),
        claimsSecret.slice(6),
      ];
      for (const call of server.calls) for (const secret of secrets) expect(call.body).not.toContain(secret);
      expect(server.calls[0].headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    });
  });

  describe('HOOK-02', () => {
    it.each(['sub', 'roles', 'iss', 'realm', 'cnf', 'app_metadata', 'sid'])(
      'HOOK-02 claims naming %s are a failure: the token carries its own, and under deny → 503',
      async (name) => {
        const realm = await realmWithHook('token-claims');
        const user = await createUser(t, root, realm);
        server.reply = () => ({ body: { claims: { [name]: 'forged', plan: 'gold' } } });
        const res = await login(t, user.email, PASSWORD, {}, realm);
        expect(res.status).toBe(200);
        const claims = claimsOf(res.body.tokens.accessToken);
        expect(claims[name]).not.toBe('forged');
        expect(claims.plan).toBeUndefined();
        expect(claims).toMatchObject({ sub: user.id, realm, roles: [] });

        await adminApi(t, root, realm).put('/hooks/token-claims').send({ url: server.url, failure: 'deny' });
        const denied = await login(t, user.email, PASSWORD, {}, realm);
        expect(denied.status).toBe(503);
        expect(denied.body.error.code).toBe('HOOK_FAILED');
      },
    );

    it('HOOK-02 claims over 2 KiB are a failure; 2 KiB and less are added', async () => {
      const realm = await realmWithHook('token-claims');
      const user = await createUser(t, root, realm);
      const fits = 'x'.repeat(2048 - JSON.stringify({ blob: '' }).length);
      server.reply = () => ({ body: { claims: { blob: fits } } });
      expect(claimsOf((await login(t, user.email, PASSWORD, {}, realm)).body.tokens.accessToken).blob).toBe(fits);
      server.reply = () => ({ body: { claims: { blob: `${fits}x` } } });
      expect(claimsOf((await login(t, user.email, PASSWORD, {}, realm)).body.tokens.accessToken).blob).toBeUndefined();
    });

    it('HOOK-02 a refused registration leaves no account and no email; a refused sign-in no session and no counted failure', async () => {
      const realm = await realmWithHook('before-registration');
      server.reply = () => ({ body: { decision: 'deny', message: 'Not on the list' } });
      const email = uniqueEmail('refused');
      const registered = await registerIn(realm, email);
      expect(registered.status).toBe(403);
      expect(registered.body.error).toMatchObject({ code: 'HOOK_DENIED', message: 'Not on the list' });
      expect(await t.dataSource.query(`SELECT id FROM users WHERE realm_id = $1 AND email = $2`, [realm, email])).toHaveLength(0);
      expect(await t.dataSource.query(`SELECT id FROM email_outbox WHERE recipient = $1`, [email])).toHaveLength(0);

      const user = await createUser(t, root, realm);
      await adminApi(t, root, realm).put('/hooks/before-sign-in').send({ url: server.url });
      const sessions = (await t.dataSource.query(`SELECT id FROM sessions WHERE user_id = $1`, [user.id])).length;
      for (let i = 0; i < 3; i += 1) {
        const res = await login(t, user.email, PASSWORD, {}, realm);
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('HOOK_DENIED');
      }
      expect(await t.dataSource.query(`SELECT id FROM sessions WHERE user_id = $1`, [user.id])).toHaveLength(sessions);
      const [row] = await t.dataSource.query(`SELECT failed_login_count FROM users WHERE id = $1`, [user.id]);
      expect(Number(row.failed_login_count)).toBe(0);
    });
  });
});
