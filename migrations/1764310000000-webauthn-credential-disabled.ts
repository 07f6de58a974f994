import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A WebAuthn credential can be disabled: an assertion whose signature counter went back (a cloned
 * key) disables it for sign-in and as a second factor until its owner removes it or an
 * administrator resets the user's MFA. `disabled_reason` says why (`counter_regression`).
 */
export class WebauthnCredentialDisabled1764310000000 implements MigrationInterface {
  name = 'WebauthnCredentialDisabled1764310000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webauthn_credentials ADD COLUMN disabled_at timestamptz NULL;
      ALTER TABLE webauthn_credentials ADD COLUMN disabled_reason text NULL;
      ALTER TABLE webauthn_credentials ADD CONSTRAINT webauthn_credentials_disabled_reason
        CHECK ((disabled_at IS NULL) = (disabled_reason IS NULL));
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webauthn_credentials DROP CONSTRAINT webauthn_credentials_disabled_reason;
      ALTER TABLE webauthn_credentials DROP COLUMN disabled_reason;
      ALTER TABLE webauthn_credentials DROP COLUMN disabled_at;
    `);
  }
}
