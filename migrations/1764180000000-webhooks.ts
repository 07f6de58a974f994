import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks and their deliveries (an outbox like email_outbox). A delivery is written in the
 * statement or transaction of its audit event; it names its webhook without a foreign key, so
 * that hot-path insert never waits on a webhook row being changed (deleting a webhook deletes
 * its deliveries itself). Secrets are stored encrypted.
 */
export class Webhooks1764180000000 implements MigrationInterface {
  name = 'Webhooks1764180000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks (
        id uuid PRIMARY KEY,
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        url text NOT NULL,
        events text[] NOT NULL,
        description text NULL,
        enabled boolean NOT NULL,
        secret text NOT NULL,
        previous_secret text NULL,
        previous_secret_expires_at timestamptz NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX webhooks_realm_idx ON webhooks (realm_id, created_at)`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY,
        webhook_id uuid NOT NULL,
        realm_id text NOT NULL,
        event_id uuid NOT NULL,
        type text NOT NULL,
        status text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL,
        locked_until timestamptz NULL,
        last_status_code integer NULL,
        last_error text NULL,
        last_attempt_at timestamptz NULL,
        created_at timestamptz NOT NULL,
        delivered_at timestamptz NULL
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX webhook_deliveries_failed_idx ON webhook_deliveries (webhook_id) WHERE status = 'failed'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhooks`);
  }
}
