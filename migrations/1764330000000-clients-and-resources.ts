import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each realm an OpenID provider: its clients (a confidential client's secret kept only as a
 * SHA-256 hash), the API resources tokens are for, and the initial access tokens of dynamic
 * registration (hashes, single use). A client names its resources by identifier; deleting a
 * resource takes it from the clients in the same transaction.
 */
export class ClientsAndResources1764330000000 implements MigrationInterface {
  name = 'ClientsAndResources1764330000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE oauth_resources (
        id uuid PRIMARY KEY,
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        identifier text NOT NULL,
        name text NOT NULL,
        scopes jsonb NOT NULL,
        access_token_ttl_seconds integer NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CONSTRAINT oauth_resources_identifier_key UNIQUE (realm_id, identifier)
      )`);
    await q.query(`
      CREATE TABLE oauth_clients (
        client_id text PRIMARY KEY,
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        name text NOT NULL,
        type text NOT NULL CHECK (type IN ('public', 'confidential')),
        secret_hash text NULL,
        redirect_uris text[] NOT NULL,
        post_logout_redirect_uris text[] NOT NULL,
        grant_types text[] NOT NULL,
        scopes text[] NOT NULL,
        resources text[] NOT NULL,
        first_party boolean NOT NULL,
        backchannel_logout_uri text NULL,
        token_endpoint_auth_method text NOT NULL,
        jwks_uri text NULL,
        access_token_ttl_seconds integer NULL,
        id_token_signed_response_alg text NOT NULL,
        registered_by text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CONSTRAINT oauth_clients_secret_check CHECK ((type = 'confidential') = (secret_hash IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX oauth_clients_realm_idx ON oauth_clients (realm_id, created_at)`);
    await q.query(`CREATE INDEX oauth_clients_resources_idx ON oauth_clients USING gin (resources)`);
    await q.query(`
      CREATE TABLE initial_access_tokens (
        token_hash text PRIMARY KEY,
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz NULL
      )`);
    await q.query(`CREATE INDEX initial_access_tokens_expiry_idx ON initial_access_tokens (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE initial_access_tokens`);
    await q.query(`DROP TABLE oauth_clients`);
    await q.query(`DROP TABLE oauth_resources`);
  }
}
