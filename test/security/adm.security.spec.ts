import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModulesContainer } from '@nestjs/core';
import { declaredRoutes } from '../../src/adapters/http/admin-routes';
import { AccessTokens } from '../../src/application/ports/access-tokens';
import { ADMIN_ENV, adminApi, createRealm, createUser, SignedIn, superAdmin } from '../support/admin-flows';
import { bearer, login, PASSWORD, register, signedInUser, uniqueEmail } from '../support/flows';
import { mfaToken, userWithTotp, verify, code } from '../support/mfa';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(120_000);

interface Route {
  method: 'get' | 'post' | 'put' | 'delete' | 'patch';
  path: string;
}

/** The admin routes as the Express router has them, so a new admin route joins the matrix by itself. */
function adminRoutes(t: TestApp): Route[] {
  const express = t.app.getHttpAdapter().getInstance() as {
    router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] };
  };
  return express.router.stack.flatMap((layer) =>
    layer.route && layer.route.path.startsWith('/v1/admin/')
      ? Object.entries(layer.route.methods)
          .filter(([method, on]) => on && method !== '_all')
          .map(([method]) => ({ method: method as Route['method'], path: layer.route!.path }))
      : [],
  );
}

/** The columns of the boundary table in docs/administration.md, in order, after route and action. */
const CALLERS = [
  'super-admin',
  'realm-admin of the realm',
  'realm-admin of `master`, on a user',
  'realm-admin of `master`, on a super-admin',
  'realm-admin of another realm',
  'plain user',
  'no token',
] as const;
type Caller = (typeof CALLERS)[number];
type Cell = '✓' | '✓ without super-admins' | '403' | '401';

interface BoundaryRow {
  route: string;
  action: string;
  cells: Record<Caller, Cell>;
}

