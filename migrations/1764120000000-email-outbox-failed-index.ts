import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * /health/ready counts failed outbox messages on every probe; a partial index keeps that cheap
 * however many sent messages the table holds.
 */
export class EmailOutboxFailedIndex1764120000000 implements MigrationInterface {
  name = 'EmailOutboxFailedIndex1764120000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX email_outbox_failed_idx ON email_outbox (created_at) WHERE status = 'failed'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX email_outbox_failed_idx`);
  }
}
