import { randomUUID } from 'node:crypto';
import { ADMIN_ENV, adminApi, createRealm, createUser, SignedIn, storedEvents, superAdmin } from '../support/admin-flows';
import { bearer, login, PASSWORD, register, signedInUser, uniqueEmail } from '../support/flows';
import { addSoftKey, userWithTotp } from '../support/mfa';
import { createTestApp, TestApp } from '../support/test-app';

// Booting the app on a fresh database takes seconds on a busy machine.
jest.setTimeout(120_000);

const USER_SHAPE = {
  id: expect.any(String),
  email: expect.any(String),
  emailVerified: expect.any(Boolean),
  profile: { firstName: expect.any(String), lastName: expect.any(String), avatar: null },
  mfa: { enabled: expect.any(Boolean), methods: expect.any(Array) },
  status: expect.stringMatching(/^(active|suspended|locked)$/),
  roles: expect.any(Array),
  appMetadata: {},
  hasPassword: expect.any(Boolean),
  identities: expect.any(Array),
  createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
  lastLoginAt: null,
};

function errorOf(res: { status: number; body: { error?: { code: string } } }) {
  return [res.status, res.body.error?.code];
}

async function wrongPasswords(t: TestApp, email: string, n: number, realm = 'default') {
  for (let i = 0; i < n; i += 1) {
    const res = await login(t, email, 'definitely the wrong password', {}, realm);
    expect(res.status).toBe(401);
  }
}

