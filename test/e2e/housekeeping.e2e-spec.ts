import { Client } from 'pg';
import { HousekeepingReport, HousekeepingUseCase } from '../../src/application/housekeeping/housekeeping.use-case';
import { JOB_LOCK_NAMESPACE, jobLockKey } from '../../src/adapters/persistence/advisory-job-lock';
import { createTestApp, TestApp } from '../support/test-app';
import { bearer, register, signedInUser } from '../support/flows';

const DAY = 86_400;
const onPostgres = process.env.DATABASE_URL ? it : it.skip;

function decodeKid(token: string): string {
  return JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).kid as string;
}

async function sessionIdOf(accessToken: string): Promise<string> {
  return JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString()).sid as string;
}

async function exists(t: TestApp, table: string, column: string, value: string): Promise<boolean> {
  const rows: unknown[] = await t.dataSource.query(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [value]);
  return rows.length > 0;
}

async function count(t: TestApp, sql: string, params: unknown[] = []): Promise<number> {
  const [row] = await t.dataSource.query(`SELECT count(*)::int AS n FROM ${sql}`, params);
  return Number(row.n);
}

async function logout(t: TestApp, refreshToken: string): Promise<void> {
  expect((await t.api().post('/api/v1/auth/logout').send({ refreshToken })).status).toBe(200);
}

async function verificationToken(t: TestApp, email: string): Promise<string> {
  const [mail] = await t.dataSource.query(`SELECT text_body FROM email_outbox WHERE recipient = $1 ORDER BY created_at LIMIT 1`, [email]);
  return /token=([A-Za-z0-9_-]+)/.exec(mail.text_body as string)![1];
}

const nothing = {
  ran: true,
  closedSessions: 0,
  sessions: 0,
  oneTimeTokens: 0,
  deliveredEmails: 0,
  deliveredWebhooks: 0,
  auditEvents: 0,
  opArtifacts: 0,
  stalled: [],
  rotatedKey: null,
  rotatedIdTokenKey: null,
};

