import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The whole schema of the service. Plain SQL that runs unchanged on PostgreSQL 15 and on the
 * embedded PGlite (PostgreSQL 18), so nothing newer than PostgreSQL 13 is used.
 */
export class InitialSchema1764028800000 implements MigrationInterface {
  name = 'InitialSchema1764028800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE realms (
        id text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
        name text NOT NULL,
        access_token_ttl_seconds integer NULL CHECK (access_token_ttl_seconds > 0),
        created_at timestamptz NOT NULL
      );

      CREATE TABLE users (
        id uuid PRIMARY KEY,
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        email text NOT NULL,
        email_verified boolean NOT NULL DEFAULT false,
        password_hash text NULL,
        first_name text NOT NULL,
        last_name text NOT NULL DEFAULT '',
        avatar text NULL,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'locked')),
        locked_until timestamptz NULL,
        failed_login_count integer NOT NULL DEFAULT 0,
        roles text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        last_login_at timestamptz NULL,
        CONSTRAINT users_realm_email_uq UNIQUE (realm_id, email)
      );
      CREATE INDEX users_realm_created_idx ON users (realm_id, created_at DESC, id);
      CREATE INDEX users_realm_last_login_idx ON users (realm_id, last_login_at DESC NULLS LAST, id);
      CREATE INDEX users_realm_status_created_idx ON users (realm_id, status, created_at DESC);
      CREATE INDEX users_realm_roles_idx ON users USING gin (roles);

      CREATE TABLE sessions (
        id uuid PRIMARY KEY,
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        device_id text NOT NULL,
        device_name text NOT NULL,
        device_type text NOT NULL,
        fingerprint text NULL,
        reference_fingerprint jsonb NOT NULL DEFAULT '{}'::jsonb,
        ip text NOT NULL,
        country text NULL,
        city text NULL,
        user_agent text NULL,
        amr text[] NOT NULL DEFAULT '{}',
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'flagged')),
        flag_reason text NULL,
        flag_score double precision NULL,
        flagged_at timestamptz NULL,
        created_at timestamptz NOT NULL,
        last_active_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz NULL,
        revoke_reason text NULL
      );
      CREATE INDEX sessions_user_live_idx ON sessions (user_id, created_at DESC) WHERE revoked_at IS NULL;
      CREATE INDEX sessions_realm_live_idx ON sessions (realm_id, created_at DESC) WHERE revoked_at IS NULL;
      CREATE INDEX sessions_ended_idx ON sessions (revoked_at) WHERE revoked_at IS NOT NULL;
      CREATE INDEX sessions_expires_idx ON sessions (expires_at);

      CREATE TABLE refresh_tokens (
        token_hash text PRIMARY KEY,
        session_id uuid NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL,
        rotated_at timestamptz NULL
      );
      CREATE INDEX refresh_tokens_session_idx ON refresh_tokens (session_id);

      CREATE TABLE totp_credentials (
        user_id uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
        secret_encrypted text NOT NULL,
        confirmed_at timestamptz NULL,
        last_used_step bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL
      );

      CREATE TABLE webauthn_credentials (
        id text PRIMARY KEY CHECK (length(id) <= 1400),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name text NOT NULL,
        public_key bytea NOT NULL,
        counter bigint NOT NULL DEFAULT 0,
        transports text[] NOT NULL DEFAULT '{}',
        device_type text NULL,
        backed_up boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL,
        last_used_at timestamptz NULL
      );
      CREATE INDEX webauthn_credentials_user_idx ON webauthn_credentials (user_id);

      CREATE TABLE recovery_codes (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        code_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        used_at timestamptz NULL
      );
      CREATE INDEX recovery_codes_user_idx ON recovery_codes (user_id);

      -- Single-use tokens: email verification, password reset, MFA challenge. Only hashes are kept.
      CREATE TABLE one_time_tokens (
        token_hash text PRIMARY KEY,
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('email_verification', 'password_reset', 'mfa')),
        email text NULL,
        payload jsonb NOT NULL DEFAULT '{}'::jsonb,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz NULL
      );
      CREATE INDEX one_time_tokens_user_kind_idx ON one_time_tokens (user_id, kind);
      CREATE INDEX one_time_tokens_expires_idx ON one_time_tokens (expires_at);

      CREATE TABLE signing_keys (
        kid text PRIMARY KEY,
        algorithm text NOT NULL,
        private_key text NOT NULL,
        public_jwk jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        retired_at timestamptz NULL
      );

      -- Server-side secrets shared by every instance (refresh-successor HMAC key, generated MFA key).
      CREATE TABLE server_secrets (
        name text PRIMARY KEY,
        value text NOT NULL,
        created_at timestamptz NOT NULL
      );

      CREATE TABLE audit_events (
        id uuid PRIMARY KEY,
        realm_id text NOT NULL,
        type text NOT NULL,
        user_id uuid NULL,
        actor_id uuid NULL,
        session_id uuid NULL,
        ip text NULL,
        at timestamptz NOT NULL,
        details jsonb NOT NULL DEFAULT '{}'::jsonb
      );
      CREATE INDEX audit_events_realm_at_idx ON audit_events (realm_id, at DESC);
      CREATE INDEX audit_events_realm_type_at_idx ON audit_events (realm_id, type, at DESC);
      CREATE INDEX audit_events_realm_user_at_idx ON audit_events (realm_id, user_id, at DESC);

      CREATE TABLE email_outbox (
        id uuid PRIMARY KEY,
        realm_id text NOT NULL,
        recipient text NOT NULL,
        subject text NOT NULL,
        text_body text NOT NULL,
        html_body text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL,
        locked_until timestamptz NULL,
        last_error text NULL,
        created_at timestamptz NOT NULL,
        sent_at timestamptz NULL
      );
      CREATE INDEX email_outbox_due_idx ON email_outbox (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX email_outbox_sent_idx ON email_outbox (sent_at) WHERE status = 'sent';
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE email_outbox; DROP TABLE audit_events; DROP TABLE server_secrets; DROP TABLE signing_keys;
      DROP TABLE one_time_tokens; DROP TABLE recovery_codes; DROP TABLE webauthn_credentials;
      DROP TABLE totp_credentials; DROP TABLE refresh_tokens; DROP TABLE sessions; DROP TABLE users;
      DROP TABLE realms;
    `);
  }
}
