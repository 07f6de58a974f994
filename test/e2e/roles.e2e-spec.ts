import { Client } from 'pg';
import { RealmRolesAndAppMetadata1764290000000 } from '../../migrations/1764290000000-realm-roles-and-app-metadata';
import { ADMIN_ENV, adminApi, createRealm, createUser, storedEvents, superAdmin, SignedIn } from '../support/admin-flows';
import { bearer } from '../support/flows';
import { decodeJwt } from '../support/mfa';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Realm roles and app metadata: administrators define roles, assign them and attach metadata;
 * `/me` shows both and access tokens carry them from the next refresh, so backends authorise
 * from the token alone.
 */
describe('realm roles and app metadata', () => {
  let t: TestApp;
  let root: SignedIn;
  let admin: SignedIn;
  let api: ReturnType<typeof adminApi>;

  const errorOf = (res: { status: number; body: { error?: { code: string } } }) => [res.status, res.body.error?.code];
  const me = (user: SignedIn, realm = 'school') =>
    t
      .api()
      .get('/api/v1/auth/me')
      .set('X-Realm-Id', realm)
      .set(...bearer(user.accessToken));
  /** Refreshes `user` in place; returns the new access token's claims. */
  const refreshed = async (user: SignedIn, realm = 'school') => {
    const res = await t.api().post('/api/v1/auth/refresh').set('X-Realm-Id', realm).send({ refreshToken: user.refreshToken });
    expect(res.status).toBe(200);
    user.accessToken = res.body.tokens.accessToken;
    user.refreshToken = res.body.tokens.refreshToken;
    return decodeJwt(user.accessToken);
  };

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    root = await superAdmin(t);
    await createRealm(t, root.accessToken, 'school');
    await createRealm(t, root.accessToken, 'other');
    admin = await createUser(t, root.accessToken, 'school', { roles: ['realm-admin'] });
    api = adminApi(t, admin.accessToken, 'school');
  });
  afterAll(async () => t.close());

  describe('defining roles', () => {
    it('lists the built-in realm-admin, then defined roles by name; audited as role.created', async () => {
      const created = await api.post('/roles').send({ name: 'teacher', description: 'Grades the classes they teach' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        role: { name: 'teacher', description: 'Grades the classes they teach', builtIn: false, createdAt: expect.stringMatching(/Z$/) },
      });
      expect((await api.post('/roles').send({ name: 'billing:read' })).body.role).toMatchObject({ description: null });
      const list = await api.get('/roles');
      expect(list.status).toBe(200);
      expect(list.body.roles.map((r: { name: string; builtIn: boolean }) => [r.name, r.builtIn])).toEqual([
        ['realm-admin', true],
        ['billing:read', false],
        ['teacher', false],
      ]);
      expect(await storedEvents(t, 'school', { type: 'role.created' })).toEqual([
        expect.objectContaining({ actor_id: admin.id, details: { name: 'teacher', description: 'Grades the classes they teach' } }),
        expect.objectContaining({ actor_id: admin.id, details: { name: 'billing:read', description: null } }),
      ]);
    });

    it('lists super-admin as built in only in master, both dated as their realm', async () => {
      const [master] = (await t.dataSource.query(`SELECT created_at FROM realms WHERE id = 'master'`)) as { created_at: Date }[];
      const list = await adminApi(t, root.accessToken, 'master').get('/roles');
      expect(list.body.roles).toEqual([
        { name: 'realm-admin', description: 'Administers this realm', builtIn: true, createdAt: master.created_at.toISOString() },
        { name: 'super-admin', description: 'Administers every realm', builtIn: true, createdAt: master.created_at.toISOString() },
      ]);
    });

    it.each([
      ['a name taken in the realm', { name: 'teacher' }, 409, 'ROLE_EXISTS'],
      ['a built-in name', { name: 'realm-admin' }, 409, 'ROLE_EXISTS'],
      ['super-admin, even outside master', { name: 'super-admin' }, 409, 'ROLE_EXISTS'],
      ['an upper-case name', { name: 'Teacher' }, 400, 'VALIDATION_FAILED'],
      ['a 65-character name', { name: `t${'x'.repeat(64)}` }, 400, 'VALIDATION_FAILED'],
      ['a missing name', { description: 'x' }, 400, 'VALIDATION_FAILED'],
      ['an unknown field', { name: 'ok-name', builtIn: true }, 400, 'VALIDATION_FAILED'],
      ['a description over 200 characters', { name: 'ok-name', description: 'x'.repeat(201) }, 400, 'VALIDATION_FAILED'],
    ])('refuses %s', async (_what, body, status, code) => {
      const res = await api.post('/roles').send(body);
      expect(errorOf(res)).toEqual([status, code]);
      if (status === 400) expect(res.body.error.details).toEqual([expect.objectContaining({ field: expect.any(String) })]);
      expect((await api.get('/roles')).body.roles.some((r: { name: string }) => r.name === 'ok-name')).toBe(false);
    });

    it("keeps each realm's roles to itself", async () => {
      const other = adminApi(t, root.accessToken, 'other');
      expect((await other.get('/roles')).body.roles.map((r: { name: string }) => r.name)).toEqual(['realm-admin']);
      // The same name is free in another realm, and deleting it there leaves this realm's alone.
      expect((await other.post('/roles').send({ name: 'teacher' })).status).toBe(201);
      expect((await other.delete('/roles/teacher')).status).toBe(200);
      expect((await api.get('/roles')).body.roles.map((r: { name: string }) => r.name)).toContain('teacher');
      // A realm-admin of school reaches no other realm's roles.
      expect(errorOf(await adminApi(t, admin.accessToken, 'other').get('/roles'))).toEqual([403, 'FORBIDDEN']);
      expect(errorOf(await adminApi(t, admin.accessToken, 'other').post('/roles').send({ name: 'x' }))).toEqual([403, 'FORBIDDEN']);
    });
  });

  describe('assigning roles and metadata', () => {
    it('assigns defined roles only: an unknown one is 400 naming it, and nothing changes', async () => {
      const pupil = await createUser(t, admin.accessToken, 'school');
      const refused = await api.put(`/users/${pupil.id}/roles`).send({ roles: ['teacher', 'headmaster'] });
      expect(errorOf(refused)).toEqual([400, 'VALIDATION_FAILED']);
      expect(refused.body.error.details).toEqual([
        { field: 'roles', message: '"headmaster" is not a role of this realm; define it first' },
      ]);
      expect((await api.get(`/users/${pupil.id}`)).body.user.roles).toEqual([]);
      // Defined in another realm is not defined here.
      await adminApi(t, root.accessToken, 'other').post('/roles').send({ name: 'headmaster' });
      expect(errorOf(await api.put(`/users/${pupil.id}/roles`).send({ roles: ['headmaster'] }))).toEqual([400, 'VALIDATION_FAILED']);
      // Creating a user takes the same rule.
      expect(errorOf(await api.post('/users').send({ email: 'x@school.example', name: 'X', roles: ['headmaster'] }))).toEqual([
        400,
        'VALIDATION_FAILED',
      ]);
      const ok = await api.put(`/users/${pupil.id}/roles`).send({ roles: ['teacher', 'billing:read'] });
      expect(ok.status).toBe(200);
      expect(ok.body.user.roles).toEqual(['teacher', 'billing:read']);
    });

    it('shows roles and metadata in /me and the admin views, and puts them in the next token, not the current one', async () => {
      const user = await createUser(t, admin.accessToken, 'school');
      expect(decodeJwt(user.accessToken)).not.toHaveProperty('app_metadata');
      expect((await api.put(`/users/${user.id}/roles`).send({ roles: ['teacher'] })).status).toBe(200);
      const metadata = { schoolId: 'north-42', classes: ['5a', '6b'], limits: { grades: { perDay: 40 } } };
      const set = await api.put(`/users/${user.id}/app-metadata`).send({ appMetadata: metadata });
      expect(set.status).toBe(200);
      expect(set.body.user).toMatchObject({ roles: ['teacher'], appMetadata: metadata });
      expect((await me(user)).body.user).toMatchObject({ roles: ['teacher'], appMetadata: metadata });
      expect((await api.get(`/users/${user.id}`)).body.user.appMetadata).toEqual(metadata);
      const listed = (await api.get('/users?limit=100')).body.users.find((u: { id: string }) => u.id === user.id);
      expect(listed).toMatchObject({ roles: ['teacher'], appMetadata: metadata });
      // The token in hand says what was true when it was issued …
      expect(decodeJwt(user.accessToken)).toMatchObject({ roles: [] });
      // … the refreshed one says what is true now.
      const claims = await refreshed(user);
      expect(claims).toMatchObject({ roles: ['teacher'], app_metadata: metadata });
      expect(await storedEvents(t, 'school', { userId: user.id, type: 'user.app_metadata_changed' })).toEqual([
        expect.objectContaining({ actor_id: admin.id, details: { before: {}, after: metadata } }),
      ]);
      // {} clears it, and the claim is gone from the next token.
      expect((await api.put(`/users/${user.id}/app-metadata`).send({ appMetadata: {} })).body.user.appMetadata).toEqual({});
      expect(await refreshed(user)).not.toHaveProperty('app_metadata');
    });

    it.each([
      ['1025 bytes serialised', { k: 'x'.repeat(1025 - '{"k":""}'.length) }, 'must be at most 1024 bytes serialised (it is 1025)'],
      [
        'a 4th level of nesting',
        { a: { b: { c: { d: {} } } } },
        'must nest at most 3 levels of objects or arrays (appMetadata.a.b.c.d is deeper)',
      ],
      ['an array', ['a'], 'must be an object'],
      ['a string', 'text', 'must be an object'],
    ])('refuses metadata of %s with 400 and details, storing nothing', async (_what, appMetadata, message) => {
      const user = await createUser(t, admin.accessToken, 'school');
      await api.put(`/users/${user.id}/app-metadata`).send({ appMetadata: { kept: true } });
      const res = await api.put(`/users/${user.id}/app-metadata`).send({ appMetadata });
      expect(errorOf(res)).toEqual([400, 'VALIDATION_FAILED']);
      expect(res.body.error.details).toEqual([{ field: 'appMetadata', message }]);
      expect((await api.get(`/users/${user.id}`)).body.user.appMetadata).toEqual({ kept: true });
    });

    it('accepts exactly 1024 bytes and 3 levels, and refuses __proto__, constructor and prototype keys rather than drop them', async () => {
      const user = await createUser(t, admin.accessToken, 'school');
      const exact = { k: 'x'.repeat(1024 - '{"k":""}'.length) };
      expect((await api.put(`/users/${user.id}/app-metadata`).send({ appMetadata: exact })).status).toBe(200);
      const deep = { a: { b: [{ c: 1 }] } };
      expect((await api.put(`/users/${user.id}/app-metadata`).send({ appMetadata: deep })).body.user.appMetadata).toEqual(deep);
      const res = await api
        .put(`/users/${user.id}/app-metadata`)
        .set('Content-Type', 'application/json')
        .send('{"appMetadata":{"__proto__":{"polluted":true},"plan":"pro"}}');
      expect(errorOf(res)).toEqual([400, 'VALIDATION_FAILED']);
      expect(res.body.error.details).toEqual([
        { field: 'appMetadata.__proto__', message: 'is a reserved key (__proto__, constructor and prototype are refused)' },
      ]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      for (const key of ['constructor', 'prototype']) {
        const nested = await api.put(`/users/${user.id}/app-metadata`).send({ appMetadata: { a: [{ [key]: 'x' }] } });
        expect(errorOf(nested)).toEqual([400, 'VALIDATION_FAILED']);
        expect(nested.body.error.details[0].field).toBe(`appMetadata.a[0].${key}`);
      }
      expect((await api.get(`/users/${user.id}`)).body.user.appMetadata).toEqual(deep);
    });

    it('lets no plain user write roles or metadata, not even their own (403), nor define roles', async () => {
      const user = await createUser(t, admin.accessToken, 'school');
      const own = adminApi(t, user.accessToken, 'school');
      expect(errorOf(await own.put(`/users/${user.id}/roles`).send({ roles: ['teacher'] }))).toEqual([403, 'FORBIDDEN']);
      expect(errorOf(await own.put(`/users/${user.id}/app-metadata`).send({ appMetadata: { a: 1 } }))).toEqual([403, 'FORBIDDEN']);
      expect(errorOf(await own.post('/roles').send({ name: 'self-made' }))).toEqual([403, 'FORBIDDEN']);
      expect(errorOf(await own.delete('/roles/teacher'))).toEqual([403, 'FORBIDDEN']);
      // The account API has no way to it either: unknown fields are refused.
      const patched = await t
        .api()
        .post('/api/v1/auth/password/change')
        .set('X-Realm-Id', 'school')
        .set(...bearer(user.accessToken))
        .send({ currentPassword: 'x', newPassword: 'y', appMetadata: { a: 1 } });
      expect(errorOf(patched)).toEqual([400, 'VALIDATION_FAILED']);
      expect((await me(user)).body.user).toMatchObject({ roles: [], appMetadata: {} });
    });

    it('answers 404 USER_NOT_FOUND for a user of another realm', async () => {
      const elsewhere = await createUser(t, root.accessToken, 'other');
      expect(errorOf(await api.put(`/users/${elsewhere.id}/roles`).send({ roles: [] }))).toEqual([404, 'USER_NOT_FOUND']);
      expect(errorOf(await api.put(`/users/${elsewhere.id}/app-metadata`).send({ appMetadata: {} }))).toEqual([404, 'USER_NOT_FOUND']);
    });
  });

  describe('deleting roles', () => {
    it('takes the role from every holder in the realm at once; the next token no longer carries it', async () => {
      expect((await api.post('/roles').send({ name: 'librarian' })).status).toBe(201);
      const holders = [await createUser(t, admin.accessToken, 'school'), await createUser(t, admin.accessToken, 'school')];
      for (const holder of holders) await api.put(`/users/${holder.id}/roles`).send({ roles: ['librarian', 'teacher'] });
      expect(await refreshed(holders[0])).toMatchObject({ roles: ['librarian', 'teacher'] });
      await adminApi(t, root.accessToken, 'other').post('/roles').send({ name: 'librarian' });
      const outsider = await createUser(t, root.accessToken, 'other', { roles: ['librarian'] });

      const deleted = await api.delete('/roles/librarian');
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ success: true });
      for (const holder of holders) expect((await api.get(`/users/${holder.id}`)).body.user.roles).toEqual(['teacher']);
      expect(await refreshed(holders[0])).toMatchObject({ roles: ['teacher'] });
      expect((await api.get('/roles')).body.roles.map((r: { name: string }) => r.name)).not.toContain('librarian');
      expect((await adminApi(t, root.accessToken, 'other').get(`/users/${outsider.id}`)).body.user.roles).toEqual(['librarian']);
      expect(await storedEvents(t, 'school', { type: 'role.deleted' })).toEqual([
        expect.objectContaining({ actor_id: admin.id, details: { name: 'librarian', users: 2 } }),
      ]);
      // Gone: assigning it is refused, deleting it again is 404.
      expect(errorOf(await api.put(`/users/${holders[1].id}/roles`).send({ roles: ['librarian'] }))).toEqual([400, 'VALIDATION_FAILED']);
      expect(errorOf(await api.delete('/roles/librarian'))).toEqual([404, 'ROLE_NOT_FOUND']);
    });

    // Two connections are needed to hold a row lock from outside: the embedded database has one.
    (process.env.DATABASE_URL ? it : it.skip)('never leaves a user holding a role deleted while it was being assigned', async () => {
      expect((await api.post('/roles').send({ name: 'racing' })).status).toBe(201);
      const user = await createUser(t, admin.accessToken, 'school');
      // Another connection holds the user's row: the assignment checks the role, then waits here.
      const holder = t.dataSource.createQueryRunner();
      await holder.startTransaction();
      let deleted: Promise<{ status: number }> | undefined;
      try {
        await holder.query(`SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, [user.id]);
        const assigned = api
          .put(`/users/${user.id}/roles`)
          .send({ roles: ['racing'] })
          .then((res) => res);
        await waitForLockWaiters(holder, 1);
        // The deletion comes while the assignment is between its check and its write.
        deleted = api.delete('/roles/racing').then((res) => res);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await holder.commitTransaction();
        expect((await assigned).status).toBe(200);
        expect((await deleted).status).toBe(200);
      } finally {
        if (holder.isTransactionActive) await holder.rollbackTransaction();
        await holder.release();
      }
      expect((await api.get(`/users/${user.id}`)).body.user.roles).toEqual([]);
    });

    it.each([
      ['realm-admin', 'school'],
      ['super-admin', 'master'],
    ])('refuses to delete the built-in %s with 409 INVALID_USER_STATE', async (name, realm) => {
      expect(errorOf(await adminApi(t, root.accessToken, realm).delete(`/roles/${name}`))).toEqual([409, 'INVALID_USER_STATE']);
    });
  });

  describe("master's boundary", () => {
    let masterAdmin: SignedIn;
    beforeAll(async () => {
      masterAdmin = await createUser(t, root.accessToken, 'master', { roles: ['realm-admin'] });
    });

    it("lets a realm-admin of master read master's roles but not define or delete them", async () => {
      const masterApi = adminApi(t, masterAdmin.accessToken, 'master');
      expect((await masterApi.get('/roles')).status).toBe(200);
      expect(errorOf(await masterApi.post('/roles').send({ name: 'ops' }))).toEqual([403, 'FORBIDDEN']);
      expect((await adminApi(t, root.accessToken, 'master').post('/roles').send({ name: 'ops' })).status).toBe(201);
      expect(errorOf(await masterApi.delete('/roles/ops'))).toEqual([403, 'FORBIDDEN']);
      expect((await masterApi.get('/roles')).body.roles.map((r: { name: string }) => r.name)).toContain('ops');
    });

    it("refuses a realm-admin of master on a super-admin's roles and metadata", async () => {
      const masterApi = adminApi(t, masterAdmin.accessToken, 'master');
      expect(errorOf(await masterApi.put(`/users/${root.id}/roles`).send({ roles: ['super-admin', 'ops'] }))).toEqual([403, 'FORBIDDEN']);
      expect(errorOf(await masterApi.put(`/users/${root.id}/app-metadata`).send({ appMetadata: { a: 1 } }))).toEqual([403, 'FORBIDDEN']);
      const unchanged = (await adminApi(t, root.accessToken, 'master').get(`/users/${root.id}`)).body.user;
      expect(unchanged).toMatchObject({ roles: ['super-admin'], appMetadata: {} });
    });
  });

  it('reads nothing more for /me and refresh of a user with 10 roles and 1 KiB of metadata than for a user with none', async () => {
    const names = Array.from({ length: 10 }, (_, i) => `app:role-${i}`);
    for (const name of names) await api.post('/roles').send({ name });
    const plain = await createUser(t, admin.accessToken, 'school');
    const user = await createUser(t, admin.accessToken, 'school', { roles: names });
    const metadata = { tenant: 'north-42', note: 'x'.repeat(1024 - '{"tenant":"north-42","note":""}'.length) };
    expect((await api.put(`/users/${user.id}/app-metadata`).send({ appMetadata: metadata })).status).toBe(200);
    expect(await refreshed(user)).toMatchObject({ roles: names, app_metadata: metadata });
    const statements = jest.spyOn(Client.prototype, 'query');
    /** Statements of the request itself: the realm and signing-key caches refill on their own clock. */
    const own = (): number =>
      statements.mock.calls.filter(([query]) => {
        const text = typeof query === 'string' ? query : ((query as { text?: string }).text ?? '');
        return !/\bFROM (realms|signing_keys)\b/.test(text);
      }).length;
    /** Statements PostgreSQL sees for a warm /me, then for a refresh. */
    const counted = async (who: SignedIn) => {
      expect((await me(who)).status).toBe(200);
      statements.mockClear();
      const res = await me(who);
      const meStatements = own();
      statements.mockClear();
      const claims = await refreshed(who);
      return { me: meStatements, refresh: own(), user: res.body.user, claims };
    };
    try {
      const baseline = await counted(plain);
      const loaded = await counted(user);
      expect(loaded.user).toMatchObject({ roles: names, appMetadata: metadata });
      expect(loaded.claims).toMatchObject({ roles: names, app_metadata: metadata });
      if (t.config.databaseUrl) {
        expect(baseline.me).toBeGreaterThan(0);
        expect([loaded.me, loaded.refresh]).toEqual([baseline.me, baseline.refresh]);
      }
    } finally {
      statements.mockRestore();
    }
  });

  it('defines, by migration, every role already assigned in each realm, so no assignment is lost', async () => {
    const user = await createUser(t, admin.accessToken, 'school');
    const other = await createUser(t, root.accessToken, 'other');
    await api.post('/roles').send({ name: 'curator' });
    await createUser(t, admin.accessToken, 'school', { roles: ['curator'] });
    const migration = new RealmRolesAndAppMetadata1764290000000();
    const runner = t.dataSource.createQueryRunner();
    // One session throughout (the embedded database has one).
    await runner.startTransaction();
    try {
      await migration.down(runner);
      // As an earlier version stored them: any well-formed name, nothing defined.
      await runner.query(`UPDATE users SET roles = $2 WHERE id = $1`, [user.id, ['legacy-editor', 'realm-admin']]);
      await runner.query(`UPDATE users SET roles = $2 WHERE id = $1`, [other.id, ['legacy-editor', 'legacy-viewer']]);
      await migration.up(runner);
      await runner.commitTransaction();
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
    const defined: { realm_id: string; name: string }[] = await t.dataSource.query(
      `SELECT realm_id, name FROM realm_roles WHERE name LIKE 'legacy-%' ORDER BY realm_id, name`,
    );
    expect(defined).toEqual([
      { realm_id: 'other', name: 'legacy-editor' },
      { realm_id: 'other', name: 'legacy-viewer' },
      { realm_id: 'school', name: 'legacy-editor' },
    ]);
    // Every role held before the upgrade is a defined role after it.
    const names = (await api.get('/roles')).body.roles.map((r: { name: string }) => r.name);
    expect(names).toEqual(expect.arrayContaining(['realm-admin', 'curator', 'legacy-editor']));
    expect((await api.put(`/users/${user.id}/roles`).send({ roles: ['legacy-editor'] })).status).toBe(200);
  });
});

/** Waits until `count` other sessions wait for a lock that the session of `runner` holds. */
async function waitForLockWaiters(runner: { query(sql: string): Promise<{ n: number }[]> }, count: number): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    const [{ n }] = await runner.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))`,
    );
    if (n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no ${count} lock waiter(s) after 2 s`);
}
