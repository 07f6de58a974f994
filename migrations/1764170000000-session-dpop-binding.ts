import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sender-constrained sessions: the RFC 7638 thumbprint of the DPoP key a session is bound to,
 * null for a session without one. Adding a nullable column without a default rewrites nothing.
 */
export class SessionDpopBinding1764170000000 implements MigrationInterface {
  name = 'SessionDpopBinding1764170000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ADD COLUMN dpop_jkt text NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions DROP COLUMN dpop_jkt`);
  }
}
