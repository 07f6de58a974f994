import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Organizations inside a realm: their domains (each in at most one organization of the realm,
 * the primary key says so), their members with organization roles, and their invitations (the
 * link's token kept only as a SHA-256 hash; at most one pending invitation per organization and
 * address). The organization's `member_count` is kept by statement triggers in the transaction
 * that adds or removes members (a user's deletion included), so its lists give an exact total
 * without counting. A session remembers its active organization: a nullable column, written by
 * `POST /organizations/active` only, so sign-ins and refreshes of sessions without one read
 * nothing more.
 */
export class Organizations1764520000000 implements MigrationInterface {
  name = 'Organizations1764520000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE organizations (
        id uuid PRIMARY KEY,
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        name text NOT NULL,
        slug text NOT NULL,
        domains text[] NOT NULL,
        identity_provider text NULL,
        require_identity_provider boolean NOT NULL DEFAULT false,
        member_count integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CONSTRAINT organizations_slug_key UNIQUE (realm_id, slug),
        CONSTRAINT organizations_provider_check CHECK (NOT require_identity_provider OR identity_provider IS NOT NULL)
      )`);
    await q.query(`CREATE INDEX organizations_realm_idx ON organizations (realm_id, created_at, id)`);
    await q.query(`
      CREATE TABLE organization_domains (
        realm_id text NOT NULL,
        domain text NOT NULL,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        PRIMARY KEY (realm_id, domain)
      )`);
    await q.query(`CREATE INDEX organization_domains_organization_idx ON organization_domains (organization_id)`);
    await q.query(`
      CREATE TABLE organization_members (
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        realm_id text NOT NULL,
        roles text[] NOT NULL,
        joined_at timestamptz NOT NULL,
        PRIMARY KEY (organization_id, user_id)
      )`);
    // The members list's order (joined_at, user_id), and a user's memberships.
    await q.query(`CREATE INDEX organization_members_page_idx ON organization_members (organization_id, joined_at, user_id)`);
    await q.query(`CREATE INDEX organization_members_user_idx ON organization_members (user_id)`);
    await q.query(`
      CREATE FUNCTION organization_member_count() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE organizations o SET member_count = o.member_count + (CASE WHEN TG_OP = 'INSERT' THEN d.n ELSE -d.n END)
          FROM (SELECT organization_id, count(*) AS n FROM counted_rows GROUP BY organization_id ORDER BY organization_id) d
          WHERE o.id = d.organization_id;
        RETURN NULL;
      END $$;
      CREATE TRIGGER organization_members_insert AFTER INSERT ON organization_members
        REFERENCING NEW TABLE AS counted_rows FOR EACH STATEMENT EXECUTE FUNCTION organization_member_count();
      CREATE TRIGGER organization_members_delete AFTER DELETE ON organization_members
        REFERENCING OLD TABLE AS counted_rows FOR EACH STATEMENT EXECUTE FUNCTION organization_member_count();
    `);
    await q.query(`
      CREATE TABLE organization_invitations (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        realm_id text NOT NULL,
        email text NOT NULL,
        roles text[] NOT NULL,
        token_hash text NOT NULL,
        invited_by uuid NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'accepted', 'revoked', 'replaced')),
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        ended_at timestamptz NULL,
        CONSTRAINT organization_invitations_token_key UNIQUE (token_hash)
      )`);
    await q.query(
      `CREATE UNIQUE INDEX organization_invitations_pending_key ON organization_invitations (organization_id, email) WHERE status = 'pending'`,
    );
    await q.query(`ALTER TABLE sessions ADD COLUMN active_organization_id uuid NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions DROP COLUMN active_organization_id`);
    await q.query(`DROP TABLE organization_invitations`);
    await q.query(`DROP TABLE organization_members`);
    await q.query(`DROP FUNCTION organization_member_count()`);
    await q.query(`DROP TABLE organization_domains`);
    await q.query(`DROP TABLE organizations`);
  }
}