/** The boundary table of docs/administration.md: one row per admin route. */
function boundaryTable(): BoundaryRow[] {
  const doc = readFileSync(join(__dirname, '../../docs/administration.md'), 'utf8').split('\n');
  const start = doc.findIndex((line) => line.startsWith('<!-- admin-boundary-table'));
  if (start < 0) throw new Error('docs/administration.md has no admin-boundary-table');
  const cellsOf = (line: string) =>
    line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim().replace(/^`([^`]*)`$/, '$1'));
  expect(cellsOf(doc[start + 1])).toEqual(['route', 'action', ...CALLERS]);
  const rows: BoundaryRow[] = [];
  for (const line of doc.slice(start + 3)) {
    if (!line.startsWith('|')) break;
    const [route, action, ...cells] = cellsOf(line);
    for (const cell of cells) expect(['✓', '✓ without super-admins', '403', '401']).toContain(cell);
    const [method, path] = route.split(' ');
    rows.push({
      route: `${method} /v1/admin${path}`,
      action,
      cells: Object.fromEntries(CALLERS.map((c, i) => [c, cells[i]])) as BoundaryRow['cells'],
    });
  }
  return rows;
}

function envelope(res: { body: unknown }) {
  return res.body as { error: { code: string; status: number; message: string } };
}

const decode = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());

describe('ADM — admin API and realms (SECURITY.md)', () => {
  let t: TestApp;
  let root: SignedIn;
  let defaultAdmin: SignedIn;
  let otherAdmin: SignedIn;

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    root = await superAdmin(t);
    await createRealm(t, root.accessToken, 'other');
    defaultAdmin = await createUser(t, root.accessToken, 'default', { roles: ['realm-admin'] });
    otherAdmin = await createUser(t, root.accessToken, 'other', { roles: ['realm-admin'] });
  });
  afterAll(() => t?.close());

  it('ADM-01 admits to every admin route only a realm-admin of that realm or the super-admin: route × credential matrix', async () => {
    const routes = adminRoutes(t);
    expect(routes.length).toBeGreaterThanOrEqual(17);
    const user = await signedInUser(t);
    const withTotp = await userWithTotp(t);
    const expired = await t.app
      .get(AccessTokens)
      .issue(
        { sub: root.id, realm: 'master', sid: decode(root.accessToken).sid, roles: ['super-admin'], amr: ['pwd'] },
        new Date(t.clock.now().getTime() - 3600_000),
        900,
      );
    const [h, p] = root.accessToken.split('.');
    const callers: [string, string | null, (r: Route) => [number, string] | 'admitted'][] = [
      ['none', null, () => [401, 'INVALID_TOKEN']],
      ['invalid', `${h}.${p}.${Buffer.from('not the signature').toString('base64url')}`, () => [401, 'INVALID_TOKEN']],
      ['expired', expired, () => [401, 'TOKEN_EXPIRED']],
      ['user AT', user.accessToken, () => [403, 'FORBIDDEN']],
      ['mfaToken', await mfaToken(t, withTotp.email), () => [401, 'INVALID_TOKEN']],
      ['refresh token', defaultAdmin.refreshToken, () => [401, 'INVALID_TOKEN']],
      ["other realm's admin", otherAdmin.accessToken, () => [403, 'FORBIDDEN']],
      ['admin', defaultAdmin.accessToken, (r) => (r.path.startsWith('/v1/admin/realms') ? [403, 'FORBIDDEN'] : 'admitted')],
      ['super-admin', root.accessToken, () => 'admitted'],
    ];
    const mismatches: string[] = [];
    for (const [who, token, expected] of callers) {
      for (const route of routes) {
        // Ids that exist nowhere: an admitted call changes nothing and answers 200/201/400/404.
        let req = t
          .api()
          [route.method](route.path.replace(/:[A-Za-z]+/g, randomUUID()))
          .set('X-Realm-Id', 'default');
        if (token) req = req.set(...bearer(token));
        const res = ['post', 'put', 'patch'].includes(route.method) ? await req.send({}) : await req;
        const want = expected(route);
        const got = `${res.status} ${res.body?.error?.code ?? ''}`.trim();
        if (want === 'admitted' ? ![200, 201, 400, 404].includes(res.status) : got !== want.join(' ')) {
          mismatches.push(`${who}: ${route.method.toUpperCase()} ${route.path} → ${got}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('ADM-03 isolates realms: same email, separate accounts; no user, session or token crosses', async () => {
    const email = uniqueEmail('alice');
    const inDefault = await register(t, email, PASSWORD, 'default');
    const inOther = await register(t, email, 'another passphrase for other', 'other');
    expect(inOther.id).not.toBe(inDefault.id);
    expect((await login(t, email, 'another passphrase for other', {}, 'default')).status).toBe(401);
    expect((await login(t, email, PASSWORD, {}, 'other')).status).toBe(401);
    const a = await login(t, email, PASSWORD, {}, 'default');
    expect(a.status).toBe(200);

    // Realm B's admin — and the super-admin administering B — cannot reach A's user or session.
    const sidA = decode(a.body.tokens.accessToken).sid;
    for (const admin of [otherAdmin.accessToken, root.accessToken]) {
      const get = await adminApi(t, admin, 'other').get(`/users/${inDefault.id}`);
      expect([get.status, envelope(get).error.code]).toEqual([404, 'USER_NOT_FOUND']);
      const kill = await adminApi(t, admin, 'other').delete(`/sessions/${sidA}`);
      expect([kill.status, envelope(kill).error.code]).toEqual([404, 'SESSION_NOT_FOUND']);
      const list = await adminApi(t, admin, 'other').get(`/sessions?userId=${inDefault.id}`);
      expect(list.body.sessions).toEqual([]);
    }
    // A's access token with X-Realm-Id of B is refused; A's refresh token too.
    const me = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(a.body.tokens.accessToken))
      .set('X-Realm-Id', 'other');
    expect([me.status, envelope(me).error.code]).toEqual([401, 'INVALID_TOKEN']);
    const refresh = await t
      .api()
      .post('/api/v1/auth/refresh')
      .set('X-Realm-Id', 'other')
      .send({ refreshToken: a.body.tokens.refreshToken });
    expect(refresh.status).toBe(401);
    // The session of A is untouched by all of that.
    expect(
      (
        await t
          .api()
          .get('/api/v1/auth/me')
          .set(...bearer(a.body.tokens.accessToken))
      ).status,
    ).toBe(200);
    // MFA challenges do not cross either.
    const totpUser = await userWithTotp(t);
    const token = await mfaToken(t, totpUser.email);
    const crossed = await t
      .api()
      .post('/api/v1/auth/mfa/verify')
      .set('X-Realm-Id', 'other')
      .send({ mfaToken: token, type: 'totp', code: code(t, totpUser.secret) });
    expect([crossed.status, envelope(crossed).error.code]).toEqual([401, 'INVALID_TOKEN']);
    expect((await verify(t, { mfaToken: token, type: 'totp', code: code(t, totpUser.secret) })).status).toBe(200);
  });

  it('ADM-04 validates X-Realm-Id (format, length, existence): 400/404 in the envelope, never 5xx', async () => {
    const cases: [string, number, string][] = [
      ['', 400, 'VALIDATION_FAILED'],
      ['../', 400, 'VALIDATION_FAILED'],
      ["' OR 1=1--", 400, 'VALIDATION_FAILED'],
      ['default; DROP TABLE realms', 400, 'VALIDATION_FAILED'],
      ['DEFAULT', 400, 'VALIDATION_FAILED'],
      ['x'.repeat(64), 400, 'VALIDATION_FAILED'],
      ['x'.repeat(10_000), 400, 'VALIDATION_FAILED'],
      ['x'.repeat(20_000), 400, 'VALIDATION_FAILED'],
      ['no-such-realm', 404, 'REALM_NOT_FOUND'],
    ];
    for (const [realm, status, errorCode] of cases) {
      const answers = [
        await t.api().post('/api/v1/auth/login').set('X-Realm-Id', realm).send({ email: 'a@example.com', password: 'whatever it is' }),
        await t
          .api()
          .get('/v1/admin/users')
          .set(...bearer(root.accessToken))
          .set('X-Realm-Id', realm),
      ];
      for (const res of answers) {
        expect([realm.slice(0, 20), res.status, res.body?.error?.code]).toEqual([realm.slice(0, 20), status, errorCode]);
        expect(Object.keys(res.body)).toEqual(['error']);
      }
    }
    const missing = await t
      .api()
      .get('/v1/admin/users')
      .set(...bearer(root.accessToken));
    expect([missing.status, envelope(missing).error.code]).toEqual([400, 'VALIDATION_FAILED']);
  });

  it('ADM-05 refuses mass assignment: role, emailVerified, realmId, mfaEnabled in user bodies → 400, nothing changes', async () => {
    const smuggled: Record<string, unknown>[] = [
      { role: 'super-admin' },
      { roles: ['realm-admin'] },
      { emailVerified: true },
      { realmId: 'master' },
      { mfaEnabled: true },
      { status: 'active' },
      { id: randomUUID() },
    ];
    for (const extra of smuggled) {
      const email = uniqueEmail('mass');
      const res = await t
        .api()
        .post('/api/v1/auth/register')
        .send({ email, password: PASSWORD, name: 'Mass Assigner', ...extra });
      expect([JSON.stringify(extra), res.status, envelope(res).error.code]).toEqual([JSON.stringify(extra), 400, 'VALIDATION_FAILED']);
      const [{ n }] = await t.dataSource.query(`SELECT count(*) AS n FROM users WHERE email = $1`, [email]);
      expect(Number(n)).toBe(0);
    }
    const user = await signedInUser(t);
    for (const extra of smuggled) {
      const res = await t
        .api()
        .post('/api/v1/auth/login')
        .send({ email: user.email, password: PASSWORD, ...extra });
      expect(res.status).toBe(400);
      const change = await t
        .api()
        .post('/api/v1/auth/password/change')
        .set(...bearer(user.accessToken))
        .send({ currentPassword: PASSWORD, newPassword: 'a whole new passphrase', ...extra });
      expect(change.status).toBe(400);
    }
    // Admin bodies are whitelisted too: only the fields of the contract.
    const roles = await adminApi(t, defaultAdmin.accessToken, 'default')
      .put(`/users/${user.id}/roles`)
      .send({ roles: ['auditor'], realmId: 'master' });
    expect([roles.status, envelope(roles).error.code]).toEqual([400, 'VALIDATION_FAILED']);
    const created = await adminApi(t, defaultAdmin.accessToken, 'default')
      .post('/users')
      .send({ email: uniqueEmail('adm'), name: 'Created', realmId: 'master', mfaEnabled: true });
    expect([created.status, envelope(created).error.code]).toEqual([400, 'VALIDATION_FAILED']);

    const me = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(user.accessToken));
    expect(me.body.user).toMatchObject({
      email: user.email,
      emailVerified: false,
      roles: [],
      mfa: { enabled: false, methods: [] },
      status: 'active',
    });
    expect(decode(user.accessToken).realm).toBe('default');
  });
});

