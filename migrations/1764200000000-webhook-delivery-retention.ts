import { MigrationInterface, QueryRunner } from 'typeorm';

/** Delivered webhook deliveries are purged by age, as sent emails are: an index to find them. */
export class WebhookDeliveryRetention1764200000000 implements MigrationInterface {
  name = 'WebhookDeliveryRetention1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX webhook_deliveries_delivered_idx ON webhook_deliveries (delivered_at) WHERE status = 'delivered'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_deliveries_delivered_idx`);
  }
}
