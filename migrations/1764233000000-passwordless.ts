import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sign-in without a password. A passkey is a WebAuthn credential registered as one (discoverable,
 * user-verified): a flag on the credential, not a record of its own. Passkey challenges and email
 * codes are one-time tokens of their own kinds; neither needs a user yet (a passkey challenge is
 * asked for before anyone is known, an email code may be sent to an address that has no account),
 * so a token's user becomes optional. Email codes are found by their address.
 */
export class Passwordless1764233000000 implements MigrationInterface {
  name = 'Passwordless1764233000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webauthn_credentials ADD COLUMN passkey boolean NOT NULL DEFAULT false;
      ALTER TABLE one_time_tokens ALTER COLUMN user_id DROP NOT NULL;
      ALTER TABLE one_time_tokens DROP CONSTRAINT one_time_tokens_kind_check;
      ALTER TABLE one_time_tokens ADD CONSTRAINT one_time_tokens_kind_check
        CHECK (kind IN ('email_verification', 'password_reset', 'mfa', 'webauthn_registration', 'passkey_challenge', 'email_code'));
      ALTER TABLE one_time_tokens ADD CONSTRAINT one_time_tokens_user_required
        CHECK (user_id IS NOT NULL OR kind IN ('passkey_challenge', 'email_code'));
      CREATE INDEX one_time_tokens_email_code_idx ON one_time_tokens (realm_id, email, created_at DESC) WHERE kind = 'email_code';
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX one_time_tokens_email_code_idx;
      DELETE FROM one_time_tokens WHERE kind IN ('passkey_challenge', 'email_code');
      ALTER TABLE one_time_tokens DROP CONSTRAINT one_time_tokens_user_required;
      ALTER TABLE one_time_tokens DROP CONSTRAINT one_time_tokens_kind_check;
      ALTER TABLE one_time_tokens ADD CONSTRAINT one_time_tokens_kind_check
        CHECK (kind IN ('email_verification', 'password_reset', 'mfa', 'webauthn_registration'));
      ALTER TABLE one_time_tokens ALTER COLUMN user_id SET NOT NULL;
      ALTER TABLE webauthn_credentials DROP COLUMN passkey;
    `);
  }
}
