import { Client } from 'pg';
import { USER_WITH_LIVE_SESSION } from '../../src/adapters/persistence/typeorm-user.repository';
import { bearer, login, signedInUser } from '../support/flows';
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

  onPostgres(
    "reads the session of every authenticated request by its primary key, also in the prepared statement's generic plan before any statistics",
    async () => {
      const user = await signedInUser(t);
      for (let i = 0; i < 30; i++) expect((await login(t, user.email, user.password)).status).toBe(200);
      const { sid, sub } = claims(user.accessToken);
      const client = new Client({ connectionString: t.database.databaseUrl! });
      await client.connect();
      try {
        // What a pooled connection settles on after five executions when the table was never analysed.
        await client.query('SET plan_cache_mode = force_generic_plan');
        await client.query(`PREPARE live_user AS ${USER_WITH_LIVE_SESSION}`);
        const args = `'${sid}', 'default', '${sub}', now(), 604800, 2592000`;
        const [{ user: row }] = (await client.query(`EXECUTE live_user(${args})`)).rows;
        expect(row).toMatchObject({ id: user.id, email: user.email });
        const [explained] = (await client.query(`EXPLAIN (FORMAT JSON) EXECUTE live_user(${args})`)).rows;
        const indexes = indexesOf(explained['QUERY PLAN'][0].Plan);
        expect(indexes).toContain('sessions_pkey');
        expect(indexes.filter((name) => name.startsWith('sessions_') && name !== 'sessions_pkey')).toEqual([]);
      } finally {
        await client.end();
      }
    },
  );
});
