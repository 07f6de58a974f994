import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The live-session total of a realm is its kept count of open sessions less the open ones that
 * have ended by time (idle, or past their lifetime) and that housekeeping has not closed yet — a
 * few, counted from these two partial indexes alone (the third way to end, by creation time, reads
 * the existing sessions_realm_live_page_idx, which carries the other two columns).
 *
 * Built concurrently, outside a transaction: sessions stay writable while the indexes are built
 * (minutes on tens of millions of sessions). An interrupted build leaves an invalid index behind,
 * which the next run drops and builds again.
 */
export class SessionEndIndexes1764263000000 implements MigrationInterface {
  name = 'SessionEndIndexes1764263000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    for (const [name, columns] of [
      ['sessions_realm_open_expiry_idx', '(realm_id, expires_at)'],
      ['sessions_realm_open_activity_idx', '(realm_id, last_active_at) INCLUDE (expires_at)'],
    ]) {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      await q.query(`CREATE INDEX CONCURRENTLY ${name} ON sessions ${columns} WHERE revoked_at IS NULL`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS sessions_realm_open_activity_idx`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS sessions_realm_open_expiry_idx`);
  }
}
