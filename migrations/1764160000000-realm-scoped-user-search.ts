import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The users list's `search` (a case-insensitive substring of email or name) reads realm-scoped
 * trigram indexes: GIN over (realm_id, lower(…)) with btree_gin for the realm key (a trusted
 * extension on PostgreSQL ≥ 13, bundled with PGlite). The realm's entries are intersected inside
 * the index, so a plan made once for every realm (a prepared statement) stays as good as one made
 * for the call: before, a generic plan ANDed the realm's whole B-tree into the trigram bitmap.
 */
export class RealmScopedUserSearch1764160000000 implements MigrationInterface {
  name = 'RealmScopedUserSearch1764160000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE EXTENSION IF NOT EXISTS btree_gin;
      CREATE INDEX users_realm_email_search_idx ON users USING gin (realm_id, lower(email) gin_trgm_ops);
      CREATE INDEX users_realm_name_search_idx ON users USING gin (realm_id, lower(first_name || ' ' || last_name) gin_trgm_ops);
      DROP INDEX users_email_trgm_idx;
      DROP INDEX users_name_trgm_idx;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX users_email_trgm_idx ON users USING gin (email gin_trgm_ops);
      CREATE INDEX users_name_trgm_idx ON users USING gin ((first_name || ' ' || last_name) gin_trgm_ops);
      DROP INDEX users_realm_name_search_idx;
      DROP INDEX users_realm_email_search_idx;
    `);
  }
}
