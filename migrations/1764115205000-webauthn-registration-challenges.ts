import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * WebAuthn registration challenges are kept server-side with a TTL, as one-time tokens of their
 * own kind (keyed by the challenge's hash, bound to the user who asked for them).
 */
export class WebauthnRegistrationChallenges1764115205000 implements MigrationInterface {
  name = 'WebauthnRegistrationChallenges1764115205000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE one_time_tokens DROP CONSTRAINT one_time_tokens_kind_check;
      ALTER TABLE one_time_tokens ADD CONSTRAINT one_time_tokens_kind_check
        CHECK (kind IN ('email_verification', 'password_reset', 'mfa', 'webauthn_registration'));
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM one_time_tokens WHERE kind = 'webauthn_registration';
      ALTER TABLE one_time_tokens DROP CONSTRAINT one_time_tokens_kind_check;
      ALTER TABLE one_time_tokens ADD CONSTRAINT one_time_tokens_kind_check
        CHECK (kind IN ('email_verification', 'password_reset', 'mfa'));
    `);
  }
}
