import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sign-in with external OpenID Connect providers: the realm's providers (client secret stored
 * encrypted, the discovered metadata kept so a sign-in needs no discovery round trip), the
 * accounts linked to users — keyed by (provider, subject), never by email — and the short-lived
 * flow tokens (the `state` of a sign-in at the provider and the login code handed back to the
 * app), stored only as hashes so a callback or an exchange may land on any instance.
 */
export class Federation1764240000000 implements MigrationInterface {
  name = 'Federation1764240000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE identity_providers (
        id uuid PRIMARY KEY,
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        alias text NOT NULL,
        display_name text NOT NULL,
        issuer text NOT NULL,
        client_id text NOT NULL,
        client_secret text NULL,
        scopes text[] NOT NULL,
        enabled boolean NOT NULL,
        trust_email_verified boolean NOT NULL,
        metadata jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CONSTRAINT identity_providers_alias_key UNIQUE (realm_id, alias)
      )`);
    await q.query(`
      CREATE TABLE user_identities (
        id uuid PRIMARY KEY,
        realm_id text NOT NULL,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        provider_id uuid NOT NULL REFERENCES identity_providers(id) ON DELETE CASCADE,
        subject text NOT NULL,
        email text NULL,
        linked_at timestamptz NOT NULL,
        last_used_at timestamptz NULL,
        CONSTRAINT user_identities_subject_key UNIQUE (provider_id, subject)
      )`);
    await q.query(`CREATE INDEX user_identities_user_idx ON user_identities (user_id, linked_at)`);
    await q.query(`
      CREATE TABLE federation_tokens (
        token_hash text PRIMARY KEY,
        kind text NOT NULL,
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        provider_id uuid NOT NULL REFERENCES identity_providers(id) ON DELETE CASCADE,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz NULL
      )`);
    await q.query(`CREATE INDEX federation_tokens_expiry_idx ON federation_tokens (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE federation_tokens`);
    await q.query(`DROP TABLE user_identities`);
    await q.query(`DROP TABLE identity_providers`);
  }
}