describe("ADM-06 — the master realm's boundary, route by route (SECURITY.md)", () => {
  let t: TestApp;
  let root: SignedIn;

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    root = await superAdmin(t);
    await createRealm(t, root.accessToken, 'other');
  });
  afterAll(() => t?.close());

  it('ADM-06 answers every served admin route, for every caller, on an ordinary user and on a super-admin, as the docs table says', async () => {
    const table = boundaryTable();
    const served = adminRoutes(t).map((r) => `${r.method.toUpperCase()} ${r.path}`);
    const actions = new Map(declaredRoutes(t.app.get(ModulesContainer)).map((r) => [`${r.method} ${r.path}`, r.action]));
    // A route the app serves without a row, or a row of a route it does not serve, fails here.
    expect([...served].sort()).toEqual(table.map((row) => row.route).sort());
    for (const row of table) expect([row.route, actions.get(row.route)]).toEqual([row.route, row.action]);

    const realmAdmin = await createUser(t, root.accessToken, 'default', { roles: ['realm-admin'] });
    const otherAdmin = await createUser(t, root.accessToken, 'other', { roles: ['realm-admin'] });
    const masterAdmin = await createUser(t, root.accessToken, 'master', { roles: ['realm-admin'] });
    const plain = await createUser(t, root.accessToken, 'default');
    const member = await createUser(t, root.accessToken, 'default');
    const masterMember = await createUser(t, root.accessToken, 'master');
    const victim = await createUser(t, root.accessToken, 'master', { roles: ['super-admin'] });
    const superAdmins = new Set([root.id, victim.id]);
    const sid = (who: SignedIn) => decode(who.accessToken).sid as string;

    // Each column: who calls, in which realm, on which user (and that user's session).
    const scenarios: { caller: Caller; token: string | null; realm: string; target: SignedIn }[] = [
      { caller: 'no token', token: null, realm: 'default', target: member },
      { caller: 'plain user', token: plain.accessToken, realm: 'default', target: member },
      { caller: 'realm-admin of another realm', token: otherAdmin.accessToken, realm: 'default', target: member },
      { caller: 'realm-admin of `master`, on a super-admin', token: masterAdmin.accessToken, realm: 'master', target: victim },
      { caller: 'realm-admin of `master`, on a user', token: masterAdmin.accessToken, realm: 'master', target: masterMember },
      { caller: 'realm-admin of the realm', token: realmAdmin.accessToken, realm: 'default', target: member },
      { caller: 'super-admin', token: root.accessToken, realm: 'default', target: member },
      { caller: 'super-admin', token: root.accessToken, realm: 'master', target: victim },
    ];
    const mismatches: string[] = [];
    const refusals: string[] = [];
    for (const { caller, token, realm, target } of scenarios) {
      for (const row of table) {
        const [method, path] = row.route.split(' ');
        const url = path
          .replace(/^\/v1\/admin\/users\/:id/, `/v1/admin/users/${target.id}`)
          .replace(/^\/v1\/admin\/sessions\/:id/, `/v1/admin/sessions/${sid(target)}`)
          .replace(/:[A-Za-z]+/g, () => randomUUID());
        let req = t.api()[method.toLowerCase() as Route['method']](url).set('X-Realm-Id', realm);
        if (token) req = req.set(...bearer(token));
        // Writes carry a field no route accepts: the guard decides before validation, so an
        // admitted write answers 400 naming it and changes nothing.
        const res = method === 'GET' ? await req : await req.send({ __probe: true });
        const expected = row.cells[caller];
        const got = `${res.status} ${res.body?.error?.code ?? ''}`.trim();
        const where = `${caller} in ${realm}: ${row.route} → ${got}, expected ${expected}`;
        if (expected === '401' || expected === '403') {
          if (got !== (expected === '401' ? '401 INVALID_TOKEN' : '403 FORBIDDEN')) mismatches.push(where);
          if (expected === '403') refusals.push(`${realm} ${decode(token!).sub} ${row.action}`);
        } else if (method !== 'GET') {
          const details: { field: string }[] = res.body?.error?.details ?? [];
          if (res.status !== 400 || !details.some((d) => d.field === '__probe')) mismatches.push(where);
        } else if (![200, 400, 404].includes(res.status)) {
          mismatches.push(where);
        } else if (Array.isArray(res.body.sessions)) {
          const listed = (res.body.sessions as { userId: string }[]).filter((s) => superAdmins.has(s.userId)).length;
          const shouldList = expected === '✓' && realm === 'master' && (path === '/v1/admin/sessions' || target === victim);
          if (expected === '✓ without super-admins' ? listed > 0 : shouldList && listed === 0) {
            mismatches.push(`${where}: ${listed} super-admin session(s) listed`);
          }
        }
      }
    }
    expect(mismatches).toEqual([]);
    expect(refusals.length).toBeGreaterThan(table.length * 2);

    // Every refusal left an admin.denied event in the administered realm, naming caller and action.
    const denied: { realm_id: string; actor_id: string; action: string }[] = await t.dataSource.query(
      `SELECT realm_id, actor_id, details->>'action' AS action FROM audit_events WHERE type = 'admin.denied'`,
    );
    expect(denied.map((e) => `${e.realm_id} ${e.actor_id} ${e.action}`).sort()).toEqual([...refusals].sort());

    // Nothing the refused calls aimed at changed: the super-admin is signed in, its account as it was.
    const me = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(victim.accessToken))
      .set('X-Realm-Id', 'master');
    expect([me.status, me.body.user?.status, me.body.user?.roles]).toEqual([200, 'active', ['super-admin']]);
  });
});
