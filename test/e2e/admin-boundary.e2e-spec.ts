import { BootstrapUseCase } from '../../src/application/admin/bootstrap.use-case';
import { SuspendUserUseCase } from '../../src/application/admin/suspend-user.use-case';
import { UserRepository } from '../../src/application/ports/user.repository';
import { runCli } from '../../src/cli';
import { AppConfig } from '../../src/config/app-config';
import {
  ADMIN_ENV,
  adminApi,
  createRealm,
  createUser,
  lastQueuedMailText,
  ROOT_EMAIL,
  ROOT_PASSWORD,
  SignedIn,
  storedEvents,
  superAdmin,
} from '../support/admin-flows';
import { bearer, login, signedInUser, uniqueEmail } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';

const decodeSid = (token: string): string => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid;

/**
 * The master realm's boundary, tried as an attacker holding `realm-admin` of `master` would:
 * every way to the super-admins' accounts — master's settings, their sessions — answers 403,
 * changes nothing, and leaves an `admin.denied` event in master's trail.
 */
describe('admin API: a realm-admin of master stops at what protects the super-admins', () => {
  let t: TestApp;
  let root: SignedIn;
  let masterAdmin: SignedIn;

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    root = await superAdmin(t);
    masterAdmin = await createUser(t, root.accessToken, 'master', { roles: ['realm-admin'] });
  });
  afterAll(() => t?.close());

  async function rootSignedIn(): Promise<boolean> {
    const me = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(root.accessToken))
      .set('X-Realm-Id', 'master');
    return me.status === 200;
  }

  const errorOf = (res: { status: number; body: { error?: { code: string } } }) => [res.status, res.body.error?.code];

  async function denials(): Promise<{ action: unknown; userId: string | null }[]> {
    const events = await storedEvents(t, 'master', { type: 'admin.denied' });
    return events.filter((e) => e.actor_id === masterAdmin.id).map((e) => ({ action: e.details.action, userId: e.user_id }));
  }

  it("refuses to change master's publicUrl: the super-admin's reset email keeps the configured link", async () => {
    const before = await adminApi(t, masterAdmin.accessToken, 'master').get('/realm');
    expect(before.status).toBe(200);

    const res = await adminApi(t, masterAdmin.accessToken, 'master')
      .patch('/realm')
      .send({ settings: { publicUrl: 'https://evil.example/x' } });
    expect(errorOf(res)).toEqual([403, 'FORBIDDEN']);

    const after = await adminApi(t, root.accessToken, 'master').get('/realm');
    expect(after.body.realm.settings.publicUrl).toBe(before.body.realm.settings.publicUrl);
    expect(after.body.realm.updatedAt).toBe(before.body.realm.updatedAt);

    const forgot = await t.api().post('/api/v1/auth/password/forgot').set('X-Realm-Id', 'master').send({ email: ROOT_EMAIL });
    expect(forgot.status).toBe(202);
    const text = await lastQueuedMailText(t, ROOT_EMAIL);
    expect(text).toContain(`${t.config.publicUrl}/reset-password?token=`);
    expect(text).not.toContain('evil.example');
    expect(await denials()).toContainEqual({ action: 'realm.update', userId: null });
  });

  it("refuses a lockout of one failure on master: the super-admin's wrong password does not lock it", async () => {
    const res = await adminApi(t, masterAdmin.accessToken, 'master')
      .patch('/realm')
      .send({ settings: { lockout: { maxFailures: 1, durationSeconds: 86400 } } });
    expect(errorOf(res)).toEqual([403, 'FORBIDDEN']);
    const name = await adminApi(t, masterAdmin.accessToken, 'master').patch('/realm').send({ name: 'Taken over' });
    expect(errorOf(name)).toEqual([403, 'FORBIDDEN']);

    const realm = await adminApi(t, root.accessToken, 'master').get('/realm');
    expect(realm.body.realm.settings.lockout.maxFailures).toBe(t.config.lockoutMaxFailures);
    expect(realm.body.realm.name).not.toBe('Taken over');
    expect((await login(t, ROOT_EMAIL, 'a wrong password, once', {}, 'master')).status).toBe(401);
    expect((await login(t, ROOT_EMAIL, ROOT_PASSWORD, {}, 'master')).status).toBe(200);
  });

  it("refuses to list or end a super-admin's sessions, and its lists omit them; the super-admin stays signed in", async () => {
    const rootSid = decodeSid(root.accessToken);
    const api = adminApi(t, masterAdmin.accessToken, 'master');

    expect(errorOf(await api.get(`/users/${root.id}/sessions`))).toEqual([403, 'FORBIDDEN']);
    expect(errorOf(await api.delete(`/users/${root.id}/sessions`))).toEqual([403, 'FORBIDDEN']);
    expect(errorOf(await api.delete(`/sessions/${rootSid}`))).toEqual([403, 'FORBIDDEN']);

    const all = await api.get('/sessions?limit=100');
    expect(all.status).toBe(200);
    const listed = all.body.sessions.map((s: { id: string; userId: string }) => s.userId);
    expect(listed).toContain(masterAdmin.id);
    expect(listed).not.toContain(root.id);
    expect(all.body.pagination.total).toBe(all.body.sessions.length);
    const filtered = await api.get(`/sessions?userId=${root.id}`);
    expect([filtered.status, filtered.body.sessions, filtered.body.pagination.total]).toEqual([200, [], 0]);

    expect(await rootSignedIn()).toBe(true);
    const rootsView = await adminApi(t, root.accessToken, 'master').get(`/users/${root.id}/sessions`);
    expect(rootsView.body.sessions.map((s: { id: string }) => s.id)).toContain(rootSid);
    expect(await denials()).toEqual(
      expect.arrayContaining([
        { action: 'user.sessions.list', userId: root.id },
        { action: 'user.sessions.revoke', userId: root.id },
        { action: 'session.revoke', userId: root.id },
      ]),
    );
  });

  describe('probing as other callers', () => {
    it("refuses the super-admin's other roles too: a realm-admin of master changes nothing on its account", async () => {
      const res = await adminApi(t, masterAdmin.accessToken, 'master')
        .put(`/users/${root.id}/roles`)
        .send({ roles: ['super-admin', 'auditor'] });
      expect(errorOf(res)).toEqual([403, 'FORBIDDEN']);
      const rows: { roles: string[] }[] = await t.dataSource.query(`SELECT roles FROM users WHERE id = $1`, [root.id]);
      expect(rows[0].roles).toEqual(['super-admin']);
    });

    it('refuses a plain user who names master in X-Realm-Id, and audits it in master with the realm it came from', async () => {
      const user = await signedInUser(t);
      const res = await t
        .api()
        .get(`/v1/admin/users/${root.id}/sessions`)
        .set(...bearer(user.accessToken))
        .set('X-Realm-Id', 'master');
      expect(errorOf(res)).toEqual([403, 'FORBIDDEN']);
      const events = await storedEvents(t, 'master', { type: 'admin.denied' });
      expect(events.filter((e) => e.actor_id === user.id)).toEqual([
        expect.objectContaining({
          user_id: null,
          details: { action: 'user.sessions.list', reason: 'not-an-administrator', actorRealm: 'default', targetId: root.id },
        }),
      ]);
    });

    it("gives another realm's admin 403 in master and 404 in its own realm for a super-admin's id: nothing crosses", async () => {
      await createRealm(t, root.accessToken, 'probing');
      const other = await createUser(t, root.accessToken, 'probing', { roles: ['realm-admin'] });
      expect(errorOf(await adminApi(t, other.accessToken, 'master').delete(`/users/${root.id}/sessions`))).toEqual([403, 'FORBIDDEN']);
      expect(errorOf(await adminApi(t, other.accessToken, 'probing').delete(`/users/${root.id}/sessions`))).toEqual([
        404,
        'USER_NOT_FOUND',
      ]);
      expect(errorOf(await adminApi(t, other.accessToken, 'probing').delete(`/sessions/${decodeSid(root.accessToken)}`))).toEqual([
        404,
        'SESSION_NOT_FOUND',
      ]);
    });

    it('decides by the route, not the spelling of its path: other letter case, a trailing slash, an upper-case id', async () => {
      for (const path of [
        `/V1/ADMIN/users/${root.id}/sessions`,
        `/v1/admin/users/${root.id}/sessions/`,
        `/v1/admin/users/${root.id.toUpperCase()}/sessions`,
      ]) {
        const res = await t
          .api()
          .delete(path)
          .set(...bearer(masterAdmin.accessToken))
          .set('X-Realm-Id', 'master');
        expect([path, ...errorOf(res)]).toEqual([path, 403, 'FORBIDDEN']);
      }
      expect(await rootSignedIn()).toBe(true);
    });
  });

  describe("around the guard's single decision", () => {
    async function runCliQuietly(argv: string[], adminPassword?: string) {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(argv, t.app, { out: (l) => out.push(l), err: (l) => err.push(l), adminPassword });
      return { code, out: out.join('\n'), err: err.join('\n') };
    }

    it('a realm-admin of master does not become super-admin by pre-creating the address an operator later passes to create-admin --super', async () => {
      // The attacker (realm-admin of master) creates the account the operator will make super-admin,
      // with a password of its choosing, and keeps a session of it.
      const opsEmail = uniqueEmail('ops');
      const planted = await adminApi(t, masterAdmin.accessToken, 'master')
        .post('/users')
        .send({ email: opsEmail, name: 'Ops', password: 'attacker chosen passphrase', emailVerified: true });
      expect(planted.status).toBe(201);
      const before = await login(t, opsEmail, 'attacker chosen passphrase', {}, 'master');
      expect(before.status).toBe(200);

      // The operator runs the documented command for a new super-admin.
      const cli = await runCliQuietly(['create-admin', 'master', opsEmail, '--super'], 'the operator passphrase for ops');
      expect(cli.code).toBeLessThanOrEqual(1);

      // Neither the attacker's password nor its pre-existing session may now carry super-admin.
      const again = await login(t, opsEmail, 'attacker chosen passphrase', {}, 'master');
      const byPassword =
        again.status === 200 ? (await adminApi(t, again.body.tokens.accessToken, 'master').get('/realms')).status : again.status;
      const refreshed = await t
        .api()
        .post('/api/v1/auth/refresh')
        .set('X-Realm-Id', 'master')
        .send({ refreshToken: before.body.tokens.refreshToken });
      const bySession =
        refreshed.status === 200
          ? (await adminApi(t, refreshed.body.tokens.accessToken, 'master').get('/realms')).status
          : refreshed.status;
      expect([byPassword, bySession]).not.toContain(200);
    });

    it("a realm-admin of master cannot suspend an account that became super-admin between the guard's check and the write (TOCTOU)", async () => {
      const target = await createUser(t, root.accessToken, 'master');
      const suspend = t.app.get(SuspendUserUseCase, { strict: false });
      const original = suspend.execute.bind(suspend);
      // The super-admin promotes the target while the realm-admin's request is between the
      // AdminGuard (which read the target as an ordinary user) and the use case's row lock.
      const spy = jest.spyOn(suspend, 'execute').mockImplementationOnce(async (input) => {
        const promoted = await adminApi(t, root.accessToken, 'master')
          .put(`/users/${target.id}/roles`)
          .send({ roles: ['super-admin'] });
        expect(promoted.status).toBe(200);
        return original(input);
      });
      try {
        const res = await adminApi(t, masterAdmin.accessToken, 'master').post(`/users/${target.id}/suspend`).send({ reason: 'race' });
        const rows: { roles: string[]; status: string }[] = await t.dataSource.query(`SELECT roles, status FROM users WHERE id = $1`, [
          target.id,
        ]);
        expect(rows[0].roles).toEqual(['super-admin']);
        // The contract: nothing a realm-admin of master does lands on a super-admin's account.
        expect([res.status, rows[0].status]).toEqual([403, 'active']);
      } finally {
        spy.mockRestore();
      }
    });

    it('the bootstrap promotes no existing account: an address planted in master stays a plain user', async () => {
      const email = uniqueEmail('planted-root');
      const planted = await adminApi(t, masterAdmin.accessToken, 'master')
        .post('/users')
        .send({ email, name: 'Planted', password: 'attacker chosen passphrase', emailVerified: true });
      expect(planted.status).toBe(201);
      const users = t.app.get(UserRepository);
      const config = t.app.get(AppConfig);
      // The bootstrap acts only while master has no super-admin: stand in for that state.
      const existsWithRole = jest.spyOn(users, 'existsWithRole').mockResolvedValue(false);
      Object.assign(config, { bootstrapAdminEmail: email, bootstrapAdminPassword: 'the operator passphrase for root' });
      try {
        await expect(t.app.get(BootstrapUseCase).execute()).resolves.toEqual({ bootstrapAdmin: 'exists' });
      } finally {
        existsWithRole.mockRestore();
      }
      expect((await users.findById('master', planted.body.user.id))!.roles).toEqual([]);
      const again = await login(t, email, 'attacker chosen passphrase', {}, 'master');
      expect((await adminApi(t, again.body.tokens.accessToken, 'master').get('/realms')).status).toBe(403);
    });
  });
});
