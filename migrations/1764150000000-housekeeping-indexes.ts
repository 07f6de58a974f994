import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes the housekeeping purges read through, so each batch finds its rows without scanning
 * the table: sessions that ended by idling (live sessions by last activity), used one-time
 * tokens, and audit events by time across realms. Revoked and absolutely expired sessions,
 * expired tokens and delivered emails already have theirs.
 */
export class HousekeepingIndexes1764150000000 implements MigrationInterface {
  name = 'HousekeepingIndexes1764150000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX sessions_idle_idx ON sessions (last_active_at) WHERE revoked_at IS NULL;
      CREATE INDEX one_time_tokens_used_idx ON one_time_tokens (used_at) WHERE used_at IS NOT NULL;
      CREATE INDEX audit_events_at_idx ON audit_events (at);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX audit_events_at_idx; DROP INDEX one_time_tokens_used_idx; DROP INDEX sessions_idle_idx;`);
  }
}
