import { Client } from 'pg';
import { USER_BY_EMAIL, USER_WITH_LIVE_SESSION } from '../../src/adapters/persistence/typeorm-user.repository';
import { bearer, signedInUser } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

function claims(accessToken: string): { sid: string; sub: string } {
  return JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString());
}

/** The index names of a plan in EXPLAIN's JSON format. */
function indexesOf(node: Record<string, unknown>): string[] {
  const own = typeof node['Index Name'] === 'string' ? [node['Index Name']] : [];
  const children = (node.Plans as Record<string, unknown>[] | undefined) ?? [];
  return [...own, ...children.flatMap(indexesOf)];
}

/**
 * The paths tuned for throughput (docs/performance.md) keep every check: a remembered access
 * token still dies with its session and at its exp, a one-statement rotation is still single use,
 * and the user read with the session check is the caller's own.
 */
describe('hot paths keep their checks', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('answers GET /me with the caller, and refuses the same remembered token once its session ended', async () => {
    const user = await signedInUser(t);
    for (let i = 0; i < 3; i++) {
      const res = await t
        .api()
        .get('/api/v1/auth/me')
        .set(...bearer(user.accessToken));
      expect(res.status).toBe(200);
      expect(res.body.user).toMatchObject({ id: user.id, email: user.email, status: 'active' });
    }
    expect((await t.api().post('/api/v1/auth/logout').send({ refreshToken: user.refreshToken })).status).toBe(200);
    const after = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(user.accessToken));
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('INVALID_TOKEN');
  });

  it('refuses a remembered token after its exp with TOKEN_EXPIRED, and a forged copy of it always', async () => {
    const user = await signedInUser(t);
    expect(
      (
        await t
          .api()
          .get('/api/v1/auth/me')
          .set(...bearer(user.accessToken))
      ).status,
    ).toBe(200);
    const [h, p, s] = user.accessToken.split('.');
    const forged = `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BA' : 'AA'}`;
    const refused = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(forged));
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('INVALID_TOKEN');
    t.clock.advance(901);
    const expired = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(user.accessToken));
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe('TOKEN_EXPIRED');
  });

  it('rotates a refresh token once: the successor works, the old one is reuse after the leeway', async () => {
    const user = await signedInUser(t);
    const first = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken });
    expect(first.status).toBe(200);
    const successor = first.body.tokens.refreshToken as string;
    expect(successor).not.toBe(user.refreshToken);
    const me = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(first.body.tokens.accessToken));
    expect(me.body.user.id).toBe(user.id);
    t.clock.advance(11);
    const reused = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken });
    expect(reused.status).toBe(401);
    expect(reused.body.error.code).toBe('INVALID_TOKEN');
    // Reuse revoked the session: the successor is dead too.
    expect((await t.api().post('/api/v1/auth/refresh').send({ refreshToken: successor })).status).toBe(401);
  });

  it('lets exactly one of two concurrent rotations win; the loser gets the same successor within the leeway', async () => {
    const user = await signedInUser(t);
    const [a, b] = await Promise.all([
      t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken }),
      t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.tokens.refreshToken).toBe(b.body.tokens.refreshToken);
    const next = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: a.body.tokens.refreshToken });
    expect(next.status).toBe(200);
  });

  // Plans for a realm that grew after the database was created (its statistics are those of the
  // start; where autovacuum is off they stay so): rows written in bulk, not analysed again.
  onPostgres("reads the session of every authenticated request by its primary key, in the prepared statement's generic plan", async () => {
    const user = await signedInUser(t);
    const { sid, sub } = claims(user.accessToken);
    await t.dataSource.query(
      `INSERT INTO sessions SELECT (jsonb_populate_record(NULL::sessions, to_jsonb(s) || jsonb_build_object('id', gen_random_uuid()))).*
       FROM sessions s, generate_series(1, 3000) WHERE s.id = $1`,
      [sid],
    );
    const plan = await genericPlan(USER_WITH_LIVE_SESSION, `'${sid}', 'default', '${sub}', now(), 604800, 2592000`);
    expect(plan.rows).toEqual([{ user: expect.objectContaining({ id: user.id, email: user.email }) }]);
    expect(plan.indexes).toContain('sessions_pkey');
    expect(plan.indexes.filter((name) => name.startsWith('sessions_') && name !== 'sessions_pkey')).toEqual([]);
  });

  onPostgres("finds a user by email through the unique index of (realm, email) in the lookup's generic plan", async () => {
    const user = await signedInUser(t);
    await t.dataSource.query(
      `INSERT INTO users (id, realm_id, email, first_name, created_at, updated_at)
       SELECT gen_random_uuid(), 'default', 'bulk-' || i || '@example.com', 'Bulk', now(), now() FROM generate_series(1, 3000) i`,
    );
    const plan = await genericPlan(USER_BY_EMAIL, `'default', '${user.email}'`);
    expect(plan.rows).toEqual([expect.objectContaining({ id: user.id })]);
    expect(plan.indexes).toEqual(['users_realm_email_uq']);
  });

  it('leaves no table of a freshly migrated database without statistics', async () => {
    const fresh = await createTestApp();
    try {
      const rows: { name: string }[] = await fresh.dataSource.query(
        `SELECT c.relname AS name FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.reltuples < 0`,
      );
      expect(rows).toEqual([]);
    } finally {
      await fresh.close();
    }
  });

  /** The rows of `sql` for `args`, and the indexes of the generic plan a pooled connection may settle on after five executions. */
  async function genericPlan(sql: string, args: string): Promise<{ rows: unknown[]; indexes: string[] }> {
    const client = new Client({ connectionString: t.database.databaseUrl! });
    await client.connect();
    try {
      await client.query('SET plan_cache_mode = force_generic_plan');
      await client.query(`PREPARE statement AS ${sql}`);
      const { rows } = await client.query(`EXECUTE statement(${args})`);
      const [explained] = (await client.query(`EXPLAIN (FORMAT JSON) EXECUTE statement(${args})`)).rows;
      return { rows, indexes: indexesOf(explained['QUERY PLAN'][0].Plan) };
    } finally {
      await client.end();
    }
  }
});