describe('housekeeping: retention purges and signing-key rotation', () => {
  let t: TestApp;
  let housekeeping: HousekeepingUseCase;

  beforeEach(async () => {
    t = await createTestApp({ env: { SESSION_RETENTION_DAYS: '30', AUDIT_RETENTION_DAYS: '30', KEY_ROTATION_DAYS: '30' } });
    housekeeping = t.app.get(HousekeepingUseCase);
  });
  afterEach(async () => {
    await t?.close();
  });

  it('deletes ended sessions, spent tokens, delivered emails and old audit events in batches; keeps the rest; rotates the key', async () => {
    const t0 = t.clock.now();
    // Day 0: three sessions that will have ended more than 30 days ago, and five email tokens.
    const revokedLongAgo = await signedInUser(t);
    await logout(t, revokedLongAgo.refreshToken);
    const idle = await signedInUser(t); // never used again: idle-expired after 7 days
    const outlived = await signedInUser(t); // its absolute lifetime ran out 31 days before the run
    const verifiedUser = await register(t);
    expect(
      (
        await t
          .api()
          .post('/api/v1/auth/verify-email')
          .send({ token: await verificationToken(t, verifiedUser.email) })
      ).status,
    ).toBe(200);
    await register(t); // its verification token just expires
    const day0Mail: { id: string }[] = await t.dataSource.query(`SELECT id FROM email_outbox ORDER BY created_at LIMIT 2`);
    await t.dataSource.query(`UPDATE email_outbox SET status = 'sent', sent_at = $1 WHERE id = ANY($2::uuid[])`, [
      t0,
      day0Mail.map((m) => m.id),
    ]);
    // Webhook deliveries of day 0: delivered (purged a week later), failed and pending (kept).
    const delivery = (status: string, deliveredAt: Date | null) =>
      t.dataSource.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, realm_id, event_id, type, status, attempts, next_attempt_at, created_at, delivered_at)
         VALUES (gen_random_uuid(), gen_random_uuid(), 'default', gen_random_uuid(), 'login.succeeded', $1, 1, $2, $2, $3)`,
        [status, t0, deliveredAt],
      );
    await delivery('delivered', t0);
    await delivery('delivered', t0);
    await delivery('failed', null);
    await delivery('pending', null);
    const oldKid = decodeKid(revokedLongAgo.accessToken);
    const oldAudit = await count(t, 'audit_events');
    expect(oldAudit).toBeGreaterThan(5);

    t.clock.advance(40 * DAY);
    const now = t.clock.now();
    // Day 40: what must stay.
    const live = await signedInUser(t);
    const revokedRecently = await signedInUser(t);
    await logout(t, revokedRecently.refreshToken);
    const freshUser = await register(t);
    const recentMail: { id: string }[] = await t.dataSource.query(`SELECT id FROM email_outbox WHERE recipient = $1`, [freshUser.email]);
    await t.dataSource.query(`UPDATE email_outbox SET status = 'sent', sent_at = $1 WHERE id = $2`, [
      new Date(now.getTime() - DAY * 1000),
      recentMail[0].id,
    ]);
    const outlivedSid = await sessionIdOf(outlived.accessToken);
    await t.dataSource.query(`UPDATE sessions SET last_active_at = $1, expires_at = $2 WHERE id = $3`, [
      now,
      new Date(now.getTime() - 31 * DAY * 1000),
      outlivedSid,
    ]);
    const recentAudit = await count(t, 'audit_events WHERE at > $1', [new Date(now.getTime() - DAY * 1000)]);
    const pendingMail = await count(t, `email_outbox WHERE status = 'pending'`);

    const report = await housekeeping.execute({ batchSize: 2 });

    expect(report).toEqual({
      ran: true,
      closedSessions: 2, // idle and outlived: marked revoked when they ended, then purged with the revoked one
      sessions: 3,
      oneTimeTokens: 5,
      deliveredEmails: 2,
      deliveredWebhooks: 2,
      auditEvents: oldAudit,
      opArtifacts: 0,
      stalled: [],
      rotatedKey: expect.any(String),
      rotatedIdTokenKey: null, // none yet: the first is made when a realm's provider first needs it
    });
    expect(await t.dataSource.query(`SELECT status FROM webhook_deliveries ORDER BY status`)).toEqual([
      { status: 'failed' },
      { status: 'pending' },
    ]);
    const gone = [revokedLongAgo, idle, outlived].map((u) => sessionIdOf(u.accessToken));
    for (const sid of await Promise.all(gone)) {
      expect(await exists(t, 'sessions', 'id', sid)).toBe(false);
      expect(await exists(t, 'refresh_tokens', 'session_id', sid)).toBe(false);
    }
    for (const user of [live, revokedRecently]) {
      const sid = await sessionIdOf(user.accessToken);
      expect(await exists(t, 'sessions', 'id', sid)).toBe(true);
      expect(await exists(t, 'refresh_tokens', 'session_id', sid)).toBe(true);
    }
    expect(await count(t, 'one_time_tokens')).toBe(3); // the day-40 registrations' unused tokens
    expect(await count(t, 'one_time_tokens WHERE created_at < $1', [now])).toBe(0);
    expect(await count(t, `email_outbox WHERE status = 'sent'`)).toBe(1);
    expect(await count(t, `email_outbox WHERE status = 'pending'`)).toBe(pendingMail);
    expect(await count(t, 'audit_events WHERE at < $1', [new Date(now.getTime() - 30 * DAY * 1000)])).toBe(0);
    expect(await count(t, 'audit_events')).toBe(recentAudit);
    // The live session still works; the recently ended one is still refused.
    expect((await t.api().post('/api/v1/auth/refresh').send({ refreshToken: live.refreshToken })).status).toBe(200);
    expect((await t.api().post('/api/v1/auth/refresh').send({ refreshToken: revokedRecently.refreshToken })).status).toBe(401);

    // The new key signs; the previous one stays published and its tokens keep verifying.
    const jwks = (await t.api().get('/.well-known/jwks.json')).body as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toEqual([report.rotatedKey, oldKid]);
    expect(decodeKid(live.accessToken)).toBe(oldKid);
    expect(
      (
        await t
          .api()
          .get('/api/v1/auth/me')
          .set(...bearer(live.accessToken))
      ).status,
    ).toBe(200);
    const after = await signedInUser(t);
    expect(decodeKid(after.accessToken)).toBe(report.rotatedKey);

    // Nothing left to do: the next run deletes nothing and keeps the key.
    expect(await housekeeping.execute()).toEqual(nothing);
    expect(await count(t, 'signing_keys')).toBe(2);
  });

  it('runs once when two runs start together: one does the work, the other skips', async () => {
    const user = await signedInUser(t);
    await logout(t, user.refreshToken);
    t.clock.advance(40 * DAY);
    const keysBefore = await count(t, 'signing_keys');

    const reports = await Promise.all([housekeeping.execute(), housekeeping.execute()]);

    // Exactly one run did the work; the other was refused the lock (or, on PostgreSQL, came
    // after the first had let go and found nothing left to do).
    const workers = reports.filter((r) => r.sessions > 0 || r.rotatedKey !== null);
    expect(workers).toHaveLength(1);
    expect(workers[0]).toMatchObject({ ran: true, sessions: 1, oneTimeTokens: 1, rotatedKey: expect.any(String) });
    const idleRun = reports.find((r) => r !== workers[0])!;
    expect([{ ...nothing, ran: false }, nothing]).toContainEqual(idleRun);
    if (!t.config.databaseUrl) expect(idleRun.ran).toBe(false); // in-process lock: decided synchronously
    expect(await count(t, 'signing_keys')).toBe(keysBefore + 1);
  });

  it('stops between batches when asked to (shutdown)', async () => {
    for (let i = 0; i < 3; i += 1) {
      const user = await signedInUser(t);
      await logout(t, user.refreshToken);
    }
    t.clock.advance(40 * DAY);
    const realms = await count(t, 'realms');
    let asked = 0;
    const report = await housekeeping.execute({ batchSize: 1, shouldStop: () => ++asked > 2 + realms });
    expect(report.ran).toBe(true);
    // Asked before the key rotation, before closing each realm's ended sessions (none), then before each batch.
    expect(report.sessions).toBe(1);
    expect(await count(t, 'sessions WHERE revoked_at IS NOT NULL')).toBe(2);
  });

  onPostgres(
    'a purge statement that runs past its time bound is undone and retried on fewer rows; rows it cannot reach wait for the next run',
    async () => {
      const user = await signedInUser(t);
      await logout(t, user.refreshToken);
      for (let i = 0; i < 19; i += 1) {
        t.clock.advance(1);
        const res = await t.api().post('/api/v1/auth/login').send({ email: user.email, password: user.password });
        expect(res.status).toBe(200);
        await logout(t, res.body.tokens.refreshToken as string);
      }
      t.clock.advance(40 * DAY);
      expect(await count(t, 'sessions WHERE revoked_at IS NOT NULL')).toBe(20);
      // Another transaction holds the session that ended last: every purge batch that reaches it
      // waits for its lock, until the statement's time bound cancels it.
      const [last] = await t.dataSource.query(`SELECT id FROM sessions ORDER BY revoked_at DESC LIMIT 1`);
      const other = new Client({ connectionString: t.database.databaseUrl! });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query('SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE', [last.id]);
        const started = Date.now();
        const report = await housekeeping.execute();
        // 500, 250, 125, 62 and 31 rows reach the held one and are cancelled; 16 go; the next 16
        // are cancelled three times (with pauses between), and the purge gives up until the next run.
        expect(report).toMatchObject({ ran: true, sessions: 16, stalled: ['sessions'] });
        expect(report.auditEvents).toBeGreaterThan(0); // the other purges went on
        expect(Date.now() - started).toBeLessThan(5_000);
        expect(await count(t, 'sessions')).toBe(4);
        expect(await exists(t, 'sessions', 'id', last.id as string)).toBe(true);
      } finally {
        await other.query('ROLLBACK');
        await other.end();
      }
      expect(await housekeeping.execute()).toMatchObject({ sessions: 4, stalled: [] });
      expect(await count(t, 'sessions')).toBe(0);
    },
  );

  onPostgres('skips the run while another instance holds the lock', async () => {
    const user = await signedInUser(t);
    await logout(t, user.refreshToken);
    t.clock.advance(40 * DAY);
    const other = new Client({ connectionString: t.database.databaseUrl! });
    await other.connect();
    try {
      const [held] = (await other.query('SELECT pg_try_advisory_lock($1, $2) AS locked', [JOB_LOCK_NAMESPACE, jobLockKey('housekeeping')]))
        .rows;
      expect(held.locked).toBe(true);
      expect(await housekeeping.execute()).toEqual({ ...nothing, ran: false });
      expect(await count(t, 'sessions')).toBe(1);
      await other.query('SELECT pg_advisory_unlock($1, $2)', [JOB_LOCK_NAMESPACE, jobLockKey('housekeeping')]);
      expect((await housekeeping.execute()).sessions).toBe(1);
    } finally {
      await other.end();
    }
  });

  onPostgres('does the work once when two instances on one database run it at the same moment', async () => {
    const second = await createTestApp({
      database: t.database,
      env: { SESSION_RETENTION_DAYS: '30', AUDIT_RETENTION_DAYS: '30', KEY_ROTATION_DAYS: '30' },
    });
    try {
      for (let i = 0; i < 4; i += 1) {
        const user = await signedInUser(i % 2 ? t : second);
        await logout(i % 2 ? t : second, user.refreshToken);
      }
      t.clock.advance(40 * DAY);
      second.clock.advance(40 * DAY);
      const keysBefore = await count(t, 'signing_keys');

      const reports: HousekeepingReport[] = await Promise.all([housekeeping.execute(), second.app.get(HousekeepingUseCase).execute()]);

      expect(reports.some((r) => r.ran)).toBe(true);
      expect(reports.reduce((sum, r) => sum + r.sessions, 0)).toBe(4);
      expect(reports.reduce((sum, r) => sum + r.oneTimeTokens, 0)).toBe(4);
      expect(reports.filter((r) => r.rotatedKey !== null)).toHaveLength(1);
      expect(await count(t, 'signing_keys')).toBe(keysBefore + 1);
      expect(await count(t, 'sessions')).toBe(0);
    } finally {
      await second.close();
    }
  });
});
