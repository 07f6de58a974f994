import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-realm settings. Every setting is a nullable column: null follows the deployment default
 * (the environment), so existing realms keep behaving as before. The ranges repeat the domain's
 * as CHECK constraints, a last line against a bad write. Nullable columns without a default, and
 * `enabled` and `updated_at` with non-volatile defaults, rewrite nothing; `updated_at` of the
 * existing realms starts at their `created_at`.
 */
export class RealmSettings1764190000000 implements MigrationInterface {
  name = 'RealmSettings1764190000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE realms
        ADD COLUMN enabled boolean NOT NULL DEFAULT true,
        ADD COLUMN public_url text NULL,
        ADD COLUMN webauthn_rp_id text NULL,
        ADD COLUMN webauthn_rp_name text NULL,
        ADD COLUMN webauthn_origins text[] NULL,
        ADD COLUMN registration text NULL CHECK (registration IN ('open', 'closed')),
        ADD COLUMN require_verified_email boolean NULL,
        ADD COLUMN session_idle_timeout_seconds integer NULL CHECK (session_idle_timeout_seconds BETWEEN 300 AND 31536000),
        ADD COLUMN session_max_lifetime_seconds integer NULL CHECK (session_max_lifetime_seconds BETWEEN 300 AND 31536000),
        ADD COLUMN lockout_max_failures integer NULL CHECK (lockout_max_failures BETWEEN 1 AND 100),
        ADD COLUMN lockout_duration_seconds integer NULL CHECK (lockout_duration_seconds BETWEEN 0 AND 86400),
        ADD COLUMN password_min_length integer NULL CHECK (password_min_length BETWEEN 8 AND 128),
        ADD COLUMN fingerprint_match_threshold double precision NULL CHECK (fingerprint_match_threshold BETWEEN 0.5 AND 0.95),
        ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now()
    `);
    await q.query(`UPDATE realms SET updated_at = created_at`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE realms
        DROP COLUMN enabled, DROP COLUMN public_url, DROP COLUMN webauthn_rp_id, DROP COLUMN webauthn_rp_name,
        DROP COLUMN webauthn_origins, DROP COLUMN registration, DROP COLUMN require_verified_email,
        DROP COLUMN session_idle_timeout_seconds, DROP COLUMN session_max_lifetime_seconds, DROP COLUMN lockout_max_failures,
        DROP COLUMN lockout_duration_seconds, DROP COLUMN password_min_length, DROP COLUMN fingerprint_match_threshold,
        DROP COLUMN updated_at
    `);
  }
}
