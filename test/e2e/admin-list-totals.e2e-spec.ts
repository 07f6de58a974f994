import { HousekeepingUseCase } from '../../src/application/housekeeping/housekeeping.use-case';
import { ADMIN_ENV, adminApi, createRealm, createUser, superAdmin } from '../support/admin-flows';
import { bearer, register, signedInUser } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';

const DAY = 86_400;

/**
 * The totals of the users and events lists for a whole realm (and for one event type) come from
 * counts kept beside the rows; every other total is counted. Either way they must equal a count
 * of the rows themselves, through every way rows are added and removed.
 */
describe('admin list totals: the same as counting the rows', () => {
  let t: TestApp;
  let root: string;

  beforeEach(async () => {
    t = await createTestApp({
      env: { ...ADMIN_ENV, AUDIT_RETENTION_DAYS: '30', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    });
    root = (await superAdmin(t)).accessToken;
    await createRealm(t, root, 'acme');
    await createRealm(t, root, 'empty');
  });
  afterEach(async () => {
    await t?.close();
  });

  async function counted(sql: string, params: unknown[]): Promise<number> {
    const [row] = await t.dataSource.query(`SELECT count(*)::int AS n FROM ${sql}`, params);
    return Number(row.n);
  }

  async function total(realm: string, path: string): Promise<number> {
    const res = await adminApi(t, root, realm).get(path);
    expect(res.status).toBe(200);
    return res.body.pagination.total as number;
  }

  async function expectUserTotals(realm: string): Promise<void> {
    expect(await total(realm, '/users')).toBe(await counted('users WHERE realm_id = $1', [realm]));
    expect(await total(realm, '/users?status=suspended')).toBe(
      await counted(`users WHERE realm_id = $1 AND status = 'suspended'`, [realm]),
    );
    expect(await total(realm, '/users?search=member')).toBe(await counted(`users WHERE realm_id = $1 AND email LIKE '%member%'`, [realm]));
  }

  async function expectEventTotals(realm: string): Promise<void> {
    expect(await total(realm, '/events')).toBe(await counted('audit_events WHERE realm_id = $1', [realm]));
    const types: { type: string }[] = await t.dataSource.query(`SELECT DISTINCT type FROM audit_events WHERE realm_id = $1`, [realm]);
    expect(types.length).toBeGreaterThan(1);
    for (const { type } of types) {
      expect(await total(realm, `/events?type=${type}`)).toBe(
        await counted('audit_events WHERE realm_id = $1 AND type = $2', [realm, type]),
      );
    }
    expect(await total(realm, '/events?type=webhook.deleted')).toBe(0);
  }

  it('users: registrations, admin creations, concurrent sign-ups and deletions in several realms', async () => {
    expect(await total('empty', '/users')).toBe(0);
    const members = [];
    for (let i = 0; i < 3; i += 1) members.push(await createUser(t, root, 'acme'));
    await Promise.all(Array.from({ length: 8 }, () => register(t, undefined, undefined, 'acme')));
    for (let i = 0; i < 2; i += 1) await signedInUser(t);
    await expectUserTotals('acme');
    await expectUserTotals('default');
    expect(await total('acme', '/users')).toBe(11);

    expect((await adminApi(t, root, 'acme').post(`/users/${members[0].id}/suspend`)).status).toBe(200);
    expect((await adminApi(t, root, 'acme').delete(`/users/${members[1].id}`)).status).toBe(200);
    await expectUserTotals('acme');
    expect(await total('acme', '/users')).toBe(10);
    expect(await total('empty', '/users')).toBe(0);
  });

  it('users: a deleted realm takes its count with it, and a realm made again under its id starts from zero', async () => {
    await createUser(t, root, 'acme');
    await createUser(t, root, 'acme');
    // No route removes a realm; the database's cascade does, and the counts follow it.
    await t.dataSource.query(`DELETE FROM realms WHERE id = 'acme'`);
    await createRealm(t, root, 'acme');
    expect(await total('acme', '/users')).toBe(0);
    await createUser(t, root, 'acme');
    await expectUserTotals('acme');
    expect(await total('acme', '/users')).toBe(1);
  });

  /** Live sessions of a realm counted from the rows (as `Session.isLive`), with their ids. */
  async function liveSessions(realm: string): Promise<string[]> {
    const rows: { id: string }[] = await t.dataSource.query(
      `SELECT id FROM sessions WHERE realm_id = $1 AND revoked_at IS NULL AND expires_at > $2
         AND last_active_at > $2::timestamptz - make_interval(secs => $3) AND created_at > $2::timestamptz - make_interval(secs => $4)`,
      [realm, t.clock.now(), t.config.sessionIdleTimeoutSeconds, t.config.sessionMaxLifetimeSeconds],
    );
    return rows.map((r) => r.id).sort();
  }

  async function expectSessionTotals(realm: string): Promise<void> {
    const live = await liveSessions(realm);
    const res = await adminApi(t, root, realm).get('/sessions?limit=100');
    expect(res.status).toBe(200);
    expect(res.body.pagination.total).toBe(live.length);
    expect((res.body.sessions as { id: string }[]).map((x) => x.id).sort()).toEqual(live);
  }

  it('sessions: sign-ins, logouts, revocations, suspension, deletion, idling out, and housekeeping closing and purging', async () => {
    const idler = await createUser(t, root, 'acme');
    const members = [];
    for (let i = 0; i < 4; i += 1) members.push(await createUser(t, root, 'acme'));
    await expectSessionTotals('acme');
    expect(await total('acme', '/sessions')).toBe(5);

    expect(
      (await t.api().post('/api/v1/auth/logout').set('X-Realm-Id', 'acme').send({ refreshToken: members[0].refreshToken })).status,
    ).toBe(200);
    expect((await adminApi(t, root, 'acme').post(`/users/${members[1].id}/suspend`)).status).toBe(200);
    expect((await adminApi(t, root, 'acme').delete(`/users/${members[2].id}`)).status).toBe(200);
    await expectSessionTotals('acme');
    expect(await total('acme', '/sessions')).toBe(2);

    // The idler's session idles out (no housekeeping yet): it leaves the total at once.
    t.clock.advance(t.config.sessionIdleTimeoutSeconds - 3600);
    const refreshed = await t.api().post('/api/v1/auth/refresh').set('X-Realm-Id', 'acme').send({ refreshToken: members[3].refreshToken });
    expect(refreshed.status).toBe(200);
    t.clock.advance(7200);
    root = (await superAdmin(t)).accessToken;
    await expectSessionTotals('acme');
    expect(await total('acme', '/sessions')).toBe(1);
    const fresh = await createUser(t, root, 'acme');

    const report = await t.app.get(HousekeepingUseCase).execute({ batchSize: 1 });
    expect(report.closedSessions).toBeGreaterThanOrEqual(1);
    const [closed] = await t.dataSource.query(`SELECT revoked_at, revoke_reason FROM sessions WHERE user_id = $1`, [idler.id]);
    expect(closed.revoke_reason).toBe('expired');
    expect(new Date(closed.revoked_at).getTime()).toBeLessThan(t.clock.now().getTime() - 3600_000 + 1000);
    await expectSessionTotals('acme');
    expect(await total('acme', '/sessions')).toBe(2);
    // Nothing live was closed: both live sessions still refresh.
    for (const refreshToken of [refreshed.body.tokens.refreshToken as string, fresh.refreshToken]) {
      expect((await t.api().post('/api/v1/auth/refresh').set('X-Realm-Id', 'acme').send({ refreshToken })).status).toBe(200);
    }

    // A month and more later every ended session is purged, and the totals still agree.
    t.clock.advance(40 * 86_400);
    root = (await superAdmin(t)).accessToken;
    const last = await createUser(t, root, 'acme');
    const purged = await t.app.get(HousekeepingUseCase).execute({ batchSize: 2 });
    expect(purged.sessions).toBeGreaterThanOrEqual(4);
    await expectSessionTotals('acme');
    expect(await liveSessions('acme')).toHaveLength(1);
    expect(
      (
        await t
          .api()
          .get('/api/v1/auth/me')
          .set('X-Realm-Id', 'acme')
          .set(...bearer(last.accessToken))
      ).status,
    ).toBe(200);
  });

  it('events: by realm and by type, before and after the housekeeping purge of old events', async () => {
    await createUser(t, root, 'acme');
    await signedInUser(t, 'acme');
    await expectEventTotals('acme');
    await expectEventTotals('master');

    t.clock.advance(40 * DAY);
    root = (await superAdmin(t)).accessToken;
    await createUser(t, root, 'acme');
    const before = await counted('audit_events WHERE realm_id = $1', ['acme']);
    const report = await t.app.get(HousekeepingUseCase).execute({ batchSize: 2 });
    expect(report.auditEvents).toBeGreaterThan(0);
    const after = await counted('audit_events WHERE realm_id = $1', ['acme']);
    expect(after).toBeLessThan(before);
    expect(after).toBeGreaterThan(0);
    await expectEventTotals('acme');
    // A filter the kept counts do not cover is counted, and still agrees.
    const since = new Date(t.clock.now().getTime() - 3600_000).toISOString();
    expect(await total('acme', `/events?since=${encodeURIComponent(since)}`)).toBe(
      await counted('audit_events WHERE realm_id = $1 AND at >= $2', ['acme', since]),
    );
  });

  it('webhook deliveries: by webhook and status, through deliveries written, delivered, failed, purged and deleted with their webhook', async () => {
    const hook = async () => {
      const res = await adminApi(t, root, 'acme')
        .post('/webhooks')
        .send({ url: 'http://127.0.0.1:9/hook', events: ['user.created'], description: 'totals' });
      expect(res.status).toBe(201);
      return res.body.webhook.id as string;
    };
    const [first, second] = [await hook(), await hook()];
    for (let i = 0; i < 5; i += 1) await createUser(t, root, 'acme');
    const expectDeliveryTotals = async (webhookId: string) => {
      for (const status of ['', 'pending', 'delivered', 'failed']) {
        const res = await adminApi(t, root, 'acme').get(`/webhooks/${webhookId}/deliveries${status ? `?status=${status}` : ''}`);
        expect(res.status).toBe(200);
        expect(res.body.pagination.total).toBe(
          await counted(`webhook_deliveries WHERE webhook_id = $1 AND ($2 = '' OR status = $2)`, [webhookId, status]),
        );
      }
    };
    expect(await counted('webhook_deliveries WHERE webhook_id = $1', [first])).toBe(5);
    await expectDeliveryTotals(first);

    // Outcomes as the dispatcher writes them: one status change per delivery.
    const ids: { id: string }[] = await t.dataSource.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY id`, [first]);
    const at = new Date(t.clock.now().getTime() - 10 * 86_400_000);
    await t.dataSource.query(`UPDATE webhook_deliveries SET status = 'delivered', delivered_at = $2 WHERE id = ANY ($1::uuid[])`, [
      ids.slice(0, 3).map((r) => r.id),
      at,
    ]);
    await t.dataSource.query(`UPDATE webhook_deliveries SET status = 'failed' WHERE id = $1`, [ids[3].id]);
    await expectDeliveryTotals(first);
    expect(await total('acme', `/webhooks/${first}/deliveries?status=delivered`)).toBe(3);

    // Delivered ten days ago: housekeeping purges them (kept a week).
    expect((await t.app.get(HousekeepingUseCase).execute()).deliveredWebhooks).toBe(3);
    await expectDeliveryTotals(first);
    expect(await total('acme', `/webhooks/${first}/deliveries`)).toBe(2);

    expect((await adminApi(t, root, 'acme').delete(`/webhooks/${second}`)).status).toBe(200);
    expect(await counted('webhook_deliveries WHERE webhook_id = $1', [second])).toBe(0);
    const [{ kept }] = await t.dataSource.query(
      `SELECT coalesce(sum(n), 0)::int AS kept FROM webhook_delivery_counts WHERE webhook_id = $1`,
      [second],
    );
    expect(kept).toBe(0);
    // Another realm's administrator does not see the webhook, nor its total.
    expect((await adminApi(t, root, 'empty').get(`/webhooks/${first}/deliveries`)).status).toBe(404);
  });
});
