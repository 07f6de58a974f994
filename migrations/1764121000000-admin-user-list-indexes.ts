import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes for the administrative users list: each sort is served by one index read
 * forwards or backwards (with `id` as the tie-breaker in the same direction), the total by an
 * index-only scan of a narrow index, and `search` — a case-insensitive substring of email or
 * name — by trigram GIN indexes (pg_trgm, a trusted extension on PostgreSQL ≥ 13, bundled with
 * PGlite). Measured by bench/admin-users-list.mjs.
 */
export class AdminUserListIndexes1764121000000 implements MigrationInterface {
  name = 'AdminUserListIndexes1764121000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE EXTENSION IF NOT EXISTS pg_trgm;
      DROP INDEX IF EXISTS users_realm_created_idx;
      DROP INDEX IF EXISTS users_realm_last_login_idx;
      DROP INDEX IF EXISTS users_realm_status_created_idx;
      CREATE INDEX users_realm_created_id_idx ON users (realm_id, created_at, id);
      CREATE INDEX users_realm_last_login_id_idx ON users (realm_id, last_login_at NULLS FIRST, id);
      -- Narrow (and, with B-tree deduplication, small) indexes that answer the list's count by an
      -- index-only scan, and pick out the rare statuses for a page.
      CREATE INDEX users_realm_status_lock_idx ON users (realm_id, status, locked_until);
      CREATE INDEX users_realm_verified_idx ON users (realm_id, email_verified);
      CREATE INDEX users_email_trgm_idx ON users USING gin (email gin_trgm_ops);
      CREATE INDEX users_name_trgm_idx ON users USING gin ((first_name || ' ' || last_name) gin_trgm_ops);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX users_name_trgm_idx;
      DROP INDEX users_email_trgm_idx;
      DROP INDEX users_realm_verified_idx;
      DROP INDEX users_realm_status_lock_idx;
      DROP INDEX users_realm_last_login_id_idx;
      DROP INDEX users_realm_created_id_idx;
      CREATE INDEX users_realm_created_idx ON users (realm_id, created_at DESC, id);
      CREATE INDEX users_realm_last_login_idx ON users (realm_id, last_login_at DESC NULLS LAST, id);
      CREATE INDEX users_realm_status_created_idx ON users (realm_id, status, created_at DESC);
    `);
  }
}
