import { randomUUID } from 'node:crypto';
import { ADMIN_ENV, adminApi, createRealm, createUser, SignedIn, storedEvents, superAdmin } from '../support/admin-flows';
import { bearer, login, signedInUser } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';

// Booting the app on a fresh database takes seconds on a busy machine.
jest.setTimeout(120_000);

function errorOf(res: { status: number; body: { error?: { code: string } } }) {
  return [res.status, res.body.error?.code];
}

const SESSION_KEYS = ['createdAt', 'device', 'dpopBound', 'expiresAt', 'flag', 'id', 'ip', 'lastActiveAt', 'location', 'status', 'userId'];

describe('admin sessions, events and realms', () => {
  let t: TestApp;
  let root: SignedIn;
  let admin: SignedIn;
  let api: ReturnType<typeof adminApi>;

  beforeAll(async () => {
    t = await createTestApp({ env: { ...ADMIN_ENV, SESSION_IDLE_TIMEOUT_SECONDS: '3600' } });
    root = await superAdmin(t);
    admin = await createUser(t, root.accessToken, 'default', { roles: ['realm-admin'] });
    api = adminApi(t, admin.accessToken, 'default');
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /sessions', () => {
    it("lists the realm's live sessions newest first with the Session resource and pagination", async () => {
      const user = await signedInUser(t);
      const res = await api.get(`/sessions?userId=${user.id}`);
      expect(res.status).toBe(200);
      expect(res.body.pagination).toEqual({ total: 1, page: 1, limit: 20 });
      const [session] = res.body.sessions;
      expect(Object.keys(session).sort()).toEqual(SESSION_KEYS);
      expect(session).toMatchObject({
        userId: user.id,
        ip: expect.any(String),
        status: 'active',
        flag: null,
        device: { id: expect.any(String), name: expect.any(String), type: expect.any(String), fingerprint: null },
        location: { country: null, city: null },
      });
      const all = await api.get('/sessions?limit=100');
      expect(all.body.sessions.map((s: { id: string }) => s.id)).toContain(session.id);
      const created = all.body.sessions.map((s: { createdAt: string }) => s.createdAt);
      expect([...created].sort().reverse()).toEqual(created);
      // The admin's own session and the user's; the super-admin's lives in master.
      expect(all.body.pagination.total).toBe(2);
      expect(all.body.sessions.map((s: { userId: string }) => s.userId).sort()).toEqual([admin.id, user.id].sort());
    });

    it('pages, filters by userId and status, and leaves out revoked and expired sessions', async () => {
      const user = await signedInUser(t);
      await login(t, user.email);
      const third = await login(t, user.email);
      const page1 = await api.get(`/sessions?userId=${user.id}&limit=2`);
      expect(page1.body.pagination).toEqual({ total: 3, page: 1, limit: 2 });
      expect(page1.body.sessions).toHaveLength(2);
      const page2 = await api.get(`/sessions?userId=${user.id}&limit=2&page=2`);
      expect(page2.body.sessions).toHaveLength(1);
      const ids = [...page1.body.sessions, ...page2.body.sessions].map((s: { id: string }) => s.id);
      expect(new Set(ids).size).toBe(3);
      expect((await api.get(`/sessions?userId=${user.id}&status=flagged`)).body).toEqual({
        sessions: [],
        pagination: { total: 0, page: 1, limit: 20 },
      });
      expect((await api.get(`/sessions?userId=${user.id}&status=active`)).body.pagination.total).toBe(3);
      // Logging out one ends it: it leaves the list.
      await t.api().post('/api/v1/auth/logout').send({ refreshToken: third.body.tokens.refreshToken });
      expect((await api.get(`/sessions?userId=${user.id}`)).body.pagination.total).toBe(2);
    });

    it('answers a userId filter matching nobody (or malformed) with an empty list', async () => {
      for (const userId of [randomUUID(), 'not-a-uuid']) {
        const res = await api.get(`/sessions?userId=${userId}`);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ sessions: [], pagination: { total: 0, page: 1, limit: 20 } });
      }
    });

    it('never shows sessions of another realm', async () => {
      const stranger = await createUser(t, root.accessToken, 'master');
      const res = await api.get(`/sessions?userId=${stranger.id}`);
      expect(res.body.sessions).toEqual([]);
    });

    it.each([['page=0'], ['limit=101'], ['status=revoked'], ['userId=' + 'x'.repeat(65)], ['sort=createdAt']])(
      'refuses %s with 400',
      async (query) => {
        expect(errorOf(await api.get(`/sessions?${query}`))).toEqual([400, 'VALIDATION_FAILED']);
      },
    );
  });

  describe('DELETE /sessions/:id', () => {
    it("revokes one session: its refresh and access tokens stop working, the user's others keep working", async () => {
      const user = await signedInUser(t);
      const other = await login(t, user.email);
      const sid = JSON.parse(Buffer.from(user.accessToken.split('.')[1], 'base64url').toString()).sid as string;
      const res = await api.delete(`/sessions/${sid}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      expect(errorOf(await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken }))).toEqual([401, 'INVALID_TOKEN']);
      expect(
        errorOf(
          await t
            .api()
            .get('/api/v1/auth/me')
            .set(...bearer(user.accessToken)),
        ),
      ).toEqual([401, 'INVALID_TOKEN']);
      expect(
        (
          await t
            .api()
            .get('/api/v1/auth/me')
            .set(...bearer(other.body.tokens.accessToken))
        ).status,
      ).toBe(200);
      expect(await storedEvents(t, 'default', { userId: user.id, type: 'session.revoked' })).toEqual([
        expect.objectContaining({ actor_id: admin.id, session_id: sid, details: { by: 'admin' } }),
      ]);
    });

    it('answers 404 SESSION_NOT_FOUND for a session already revoked, expired, unknown, malformed or of another realm', async () => {
      const user = await signedInUser(t);
      const sid = JSON.parse(Buffer.from(user.accessToken.split('.')[1], 'base64url').toString()).sid as string;
      expect((await api.delete(`/sessions/${sid}`)).status).toBe(200);
      expect(errorOf(await api.delete(`/sessions/${sid}`))).toEqual([404, 'SESSION_NOT_FOUND']);

      const idle = await signedInUser(t);
      const idleSid = JSON.parse(Buffer.from(idle.accessToken.split('.')[1], 'base64url').toString()).sid as string;
      await t.dataSource.query(`UPDATE sessions SET last_active_at = last_active_at - interval '2 hours' WHERE id = $1`, [idleSid]);
      expect(errorOf(await api.delete(`/sessions/${idleSid}`))).toEqual([404, 'SESSION_NOT_FOUND']);

      expect(errorOf(await api.delete(`/sessions/${randomUUID()}`))).toEqual([404, 'SESSION_NOT_FOUND']);
      expect(errorOf(await api.delete('/sessions/nope'))).toEqual([404, 'SESSION_NOT_FOUND']);

      const stranger = await createUser(t, root.accessToken, 'master');
      const strangerSid = JSON.parse(Buffer.from(stranger.accessToken.split('.')[1], 'base64url').toString()).sid as string;
      expect(errorOf(await api.delete(`/sessions/${strangerSid}`))).toEqual([404, 'SESSION_NOT_FOUND']);
      expect(
        (
          await t
            .api()
            .get('/api/v1/auth/me')
            .set('X-Realm-Id', 'master')
            .set(...bearer(stranger.accessToken))
        ).status,
      ).toBe(200);
    });

    it('lets exactly one of two concurrent revocations of a session succeed', async () => {
      const user = await signedInUser(t);
      const sid = JSON.parse(Buffer.from(user.accessToken.split('.')[1], 'base64url').toString()).sid as string;
      const results = await Promise.all([api.delete(`/sessions/${sid}`), api.delete(`/sessions/${sid}`)]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 404]);
      expect(await storedEvents(t, 'default', { userId: user.id, type: 'session.revoked' })).toHaveLength(1);
    });
  });

  describe('GET and DELETE /users/:id/sessions', () => {
    it("lists one user's live sessions with pagination", async () => {
      const user = await signedInUser(t);
      await login(t, user.email);
      const res = await api.get(`/users/${user.id}/sessions?limit=1`);
      expect(res.status).toBe(200);
      expect(res.body.pagination).toEqual({ total: 2, page: 1, limit: 1 });
      expect(res.body.sessions).toHaveLength(1);
      expect(res.body.sessions[0].userId).toBe(user.id);
    });

    it('revokes all of them and says how many; a second call revokes 0', async () => {
      const user = await signedInUser(t);
      const other = await login(t, user.email);
      const res = await api.delete(`/users/${user.id}/sessions`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, revoked: 2 });
      for (const refreshToken of [user.refreshToken, other.body.tokens.refreshToken]) {
        expect(errorOf(await t.api().post('/api/v1/auth/refresh').send({ refreshToken }))).toEqual([401, 'INVALID_TOKEN']);
      }
      expect(
        errorOf(
          await t
            .api()
            .get('/api/v1/auth/me')
            .set(...bearer(other.body.tokens.accessToken)),
        ),
      ).toEqual([401, 'INVALID_TOKEN']);
      expect((await api.get(`/users/${user.id}/sessions`)).body).toEqual({ sessions: [], pagination: { total: 0, page: 1, limit: 20 } });
      expect((await api.delete(`/users/${user.id}/sessions`)).body).toEqual({ success: true, revoked: 0 });
      const events = await storedEvents(t, 'default', { userId: user.id, type: 'session.revoked' });
      expect(events[0]).toMatchObject({ actor_id: admin.id, details: { by: 'admin', scope: 'all', revoked: 2 } });
    });

    it('answers an unknown user with 404 USER_NOT_FOUND, and bad paging with 400', async () => {
      expect(errorOf(await api.get(`/users/${randomUUID()}/sessions`))).toEqual([404, 'USER_NOT_FOUND']);
      expect(errorOf(await api.delete(`/users/${randomUUID()}/sessions`))).toEqual([404, 'USER_NOT_FOUND']);
      const user = await signedInUser(t);
      expect(errorOf(await api.get(`/users/${user.id}/sessions?limit=0`))).toEqual([400, 'VALIDATION_FAILED']);
      expect(errorOf(await api.get(`/users/${user.id}/sessions?status=active`))).toEqual([400, 'VALIDATION_FAILED']);
    });
  });

  describe('GET /events', () => {
    let subject: SignedIn;
    let since: string;

    beforeAll(async () => {
      await createRealm(t, root.accessToken, 'audited');
      const audited = adminApi(t, root.accessToken, 'audited');
      subject = await createUser(t, root.accessToken, 'audited');
      t.clock.advance(10);
      since = t.clock.now().toISOString();
      t.clock.advance(1);
      expect((await login(t, subject.email, 'a wrong password here', {}, 'audited')).status).toBe(401);
      t.clock.advance(1);
      expect((await audited.post(`/users/${subject.id}/suspend`).send({ reason: 'fraud' })).status).toBe(200);
    });

    it("lists the realm's events newest first with exactly the contract's fields", async () => {
      const res = await adminApi(t, root.accessToken, 'audited').get('/events');
      expect(res.status).toBe(200);
      const types = res.body.events.map((e: { type: string }) => e.type);
      expect(types.slice(0, 2)).toEqual(['user.suspended', 'login.failed']);
      expect(types).toEqual(expect.arrayContaining(['realm.created', 'user.created', 'login.succeeded']));
      const at = res.body.events.map((e: { at: string }) => e.at);
      expect([...at].sort().reverse()).toEqual(at);
      expect(res.body.events[0]).toEqual({
        id: expect.any(String),
        type: 'user.suspended',
        realmId: 'audited',
        userId: subject.id,
        actorId: root.id,
        sessionId: null,
        ip: expect.any(String),
        at: expect.stringMatching(/Z$/),
        details: { reason: 'fraud', revokedSessions: 1 },
      });
      expect(res.body.pagination).toEqual({ total: types.length, page: 1, limit: 20 });
      const realmCreated = res.body.events.find((e: { type: string }) => e.type === 'realm.created');
      expect(realmCreated).toMatchObject({ realmId: 'audited', actorId: root.id, userId: null });
    });

    it('filters by type, userId and since, and pages', async () => {
      const audited = adminApi(t, root.accessToken, 'audited');
      const byType = await audited.get('/events?type=login.failed');
      expect(byType.body.events).toEqual([
        expect.objectContaining({
          type: 'login.failed',
          userId: subject.id,
          actorId: null,
          details: expect.objectContaining({ reason: 'wrong_password' }),
        }),
      ]);
      const byUser = await audited.get(`/events?userId=${subject.id}`);
      expect(byUser.body.events.map((e: { type: string }) => e.type)).toEqual([
        'user.suspended',
        'login.failed',
        'login.succeeded',
        'user.created',
      ]);
      const bySince = await audited.get(`/events?since=${encodeURIComponent(since)}`);
      expect(bySince.body.events.map((e: { type: string }) => e.type)).toEqual(['user.suspended', 'login.failed']);
      const paged = await audited.get(`/events?userId=${subject.id}&limit=3&page=2`);
      expect(paged.body).toEqual({
        events: [expect.objectContaining({ type: 'user.created' })],
        pagination: { total: 4, page: 2, limit: 3 },
      });
      expect((await audited.get(`/events?userId=${randomUUID()}`)).body).toEqual({
        events: [],
        pagination: { total: 0, page: 1, limit: 20 },
      });
    });

    it('shows a realm-admin only the events of its realm', async () => {
      const res = await api.get(`/events?userId=${subject.id}`);
      expect(res.body.events).toEqual([]);
    });

    it.each([['type=user.exploded'], ['since=yesterday'], ['since=2026-13-01T00:00:00Z'], ['limit=500'], ['page=0'], ['actorId=x']])(
      'refuses %s with 400',
      async (query) => {
        expect(errorOf(await api.get(`/events?${query}`))).toEqual([400, 'VALIDATION_FAILED']);
      },
    );
  });

  describe('GET and POST /realms (super-admin)', () => {
    it('creates a realm (201), records realm.created in it, and lists it; users can register there', async () => {
      const res = await adminApi(t, root.accessToken, 'master').post('/realms').send({ id: 'acme-corp', name: 'Acme Corporation' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        realm: {
          id: 'acme-corp',
          name: 'Acme Corporation',
          enabled: true,
          settings: expect.objectContaining({ registration: 'open', accessTokenTtlSeconds: t.config.accessTokenTtlSeconds }),
          createdAt: expect.stringMatching(/Z$/),
          updatedAt: expect.stringMatching(/Z$/),
        },
      });
      const list = await adminApi(t, root.accessToken, 'master').get('/realms');
      expect(list.status).toBe(200);
      expect(Object.keys(list.body)).toEqual(['realms']);
      expect(list.body.realms.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining(['master', 'default', 'acme-corp']));
      expect(list.body.realms.find((r: { id: string }) => r.id === 'acme-corp')).toEqual(res.body.realm);
      expect(await storedEvents(t, 'acme-corp', { type: 'realm.created' })).toEqual([
        expect.objectContaining({ actor_id: root.id, details: { name: 'Acme Corporation', by: 'admin' } }),
      ]);
      const reg = await t
        .api()
        .post('/api/v1/auth/register')
        .set('X-Realm-Id', 'acme-corp')
        .send({ email: 'first@acme.example', password: 'correct horse battery staple', name: 'First' });
      expect(reg.status).toBe(201);
    });

    it.each([
      ['a taken id', { id: 'default', name: 'Again' }, 'id'],
      ['an id with capitals', { id: 'Acme', name: 'A' }, 'id'],
      ['an id with a slash', { id: 'a/b', name: 'A' }, 'id'],
      ['a 64-character id', { id: 'a'.repeat(64), name: 'A' }, 'id'],
      ['an empty name', { id: 'empty-name', name: ' ' }, 'name'],
      ['a missing name', { id: 'no-name' }, 'name'],
      ['an unknown field', { id: 'extra', name: 'Extra', accessTokenTtlSeconds: 60 }, 'accessTokenTtlSeconds'],
    ])('refuses %s with 400 VALIDATION_FAILED naming the field', async (_what, body, field) => {
      const res = await adminApi(t, root.accessToken, 'master').post('/realms').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    });

    it('refuses a realm-admin, even of master, with 403', async () => {
      const masterAdmin = await createUser(t, root.accessToken, 'master', { roles: ['realm-admin'] });
      for (const res of [
        await adminApi(t, masterAdmin.accessToken, 'master').get('/realms'),
        await adminApi(t, masterAdmin.accessToken, 'master').post('/realms').send({ id: 'sneaky', name: 'Sneaky' }),
        await api.get('/realms'),
      ]) {
        expect(errorOf(res)).toEqual([403, 'FORBIDDEN']);
      }
      const rows: unknown[] = await t.dataSource.query(`SELECT 1 FROM realms WHERE id = 'sneaky'`);
      expect(rows).toHaveLength(0);
    });
  });
});
