import { randomUUID } from 'node:crypto';
import { AccessTokens } from '../../src/application/ports/access-tokens';
import {
  ADMIN_ENV,
  adminApi,
  createRealm,
  createUser,
  ROOT_EMAIL,
  ROOT_PASSWORD,
  SignedIn,
  storedEvents,
  superAdmin,
} from '../support/admin-flows';
import { bearer, login, signedInUser } from '../support/flows';
import { code, midStep, nextStep, userWithTotp } from '../support/mfa';
import { createTestApp, TestApp } from '../support/test-app';

// Booting the app on a fresh database takes seconds on a busy machine.
jest.setTimeout(120_000);

interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  path: string;
}

/** Every route the HTTP server has registered under /v1/admin, read from the Express router. */
function adminRoutes(t: TestApp): Route[] {
  const express = t.app.getHttpAdapter().getInstance() as {
    router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] };
  };
  const routes: Route[] = [];
  for (const layer of express.router.stack) {
    if (!layer.route || !layer.route.path.startsWith('/v1/admin')) continue;
    for (const [method, on] of Object.entries(layer.route.methods)) {
      if (on && method !== '_all') routes.push({ method: method.toUpperCase() as Route['method'], path: layer.route.path });
    }
  }
  return routes.sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`));
}

/** Calls a route with every path parameter set to an id that exists nowhere, so nothing changes. */
function call(t: TestApp, route: Route, headers: Record<string, string>) {
  const path = route.path.replace(/:[A-Za-z]+/g, randomUUID());
  let req = t.api()[route.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete' | 'patch'](path);
  for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
  return ['POST', 'PUT', 'PATCH'].includes(route.method) ? req.send({}) : req;
}

const SUPER_ONLY = (route: Route) => route.path.startsWith('/v1/admin/realms');

function decode(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
}

describe('admin authorization: every admin route × every kind of caller', () => {
  let t: TestApp;
  let root: SignedIn;
  let defaultAdmin: SignedIn;
  let otherAdmin: SignedIn;
  let masterAdmin: SignedIn;
  let plainUser: SignedIn;
  let expiredToken: string;
  let adminMfaToken: string;
  let routes: Route[];

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    root = await superAdmin(t);
    await createRealm(t, root.accessToken, 'other');
    defaultAdmin = await createUser(t, root.accessToken, 'default', { roles: ['realm-admin'] });
    otherAdmin = await createUser(t, root.accessToken, 'other', { roles: ['realm-admin'] });
    masterAdmin = await createUser(t, root.accessToken, 'master', { roles: ['realm-admin'] });
    plainUser = await signedInUser(t);
    const claims = decode(root.accessToken);
    // A genuine super-admin token of a live session, signed by our key, whose exp has passed.
    expiredToken = await t.app
      .get(AccessTokens)
      .issue(
        { sub: root.id, realm: 'master', sid: claims.sid as string, roles: ['super-admin'], amr: ['pwd'] },
        new Date(Date.now() - 3600_000),
        900,
      );
    // A realm-admin of the realm with TOTP: its password step yields an mfaToken, no access token.
    const mfaAdmin = await userWithTotp(t);
    expect(
      (
        await adminApi(t, root.accessToken, 'default')
          .put(`/users/${mfaAdmin.id}/roles`)
          .send({ roles: ['realm-admin'] })
      ).status,
    ).toBe(200);
    const passwordStep = await login(t, mfaAdmin.email);
    adminMfaToken = passwordStep.body.mfaToken;
    expect(adminMfaToken).toEqual(expect.any(String));
    routes = adminRoutes(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('finds every administrative endpoint in the router (the matrix below covers all of them)', () => {
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining([
        'GET /v1/admin/users',
        'POST /v1/admin/users',
        'GET /v1/admin/users/:id',
        'DELETE /v1/admin/users/:id',
        'POST /v1/admin/users/:id/suspend',
        'POST /v1/admin/users/:id/activate',
        'POST /v1/admin/users/:id/unlock',
        'POST /v1/admin/users/:id/reset-password',
        'POST /v1/admin/users/:id/mfa/reset',
        'PUT /v1/admin/users/:id/roles',
        'GET /v1/admin/sessions',
        'DELETE /v1/admin/sessions/:id',
        'GET /v1/admin/users/:id/sessions',
        'DELETE /v1/admin/users/:id/sessions',
        'GET /v1/admin/events',
        'GET /v1/admin/realms',
        'POST /v1/admin/realms',
      ]),
    );
    expect(routes.length).toBeGreaterThanOrEqual(17);
  });

  type Expectation = { status: number; code: string } | 'admitted';
  const callers: [string, () => Record<string, string>, (route: Route) => Expectation][] = [
    ['no token', () => ({ 'X-Realm-Id': 'default' }), () => ({ status: 401, code: 'INVALID_TOKEN' })],
    [
      'a malformed token',
      () => ({ 'X-Realm-Id': 'default', Authorization: 'Bearer not.a.jwt' }),
      () => ({ status: 401, code: 'INVALID_TOKEN' }),
    ],
    [
      'a super-admin token with a forged signature',
      () => {
        const [h, p] = root.accessToken.split('.');
        return { 'X-Realm-Id': 'default', Authorization: `Bearer ${h}.${p}.${Buffer.from('forged').toString('base64url')}` };
      },
      () => ({ status: 401, code: 'INVALID_TOKEN' }),
    ],
    [
      'the mfaToken of a realm-admin of the realm',
      () => ({ 'X-Realm-Id': 'default', Authorization: `Bearer ${adminMfaToken}` }),
      () => ({ status: 401, code: 'INVALID_TOKEN' }),
    ],
    [
      'the refresh token of a realm-admin of the realm',
      () => ({ 'X-Realm-Id': 'default', Authorization: `Bearer ${defaultAdmin.refreshToken}` }),
      () => ({ status: 401, code: 'INVALID_TOKEN' }),
    ],
    [
      'an expired super-admin token',
      () => ({ 'X-Realm-Id': 'default', Authorization: `Bearer ${expiredToken}` }),
      () => ({ status: 401, code: 'TOKEN_EXPIRED' }),
    ],
    [
      'a plain user of the realm',
      () => ({ 'X-Realm-Id': 'default', Authorization: `Bearer ${plainUser.accessToken}` }),
      () => ({ status: 403, code: 'FORBIDDEN' }),
    ],
    [
      'a realm-admin of another realm',
      () => ({ 'X-Realm-Id': 'default', Authorization: `Bearer ${otherAdmin.accessToken}` }),
      () => ({ status: 403, code: 'FORBIDDEN' }),
    ],
    [
      'a realm-admin (not super-admin) of master',
      () => ({ 'X-Realm-Id': 'default', Authorization: `Bearer ${masterAdmin.accessToken}` }),
      () => ({ status: 403, code: 'FORBIDDEN' }),
    ],
    [
      'a realm-admin of the realm',
      () => ({ 'X-Realm-Id': 'default', Authorization: `Bearer ${defaultAdmin.accessToken}` }),
      (route) => (SUPER_ONLY(route) ? { status: 403, code: 'FORBIDDEN' } : 'admitted'),
    ],
    ['the super-admin', () => ({ 'X-Realm-Id': 'default', Authorization: `Bearer ${root.accessToken}` }), () => 'admitted'],
  ];

  it.each(callers)('answers %s on every admin route as the contract says', async (_who, headers, expected) => {
    const mismatches: string[] = [];
    for (const route of routes) {
      const res = await call(t, route, headers());
      const want = expected(route);
      const label = `${route.method} ${route.path}`;
      if (want === 'admitted') {
        // Past the guard: validation (400) or the unknown id (404) answers, never 401/403/500.
        if (![200, 201, 400, 404].includes(res.status)) mismatches.push(`${label}: ${res.status} ${JSON.stringify(res.body)}`);
      } else if (res.status !== want.status || res.body?.error?.code !== want.code) {
        mismatches.push(`${label}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it("lets a realm-admin in only with X-Realm-Id of its own realm, and never another realm's token into this one", async () => {
    expect((await adminApi(t, otherAdmin.accessToken, 'other').get('/users')).status).toBe(200);
    const res = await adminApi(t, otherAdmin.accessToken, 'master').get('/users');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: { code: 'FORBIDDEN', message: expect.any(String), status: 403 } });
  });

  it.each([
    ['missing', undefined, 400, 'VALIDATION_FAILED'],
    ['malformed', '../master', 400, 'VALIDATION_FAILED'],
    ['an injection attempt', "' OR 1=1--", 400, 'VALIDATION_FAILED'],
    ['10 kB long', 'a'.repeat(10_000), 400, 'VALIDATION_FAILED'],
    ['unknown', 'no-such-realm', 404, 'REALM_NOT_FOUND'],
  ])('answers an X-Realm-Id that is %s with the contract error', async (_what, header, status, code) => {
    let req = t
      .api()
      .get('/v1/admin/users')
      .set(...bearer(root.accessToken));
    if (header !== undefined) req = req.set('X-Realm-Id', header);
    const res = await req;
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
  });

  it("records a super-admin's action in the administered realm, naming the super-admin as actor", async () => {
    const member = await createUser(t, root.accessToken, 'other');
    const res = await adminApi(t, root.accessToken, 'other').post(`/users/${member.id}/suspend`).send({ reason: 'audit check' });
    expect(res.status).toBe(200);
    const events = await storedEvents(t, 'other', { userId: member.id, type: 'user.suspended' });
    expect(events).toEqual([expect.objectContaining({ actor_id: root.id, details: expect.objectContaining({ reason: 'audit check' }) })]);
    expect(await storedEvents(t, 'master', { userId: member.id })).toEqual([]);
  });

  it('stops admitting an admin token as soon as the role is removed, though the token still lists it', async () => {
    const admin = await createUser(t, root.accessToken, 'default', { roles: ['realm-admin'] });
    expect((await adminApi(t, admin.accessToken, 'default').get('/users')).status).toBe(200);
    const demoted = await adminApi(t, root.accessToken, 'default').put(`/users/${admin.id}/roles`).send({ roles: [] });
    expect(demoted.status).toBe(200);
    expect(decode(admin.accessToken).roles).toEqual(['realm-admin']);
    const res = await adminApi(t, admin.accessToken, 'default').get('/users');
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  it('refuses the token of a suspended admin (its sessions were revoked) with 401', async () => {
    const admin = await createUser(t, root.accessToken, 'default', { roles: ['realm-admin'] });
    expect((await adminApi(t, root.accessToken, 'default').post(`/users/${admin.id}/suspend`).send({})).status).toBe(200);
    const res = await adminApi(t, admin.accessToken, 'default').get('/users');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('INVALID_TOKEN');
  });

  describe('super-admin accounts are managed only by a super-admin', () => {
    it('refuses a realm-admin of master who grants super-admin, to anyone or itself', async () => {
      const api = adminApi(t, masterAdmin.accessToken, 'master');
      const created = await api
        .post('/users')
        .send({ email: 'climber@example.com', name: 'Climber', password: 'another fine passphrase', roles: ['super-admin'] });
      expect(created.status).toBe(403);
      expect(created.body.error.code).toBe('FORBIDDEN');
      const self = await api.put(`/users/${masterAdmin.id}/roles`).send({ roles: ['realm-admin', 'super-admin'] });
      expect(self.status).toBe(403);
      const rows: { roles: string[] }[] = await t.dataSource.query(`SELECT roles FROM users WHERE id = $1`, [masterAdmin.id]);
      expect(rows[0].roles).toEqual(['realm-admin']);
    });

    it.each([
      ['suspend', 'post', '/suspend'],
      ['reset the password of', 'post', '/reset-password'],
      ['reset the MFA of', 'post', '/mfa/reset'],
      ['delete', 'delete', ''],
    ] as const)('refuses a realm-admin of master who tries to %s the super-admin', async (_what, method, suffix) => {
      const res = await adminApi(t, masterAdmin.accessToken, 'master')[method](`/users/${root.id}${suffix}`).send({});
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    });

    it('refuses super-admin as a role outside master with 400', async () => {
      const res = await adminApi(t, root.accessToken, 'default')
        .post('/users')
        .send({ email: 'x-super@example.com', name: 'X', password: 'another fine passphrase', roles: ['super-admin'] });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'roles' })]);
    });
  });
});

