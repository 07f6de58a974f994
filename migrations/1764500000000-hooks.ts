import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A realm's synchronous hooks: at most one of each name per realm, the endpoint the service calls
 * and waits for, its deadline and failure policy, and its signing secret (encrypted, bound to the
 * realm and the hook's name, since it must be read back to sign).
 */
export class Hooks1764500000000 implements MigrationInterface {
  name = 'Hooks1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE hooks (
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        name text NOT NULL CHECK (name IN ('before-registration', 'before-sign-in', 'token-claims')),
        url text NOT NULL,
        enabled boolean NOT NULL,
        timeout_ms integer NOT NULL CHECK (timeout_ms BETWEEN 100 AND 5000),
        failure text NOT NULL CHECK (failure IN ('deny', 'allow')),
        secret text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (realm_id, name)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE hooks`);
  }
}
