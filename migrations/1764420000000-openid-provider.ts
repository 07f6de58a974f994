import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The realm as an OpenID provider. `op_artifacts` holds what the provider library stores (its
 * sessions, interactions, grants, codes, tokens…), one row per (realm, model, id) with the
 * library's payload as it gives it; `grant_id`, `uid` and `user_code` are the look-ups it makes
 * besides the id, and `expires_at` is what housekeeping purges by. `id_token_keys` holds the RSA
 * keys ID tokens are signed with (RS256, the OpenID default), beside the ES256 `signing_keys`.
 */
export class OpenidProvider1764420000000 implements MigrationInterface {
  name = 'OpenidProvider1764420000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE op_artifacts (
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        model text NOT NULL,
        id text NOT NULL,
        payload jsonb NOT NULL,
        grant_id text NULL,
        uid text NULL,
        user_code text NULL,
        expires_at timestamptz NULL,
        consumed_at timestamptz NULL,
        PRIMARY KEY (realm_id, model, id)
      );
      CREATE INDEX op_artifacts_grant_idx ON op_artifacts (realm_id, grant_id) WHERE grant_id IS NOT NULL;
      CREATE INDEX op_artifacts_uid_idx ON op_artifacts (realm_id, model, uid) WHERE uid IS NOT NULL;
      CREATE INDEX op_artifacts_user_code_idx ON op_artifacts (realm_id, model, user_code) WHERE user_code IS NOT NULL;
      CREATE INDEX op_artifacts_account_idx ON op_artifacts (realm_id, (payload->>'accountId')) WHERE model = 'Grant';
      CREATE INDEX op_artifacts_expires_idx ON op_artifacts (expires_at) WHERE expires_at IS NOT NULL;
      CREATE TABLE id_token_keys (
        kid text PRIMARY KEY,
        algorithm text NOT NULL,
        private_key text NOT NULL,
        public_jwk jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        retired_at timestamptz NULL
      );
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE id_token_keys; DROP TABLE op_artifacts;`);
  }
}