describe('ADMIN_REQUIRE_MFA=true', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { ...ADMIN_ENV, ADMIN_REQUIRE_MFA: 'true' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses an admin token without a second factor with 403 saying administration requires MFA', async () => {
    const root = await superAdmin(t);
    const res = await adminApi(t, root.accessToken, 'master').get('/users');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: { code: 'FORBIDDEN', message: expect.stringMatching(/administration requires MFA/i), status: 403 } });
  });

  it.each([['otp'], ['hwk']])('admits the same admin with amr ["pwd","%s"]', async (factor) => {
    const root = await superAdmin(t);
    const claims = decode(root.accessToken);
    const token = await t.app
      .get(AccessTokens)
      .issue(
        { sub: root.id, realm: 'master', sid: claims.sid as string, roles: ['super-admin'], amr: ['pwd', factor] },
        t.clock.now(),
        900,
      );
    const res = await adminApi(t, token, 'master').get('/users');
    expect(res.status).toBe(200);
  });

  it('admits an admin who really signed in with TOTP (amr ["pwd","otp"])', async () => {
    const root = await superAdmin(t);
    const api = (path: string) =>
      t
        .api()
        .post(`/api/v1/auth${path}`)
        .set('X-Realm-Id', 'master')
        .set(...bearer(root.accessToken));
    const setup = await api('/mfa/totp/setup');
    expect(setup.status).toBe(200);
    midStep(t);
    expect((await api('/mfa/totp/confirm').send({ code: code(t, setup.body.secret) })).status).toBe(200);
    nextStep(t);
    const password = await login(t, ROOT_EMAIL, ROOT_PASSWORD, {}, 'master');
    expect(password.body.requiresMfa).toBe(true);
    const verified = await t
      .api()
      .post('/api/v1/auth/mfa/verify')
      .set('X-Realm-Id', 'master')
      .send({ mfaToken: password.body.mfaToken, code: code(t, setup.body.secret), type: 'totp' });
    expect(verified.status).toBe(200);
    expect(decode(verified.body.tokens.accessToken).amr).toEqual(['pwd', 'otp']);
    expect((await adminApi(t, verified.body.tokens.accessToken, 'default').get('/users')).status).toBe(200);
    // The mfaToken of that login was never an access token.
    expect((await adminApi(t, password.body.mfaToken, 'default').get('/users')).status).toBe(401);
  });

  it('still answers a plain user 403 FORBIDDEN without mentioning MFA', async () => {
    const user = await signedInUser(t);
    const res = await adminApi(t, user.accessToken, 'default').get('/users');
    expect(res.status).toBe(403);
    expect(res.body.error.message).not.toMatch(/MFA/);
  });
});
