import { HousekeepingUseCase } from '../../src/application/housekeeping/housekeeping.use-case';
import { ADMIN_ENV, adminApi, createRealm, createUser, superAdmin } from '../support/admin-flows';
import { register, signedInUser } from '../support/flows';
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
    t = await createTestApp({ env: { ...ADMIN_ENV, AUDIT_RETENTION_DAYS: '30' } });
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
});
