import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Roles become something a realm defines before assigning (`realm_roles`; the built-ins
 * `realm-admin` and `super-admin` are not stored), and users get administrator-set metadata that
 * access tokens carry (`users.app_metadata`).
 *
 * Every role already assigned in a realm becomes a role that realm defines, so no assignment is
 * lost or left undefined. That read of `users` takes no lock that blocks writes; the column comes
 * after it, so the table's exclusive lock lasts only from the ALTER to the commit (a column with
 * a constant default rewrites nothing). `lock_timeout` keeps that ALTER from queueing every
 * other query of `users` behind a long transaction: it fails instead, and the migration can be
 * run again.
 */
export class RealmRolesAndAppMetadata1764290000000 implements MigrationInterface {
  name = 'RealmRolesAndAppMetadata1764290000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE realm_roles (
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        name text NOT NULL,
        description text NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (realm_id, name)
      );
      INSERT INTO realm_roles (realm_id, name, created_at)
      SELECT DISTINCT u.realm_id, assigned.name, now()
      FROM users u CROSS JOIN LATERAL unnest(u.roles) AS assigned(name)
      WHERE assigned.name NOT IN ('realm-admin', 'super-admin');
      SET LOCAL lock_timeout = '5s';
      ALTER TABLE users ADD COLUMN app_metadata jsonb NOT NULL DEFAULT '{}'::jsonb;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE users DROP COLUMN app_metadata;
      DROP TABLE realm_roles;
    `);
  }
}