describe('admin users', () => {
  let t: TestApp;
  let root: SignedIn;
  let admin: SignedIn;
  let api: ReturnType<typeof adminApi>;

  beforeAll(async () => {
    t = await createTestApp({ env: { ...ADMIN_ENV, LOCKOUT_MAX_FAILURES: '3', LOCKOUT_DURATION_SECONDS: '600' } });
    root = await superAdmin(t);
    admin = await createUser(t, root.accessToken, 'default', { roles: ['realm-admin'] });
    api = adminApi(t, admin.accessToken, 'default');
    expect((await api.post('/roles').send({ name: 'auditor' })).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /users', () => {
    const realm = 'listing';
    let list: ReturnType<typeof adminApi>;
    const people: Record<string, string> = {};

    beforeAll(async () => {
      await createRealm(t, root.accessToken, realm);
      list = adminApi(t, root.accessToken, realm);
      // Created one second apart, so createdAt orders them: carol, alice, bob, dave, erin.
      const specs = [
        ['carol', 'carol.jones@example.com', 'Carol Jones', false],
        ['alice', 'alice.smith@example.com', 'Alice Smith', true],
        ['bob', 'bob@builders.example', 'Bob Builder', false],
        ['dave', 'dave_50%@example.com', 'Dave Fifty', true],
        ['erin', 'erin@example.com', 'Erin Jones', false],
      ] as const;
      for (const [key, email, name, emailVerified] of specs) {
        t.clock.advance(1);
        const res = await list.post('/users').send({ email, name, password: PASSWORD, emailVerified });
        expect(res.status).toBe(201);
        people[key] = res.body.user.id;
      }
      // alice and erin have logged in (erin later); bob is suspended; dave is locked.
      t.clock.advance(1);
      expect((await login(t, 'alice.smith@example.com', PASSWORD, {}, realm)).status).toBe(200);
      t.clock.advance(1);
      expect((await login(t, 'erin@example.com', PASSWORD, {}, realm)).status).toBe(200);
      expect((await list.post(`/users/${people.bob}/suspend`).send({})).status).toBe(200);
      await wrongPasswords(t, 'dave_50%@example.com', 3, realm);
    });

    const emails = (res: { body: { users: { email: string }[] } }) => res.body.users.map((u) => u.email);

    it("lists the realm's users newest first with the full User resource and pagination", async () => {
      const res = await list.get('/users');
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['pagination', 'users']);
      expect(res.body.pagination).toEqual({ total: 5, page: 1, limit: 20 });
      expect(emails(res)).toEqual([
        'erin@example.com',
        'dave_50%@example.com',
        'bob@builders.example',
        'alice.smith@example.com',
        'carol.jones@example.com',
      ]);
      const alice = res.body.users.find((u: { id: string }) => u.id === people.alice);
      expect(alice).toEqual({
        id: people.alice,
        email: 'alice.smith@example.com',
        emailVerified: true,
        profile: { firstName: 'Alice', lastName: 'Smith', avatar: null },
        mfa: { enabled: false, methods: [] },
        status: 'active',
        roles: [],
        appMetadata: {},
        hasPassword: true,
        identities: [],
        createdAt: expect.stringMatching(/Z$/),
        lastLoginAt: expect.stringMatching(/Z$/),
      });
      for (const user of res.body.users) expect(Object.keys(user).sort()).toEqual(Object.keys(USER_SHAPE).sort());
      expect(res.body.users.find((u: { id: string }) => u.id === people.carol).lastLoginAt).toBeNull();
    });

    it('pages with page and limit, and answers past the end with an empty page and the total', async () => {
      const second = await list.get('/users?page=2&limit=2');
      expect(emails(second)).toEqual(['bob@builders.example', 'alice.smith@example.com']);
      expect(second.body.pagination).toEqual({ total: 5, page: 2, limit: 2 });
      const beyond = await list.get('/users?page=4&limit=2');
      expect(beyond.body).toEqual({ users: [], pagination: { total: 5, page: 4, limit: 2 } });
    });

    it.each([
      ['createdAt', ['carol', 'alice', 'bob', 'dave', 'erin']],
      ['-createdAt', ['erin', 'dave', 'bob', 'alice', 'carol']],
      ['email', ['alice', 'bob', 'carol', 'dave', 'erin']],
      ['-email', ['erin', 'dave', 'carol', 'bob', 'alice']],
      ['lastLoginAt', ['carol', 'bob', 'dave', 'alice', 'erin']],
      ['-lastLoginAt', ['erin', 'alice', 'dave', 'bob', 'carol']],
    ])('sorts by %s', async (sort, order) => {
      const res = await list.get(`/users?sort=${encodeURIComponent(sort)}`);
      expect(res.status).toBe(200);
      const ids = res.body.users.map((u: { id: string }) => u.id);
      if (sort.includes('lastLoginAt')) {
        // Never-logged-in users tie on null; their order among themselves follows id.
        const logged = order.filter((k) => ['alice', 'erin'].includes(k)).map((k) => people[k]);
        expect(ids.filter((id: string) => logged.includes(id))).toEqual(logged);
        expect(sort.startsWith('-') ? ids.slice(0, 2) : ids.slice(3)).toEqual(logged);
      } else {
        expect(ids).toEqual(order.map((k) => people[k]));
      }
    });

    it.each([
      ['JONES', ['erin', 'carol']],
      ['builders', ['bob']],
      ['Smith', ['alice']],
      ['Builder', ['bob']],
      ['50%', ['dave']],
      ['%', ['dave']],
      ['_', ['dave']],
      ['nobody-matches', []],
      ['ALICE.SMITH@EXAMPLE', ['alice']],
      ['ob buil', ['bob']],
    ])('searches email and name case-insensitively and literally: %s', async (search, expected) => {
      const res = await list.get(`/users?search=${encodeURIComponent(search)}`);
      expect(res.status).toBe(200);
      expect(res.body.users.map((u: { id: string }) => u.id)).toEqual(expected.map((k) => people[k]));
      expect(res.body.pagination.total).toBe(expected.length);
    });

    it.each([
      ['status=suspended', ['bob']],
      ['status=locked', ['dave']],
      ['status=active', ['erin', 'alice', 'carol']],
      ['emailVerified=true', ['dave', 'alice']],
      ['emailVerified=false', ['erin', 'bob', 'carol']],
      ['emailVerified=false&status=active&search=jones&sort=email', ['carol', 'erin']],
    ])('filters by %s', async (query, expected) => {
      const res = await list.get(`/users?${query}`);
      expect(res.status).toBe(200);
      expect(res.body.users.map((u: { id: string }) => u.id)).toEqual(expected.map((k) => people[k]));
      expect(res.body.pagination.total).toBe(expected.length);
    });

    it('finds non-ASCII names and emails whatever the case and the Unicode form of the term', async () => {
      const created = await list.post('/users').send({ email: 'zoë@example.org', name: 'Zoë Ångström', password: PASSWORD });
      expect(created.status).toBe(201);
      try {
        for (const term of ['ÅNGSTRÖM', 'zoë å', 'ZOË@', 'zoe\u0308@']) {
          const res = await list.get(`/users?search=${encodeURIComponent(term)}`);
          expect({ term, ids: res.body.users.map((u: { id: string }) => u.id) }).toEqual({ term, ids: [created.body.user.id] });
        }
      } finally {
        expect((await list.delete(`/users/${created.body.user.id}`)).status).toBe(200);
      }
    });

    it.each(['createdAt', '-createdAt', 'email', '-email', 'lastLoginAt', '-lastLoginAt'])(
      'orders and pages the matches of a search as the whole list: sort=%s',
      async (sort) => {
        const whole = await list.get(`/users?sort=${encodeURIComponent(sort)}`);
        const pages = await Promise.all(
          [1, 2, 3].map((page) => list.get(`/users?search=example&sort=${encodeURIComponent(sort)}&limit=2&page=${page}`)),
        );
        expect(pages.map((res) => res.body.pagination.total)).toEqual([5, 5, 5]);
        const paged = pages.flatMap((res) => res.body.users);
        expect(paged).toEqual(whole.body.users);
      },
    );

    it('pages through search results, and a page past the end keeps the total', async () => {
      const pages = await Promise.all([1, 2, 3].map((page) => list.get(`/users?search=JONES&sort=email&limit=1&page=${page}`)));
      expect(pages.map((res) => res.status)).toEqual([200, 200, 200]);
      expect(pages.map((res) => res.body.users.map((u: { id: string }) => u.id))).toEqual([[people.carol], [people.erin], []]);
      expect(pages.map((res) => res.body.pagination)).toEqual([1, 2, 3].map((page) => ({ total: 2, page, limit: 1 })));
    });

    it('shows a lock that has run out as active, in the list and in the status filter', async () => {
      t.clock.advance(601);
      try {
        const active = await list.get('/users?status=active');
        expect(active.body.users.map((u: { id: string }) => u.id)).toContain(people.dave);
        expect((await list.get('/users?status=locked')).body.users).toEqual([]);
      } finally {
        // The lock is over either way; lock dave again for the other tests of this block.
        await wrongPasswords(t, 'dave_50%@example.com', 3, realm);
      }
    });

    it.each([
      ['page=0'],
      ['page=-1'],
      ['page=abc'],
      ['page=1.5'],
      ['limit=0'],
      ['limit=101'],
      ['limit=ten'],
      ['sort=name'],
      ['status=deleted'],
      ['emailVerified=yes'],
      ['unknown=1'],
      [`search=${'x'.repeat(255)}`],
    ])('refuses %s with 400 VALIDATION_FAILED', async (query) => {
      const res = await list.get(`/users?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, details: expect.any(Array) });
    });

    it("accepts limit=100 and never lists another realm's users", async () => {
      const res = await list.get('/users?limit=100');
      expect(res.body.pagination).toEqual({ total: 5, page: 1, limit: 100 });
      const inDefault = await api.get('/users?limit=100');
      expect(inDefault.body.users.map((u: { id: string }) => u.id)).not.toEqual(expect.arrayContaining([people.alice]));
    });
  });

  describe('POST /users', () => {
    it('creates a user with a password: 201 with the User, able to log in, audited with the admin as actor', async () => {
      const email = uniqueEmail('created');
      const res = await api.post('/users').send({
        email: `  ${email.toUpperCase()} `,
        name: 'Grace Brewster Hopper',
        password: PASSWORD,
        emailVerified: true,
        roles: ['auditor', 'auditor'],
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        user: {
          id: expect.any(String),
          email,
          emailVerified: true,
          profile: { firstName: 'Grace', lastName: 'Brewster Hopper', avatar: null },
          mfa: { enabled: false, methods: [] },
          status: 'active',
          roles: ['auditor'],
          appMetadata: {},
          hasPassword: true,
          identities: [],
          createdAt: expect.any(String),
          lastLoginAt: null,
        },
      });
      expect((await login(t, email, PASSWORD)).status).toBe(200);
      const events = await storedEvents(t, 'default', { userId: res.body.user.id, type: 'user.created' });
      expect(events).toEqual([
        expect.objectContaining({ actor_id: admin.id, details: expect.objectContaining({ invited: false, roles: ['auditor'] }) }),
      ]);
      const outbox: unknown[] = await t.dataSource.query(`SELECT 1 FROM email_outbox WHERE recipient = $1`, [email]);
      expect(outbox).toHaveLength(0);
    });

    it('creates a user without a password and queues an invitation to choose one; the user cannot log in yet', async () => {
      const email = uniqueEmail('invited');
      const res = await api.post('/users').send({ email, name: 'Invited Person' });
      expect(res.status).toBe(201);
      expect(res.body.user).toMatchObject({ email, emailVerified: false, status: 'active', roles: [], hasPassword: false, identities: [] });
      const listed = await api.get('/users').query({ search: email });
      expect(listed.body.users).toEqual([expect.objectContaining({ id: res.body.user.id, hasPassword: false, identities: [] })]);
      const outbox: { text_body: string }[] = await t.dataSource.query(`SELECT text_body FROM email_outbox WHERE recipient = $1`, [email]);
      expect(outbox).toHaveLength(1);
      expect(outbox[0].text_body).toMatch(/\/reset-password\?token=[A-Za-z0-9_-]{43}/);
      const tokens: { kind: string }[] = await t.dataSource.query(
        `SELECT kind FROM one_time_tokens WHERE user_id = $1 AND used_at IS NULL`,
        [res.body.user.id],
      );
      expect(tokens).toEqual([{ kind: 'password_reset' }]);
      const attempt = await login(t, email, PASSWORD);
      expect(errorOf(attempt)).toEqual([401, 'INVALID_CREDENTIALS']);
      const events = await storedEvents(t, 'default', { userId: res.body.user.id, type: 'user.created' });
      expect(events[0].details).toMatchObject({ invited: true });
    });

    it('answers 409 EMAIL_ALREADY_REGISTERED for an address of the realm in any case, but allows it in another realm', async () => {
      const { email } = await register(t);
      const res = await api.post('/users').send({ email: email.toUpperCase(), name: 'Dup', password: PASSWORD });
      expect(errorOf(res)).toEqual([409, 'EMAIL_ALREADY_REGISTERED']);
      const elsewhere = await adminApi(t, root.accessToken, 'master')
        .post('/users')
        .send({ email, name: 'Same Address', password: PASSWORD });
      expect(elsewhere.status).toBe(201);
    });

    it.each([
      ['an invalid email', { email: 'nope', name: 'N' }, 'email'],
      ['a missing name', { email: 'n1@example.com' }, 'name'],
      ['an empty name', { email: 'n2@example.com', name: '  ' }, 'name'],
      ['a common password', { email: 'n3@example.com', name: 'N', password: 'password1234' }, 'password'],
      ['a 7-character password', { email: 'n4@example.com', name: 'N', password: 'abcdefg' }, 'password'],
      ['a malformed role', { email: 'n5@example.com', name: 'N', roles: ['Realm Admin'] }, 'roles'],
      ['roles not an array', { email: 'n6@example.com', name: 'N', roles: 'realm-admin' }, 'roles'],
      ['emailVerified not a boolean', { email: 'n7@example.com', name: 'N', emailVerified: 'true' }, 'emailVerified'],
      ['a status (mass assignment)', { email: 'n8@example.com', name: 'N', status: 'active' }, 'status'],
      ['an mfaEnabled (mass assignment)', { email: 'n9@example.com', name: 'N', mfaEnabled: true }, 'mfaEnabled'],
      ['a realmId (mass assignment)', { email: 'n10@example.com', name: 'N', realmId: 'master' }, 'realmId'],
      ['an id (mass assignment)', { email: 'n11@example.com', name: 'N', id: randomUUID() }, 'id'],
    ])('refuses %s with 400 VALIDATION_FAILED naming the field, creating nothing', async (_what, body, field) => {
      const res = await api.post('/users').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      const rows: unknown[] = await t.dataSource.query(`SELECT 1 FROM users WHERE email = $1`, [String(body.email)]);
      expect(rows).toHaveLength(0);
    });
  });

  describe('GET /users/:id', () => {
    it('returns the user', async () => {
      const user = await signedInUser(t);
      const res = await api.get(`/users/${user.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        user: expect.objectContaining({ id: user.id, email: user.email, status: 'active', lastLoginAt: expect.any(String) }),
      });
    });

    it.each([
      ['an unknown id', () => randomUUID()],
      ['a malformed id', () => 'not-a-uuid'],
      ['an SQL-looking id', () => "1' OR '1'='1"],
    ])('answers %s with 404 USER_NOT_FOUND', async (_what, id) => {
      const res = await api.get(`/users/${encodeURIComponent(id())}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'USER_NOT_FOUND', message: expect.any(String), status: 404 } });
    });

    it('answers 404 USER_NOT_FOUND for a user of another realm, on every user route', async () => {
      const stranger = await createUser(t, root.accessToken, 'master');
      const calls = [
        api.get(`/users/${stranger.id}`),
        api.delete(`/users/${stranger.id}`),
        api.post(`/users/${stranger.id}/suspend`).send({}),
        api.post(`/users/${stranger.id}/activate`),
        api.post(`/users/${stranger.id}/unlock`),
        api.post(`/users/${stranger.id}/reset-password`).send({}),
        api.post(`/users/${stranger.id}/mfa/reset`),
        api.put(`/users/${stranger.id}/roles`).send({ roles: [] }),
        api.get(`/users/${stranger.id}/sessions`),
        api.delete(`/users/${stranger.id}/sessions`),
      ];
      for (const res of await Promise.all(calls)) expect(errorOf(res)).toEqual([404, 'USER_NOT_FOUND']);
      const me = await t
        .api()
        .get('/api/v1/auth/me')
        .set('X-Realm-Id', 'master')
        .set(...bearer(stranger.accessToken));
      expect(me.status).toBe(200);
    });
  });

  describe('DELETE /users/:id', () => {
    it('deletes the user with its sessions, tokens and credentials in one go; its audit events stay', async () => {
      const user = await signedInUser(t);
      await t.dataSource.query(`INSERT INTO recovery_codes (id, user_id, code_hash, created_at) VALUES ($1, $2, 'h', now())`, [
        randomUUID(),
        user.id,
      ]);
      const res = await api.delete(`/users/${user.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      for (const table of ['users', 'sessions', 'one_time_tokens', 'recovery_codes']) {
        const column = table === 'users' ? 'id' : 'user_id';
        const rows: unknown[] = await t.dataSource.query(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [user.id]);
        expect([table, rows.length]).toEqual([table, 0]);
      }
      const refreshRows: unknown[] = await t.dataSource.query(
        `SELECT 1 FROM refresh_tokens r LEFT JOIN sessions s ON s.id = r.session_id WHERE s.id IS NULL`,
      );
      expect(refreshRows).toHaveLength(0);
      expect(errorOf(await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken }))).toEqual([401, 'INVALID_TOKEN']);
      expect(
        errorOf(
          await t
            .api()
            .get('/api/v1/auth/me')
            .set(...bearer(user.accessToken)),
        ),
      ).toEqual([401, 'INVALID_TOKEN']);
      expect(errorOf(await login(t, user.email))).toEqual([401, 'INVALID_CREDENTIALS']);
      const events = (await storedEvents(t, 'default', { userId: user.id })).map((e) => e.type);
      expect(events).toEqual(expect.arrayContaining(['user.registered', 'login.succeeded', 'user.deleted']));
      expect((await storedEvents(t, 'default', { userId: user.id, type: 'user.deleted' }))[0]).toMatchObject({
        actor_id: admin.id,
        details: { email: user.email },
      });
      expect(errorOf(await api.get(`/users/${user.id}`))).toEqual([404, 'USER_NOT_FOUND']);
      expect(errorOf(await api.delete(`/users/${user.id}`))).toEqual([404, 'USER_NOT_FOUND']);
      // The address is free again.
      await register(t, user.email);
    });

    it('refuses any field in the body of a body-less action with 400 and does nothing', async () => {
      const user = await signedInUser(t);
      await api.post(`/users/${user.id}/suspend`).send({});
      const calls = [
        api.delete(`/users/${user.id}`).send({ force: true }),
        api.post(`/users/${user.id}/activate`).send({ status: 'active' }),
        api.post(`/users/${user.id}/unlock`).send({ failedLoginCount: 0 }),
        api.post(`/users/${user.id}/mfa/reset`).send({ methods: [] }),
        api.delete(`/users/${user.id}/sessions`).send({ all: true }),
      ];
      for (const res of await Promise.all(calls)) {
        expect(errorOf(res)).toEqual([400, 'VALIDATION_FAILED']);
        expect(res.body.error.details).toEqual([expect.objectContaining({ message: expect.stringMatching(/should not exist/) })]);
      }
      expect((await api.get(`/users/${user.id}`)).body.user.status).toBe('suspended');
    });
  });

  describe('account states: suspend, activate, unlock', () => {
    it('suspends: every session revoked, login 403 ACCOUNT_SUSPENDED, audited with the reason', async () => {
      const user = await signedInUser(t);
      const second = await login(t, user.email);
      const res = await api.post(`/users/${user.id}/suspend`).send({ reason: 'chargeback' });
      expect(res.status).toBe(200);
      expect(res.body.user).toMatchObject({ id: user.id, status: 'suspended' });
      expect(errorOf(await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken }))).toEqual([401, 'INVALID_TOKEN']);
      expect(errorOf(await t.api().post('/api/v1/auth/refresh').send({ refreshToken: second.body.tokens.refreshToken }))).toEqual([
        401,
        'INVALID_TOKEN',
      ]);
      expect(
        errorOf(
          await t
            .api()
            .get('/api/v1/auth/me')
            .set(...bearer(second.body.tokens.accessToken)),
        ),
      ).toEqual([401, 'INVALID_TOKEN']);
      expect(errorOf(await login(t, user.email))).toEqual([403, 'ACCOUNT_SUSPENDED']);
      const [event] = await storedEvents(t, 'default', { userId: user.id, type: 'user.suspended' });
      expect(event).toMatchObject({ actor_id: admin.id, details: { reason: 'chargeback', revokedSessions: 2 } });
    });

    it('lets exactly one of 5 concurrent suspensions through (the row is locked for the transition); the rest get 409', async () => {
      const user = await signedInUser(t);
      const results = await Promise.all(Array.from({ length: 5 }, () => api.post(`/users/${user.id}/suspend`).send({})));
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
      expect(await storedEvents(t, 'default', { userId: user.id, type: 'user.suspended' })).toHaveLength(1);
    });

    it('activates a suspended user, who can log in again', async () => {
      const user = await signedInUser(t);
      await api.post(`/users/${user.id}/suspend`).send({});
      const res = await api.post(`/users/${user.id}/activate`);
      expect(res.status).toBe(200);
      expect(res.body.user).toMatchObject({ id: user.id, status: 'active' });
      expect((await login(t, user.email)).status).toBe(200);
      expect(await storedEvents(t, 'default', { userId: user.id, type: 'user.activated' })).toEqual([
        expect.objectContaining({ actor_id: admin.id }),
      ]);
    });

    it('suspends a locked user too', async () => {
      const user = await signedInUser(t);
      await wrongPasswords(t, user.email, 3);
      const res = await api.post(`/users/${user.id}/suspend`).send({});
      expect(res.body.user.status).toBe('suspended');
    });

    it('unlocks a locked user: status active, counter reset, the right password works again', async () => {
      const user = await signedInUser(t);
      await wrongPasswords(t, user.email, 3);
      expect((await api.get(`/users/${user.id}`)).body.user.status).toBe('locked');
      const res = await api.post(`/users/${user.id}/unlock`);
      expect(res.status).toBe(200);
      expect(res.body.user.status).toBe('active');
      const rows: { failed_login_count: number; locked_until: Date | null }[] = await t.dataSource.query(
        `SELECT failed_login_count, locked_until FROM users WHERE id = $1`,
        [user.id],
      );
      expect(rows[0]).toEqual({ failed_login_count: 0, locked_until: null });
      expect((await login(t, user.email)).status).toBe(200);
      expect(await storedEvents(t, 'default', { userId: user.id, type: 'user.unlocked' })).toEqual([
        expect.objectContaining({ actor_id: admin.id }),
      ]);
    });

    it.each([
      ['suspend', 'suspended', 'suspend', /suspended/],
      ['activate', 'active', 'activate', /active/],
      ['unlock', 'active', 'unlock', /active/],
      ['activate', 'locked', 'activate', /locked/],
      ['unlock', 'suspended', 'unlock', /suspended/],
    ])('refuses to %s a user whose status is %s with 409 INVALID_USER_STATE naming the status', async (_verb, from, action, message) => {
      const user = await signedInUser(t);
      if (from === 'suspended') await api.post(`/users/${user.id}/suspend`).send({});
      if (from === 'locked') await wrongPasswords(t, user.email, 3);
      const res = await api.post(`/users/${user.id}/${action}`).send({});
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: { code: 'INVALID_USER_STATE', message: expect.stringMatching(message), status: 409 } });
      expect((await api.get(`/users/${user.id}`)).body.user.status).toBe(from);
    });

    it.each([
      ['a reason over 500 characters', { reason: 'r'.repeat(501) }],
      ['a non-string reason', { reason: 42 }],
      ['an unknown field', { status: 'active' }],
    ])('refuses a suspension with %s (400)', async (_what, body) => {
      const user = await signedInUser(t);
      const res = await api.post(`/users/${user.id}/suspend`).send(body);
      expect(errorOf(res)).toEqual([400, 'VALIDATION_FAILED']);
      expect((await api.get(`/users/${user.id}`)).body.user.status).toBe('active');
    });
  });

  describe('POST /users/:id/reset-password', () => {
    it('sets the given password: method "set", sessions revoked, old password refused, new one accepted', async () => {
      const user = await signedInUser(t);
      const newPassword = 'a brand new passphrase';
      const res = await api.post(`/users/${user.id}/reset-password`).send({ password: newPassword });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, method: 'set' });
      expect(errorOf(await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken }))).toEqual([401, 'INVALID_TOKEN']);
      expect(
        errorOf(
          await t
            .api()
            .get('/api/v1/auth/me')
            .set(...bearer(user.accessToken)),
        ),
      ).toEqual([401, 'INVALID_TOKEN']);
      expect(errorOf(await login(t, user.email, PASSWORD))).toEqual([401, 'INVALID_CREDENTIALS']);
      expect((await login(t, user.email, newPassword)).status).toBe(200);
      expect(await storedEvents(t, 'default', { userId: user.id, type: 'user.password_reset' })).toEqual([
        expect.objectContaining({ actor_id: admin.id, details: { method: 'set', revokedSessions: 1 } }),
      ]);
    });

    it('ends a sign-in of the old password that was waiting for its second factor: its mfaToken no longer opens a session', async () => {
      const user = await userWithTotp(t);
      // Someone holding the old password (and a recovery code) keeps a sign-in ready for after the reset.
      const pending = await login(t, user.email, PASSWORD);
      expect(pending.body.requiresMfa).toBe(true);
      const res = await api.post(`/users/${user.id}/reset-password`).send({ password: 'a brand new passphrase' });
      expect(res.status).toBe(200);
      const verified = await t
        .api()
        .post('/api/v1/auth/mfa/verify')
        .send({ mfaToken: pending.body.mfaToken, type: 'recovery', code: user.recoveryCodes[0] });
      expect(errorOf(verified)).toEqual([401, 'INVALID_TOKEN']);
    });

    it('without a password emails a reset link: method "email", sessions revoked, password unchanged', async () => {
      const user = await signedInUser(t);
      const res = await api.post(`/users/${user.id}/reset-password`).send({});
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, method: 'email' });
      const outbox: { text_body: string }[] = await t.dataSource.query(
        `SELECT text_body FROM email_outbox WHERE recipient = $1 AND text_body LIKE '%reset-password?token=%'`,
        [user.email],
      );
      expect(outbox).toHaveLength(1);
      expect(errorOf(await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken }))).toEqual([401, 'INVALID_TOKEN']);
      expect((await login(t, user.email, PASSWORD)).status).toBe(200);
      expect((await storedEvents(t, 'default', { userId: user.id, type: 'user.password_reset' }))[0].details).toMatchObject({
        method: 'email',
      });
    });

    it.each([
      ['a common password', { password: 'password1234' }],
      ['a too short password', { password: 'short' }],
      ["the user's email as password", null],
      ['an unknown field', { password: 'a brand new passphrase', notify: false }],
    ])('refuses %s with 400 and changes nothing', async (_what, body) => {
      const user = await signedInUser(t);
      const res = await api.post(`/users/${user.id}/reset-password`).send(body ?? { password: user.email });
      expect(errorOf(res)).toEqual([400, 'VALIDATION_FAILED']);
      expect(
        (
          await t
            .api()
            .get('/api/v1/auth/me')
            .set(...bearer(user.accessToken))
        ).status,
      ).toBe(200);
      expect((await login(t, user.email, PASSWORD)).status).toBe(200);
    });
  });

  describe('POST /users/:id/mfa/reset', () => {
    it('undoes a real enrolment (TOTP, a security key, recovery codes): the next login asks for the password only', async () => {
      const user = await userWithTotp(t);
      await addSoftKey(t, user.accessToken, 'Desk key');
      expect((await api.get(`/users/${user.id}`)).body.user.mfa).toEqual({ enabled: true, methods: ['totp', 'webauthn'] });
      expect((await login(t, user.email)).body.requiresMfa).toBe(true);

      const res = await api.post(`/users/${user.id}/mfa/reset`);
      expect(res.status).toBe(200);
      expect(res.body.user.mfa).toEqual({ enabled: false, methods: [] });
      expect(
        errorOf(
          await t
            .api()
            .get('/api/v1/auth/me')
            .set(...bearer(user.accessToken)),
        ),
      ).toEqual([401, 'INVALID_TOKEN']);
      const next = await login(t, user.email);
      expect(next.status).toBe(200);
      expect(next.body.requiresMfa).toBe(false);
      const status = await t
        .api()
        .get('/api/v1/auth/mfa')
        .set(...bearer(next.body.tokens.accessToken));
      expect(status.body).toMatchObject({ enabled: false, methods: [], webauthnCredentials: [], recoveryCodesRemaining: 0 });
    });

    it('removes TOTP, WebAuthn credentials and recovery codes, revokes sessions and records user.mfa_reset', async () => {
      const user = await signedInUser(t);
      await t.dataSource.query(
        `INSERT INTO totp_credentials (user_id, secret_encrypted, confirmed_at, created_at) VALUES ($1, 'x', now(), now())`,
        [user.id],
      );
      await t.dataSource.query(
        `INSERT INTO webauthn_credentials (id, user_id, name, public_key, created_at) VALUES ($1, $2, 'key', '\\x00', now())`,
        [`cred-${user.id}`, user.id],
      );
      await t.dataSource.query(`INSERT INTO recovery_codes (id, user_id, code_hash, created_at) VALUES ($1, $2, 'h', now())`, [
        randomUUID(),
        user.id,
      ]);
      expect((await api.get(`/users/${user.id}`)).body.user.mfa).toEqual({ enabled: true, methods: ['totp', 'webauthn'] });

      const res = await api.post(`/users/${user.id}/mfa/reset`);
      expect(res.status).toBe(200);
      expect(res.body.user).toMatchObject({ id: user.id, mfa: { enabled: false, methods: [] } });
      for (const table of ['totp_credentials', 'webauthn_credentials', 'recovery_codes']) {
        const rows: unknown[] = await t.dataSource.query(`SELECT 1 FROM ${table} WHERE user_id = $1`, [user.id]);
        expect([table, rows.length]).toEqual([table, 0]);
      }
      expect(
        errorOf(
          await t
            .api()
            .get('/api/v1/auth/me')
            .set(...bearer(user.accessToken)),
        ),
      ).toEqual([401, 'INVALID_TOKEN']);
      const relogin = await login(t, user.email);
      expect(relogin.body.requiresMfa).toBe(false);
      expect(await storedEvents(t, 'default', { userId: user.id, type: 'user.mfa_reset' })).toEqual([
        expect.objectContaining({ actor_id: admin.id, details: { methods: ['totp', 'webauthn'], revokedSessions: 1 } }),
      ]);
    });
  });

  describe('PUT /users/:id/roles', () => {
    it('replaces the roles (duplicates collapse) and records before and after', async () => {
      const user = await signedInUser(t);
      const res = await api.put(`/users/${user.id}/roles`).send({ roles: ['realm-admin', 'auditor', 'auditor'] });
      expect(res.status).toBe(200);
      expect(res.body.user.roles).toEqual(['realm-admin', 'auditor']);
      expect((await api.get(`/users/${user.id}`)).body.user.roles).toEqual(['realm-admin', 'auditor']);
      const cleared = await api.put(`/users/${user.id}/roles`).send({ roles: [] });
      expect(cleared.body.user.roles).toEqual([]);
      const events = await storedEvents(t, 'default', { userId: user.id, type: 'user.roles_changed' });
      expect(events.map((e) => e.details)).toEqual([
        { before: [], after: ['realm-admin', 'auditor'] },
        { before: ['realm-admin', 'auditor'], after: [] },
      ]);
      expect(events.every((e) => e.actor_id === admin.id)).toBe(true);
    });

    it.each([
      ['a missing roles field', {}],
      ['roles not an array', { roles: 'realm-admin' }],
      ['a malformed role', { roles: ['Admin!'] }],
      ['a non-string role', { roles: [7] }],
      ['33 roles', { roles: Array.from({ length: 33 }, (_, i) => `role-${i}`) }],
      ['an unknown field', { roles: [], status: 'active' }],
    ])('refuses %s with 400', async (_what, body) => {
      const user = await signedInUser(t);
      expect(errorOf(await api.put(`/users/${user.id}/roles`).send(body))).toEqual([400, 'VALIDATION_FAILED']);
    });
  });
});
