import { Injectable } from '@nestjs/common';
import {
  MfaCredentialRepository,
  TotpCredential,
  WebauthnCredential,
  WebauthnDisabledReason,
} from '../../application/ports/mfa-credential.repository';
import { DomainError } from '../../domain/errors';
import { sqlState, UNIQUE_VIOLATION } from './database-errors';
import { RecoveryCodeRecord, TotpCredentialRecord, WebauthnCredentialRecord } from './records/mfa.records';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';
import { isUuid } from './typeorm-user.repository';

function toTotp(record: TotpCredentialRecord): TotpCredential {
  return {
    userId: record.userId,
    secretEncrypted: record.secretEncrypted,
    confirmedAt: record.confirmedAt ? new Date(record.confirmedAt) : null,
    lastUsedStep: Number(record.lastUsedStep),
    createdAt: new Date(record.createdAt),
  };
}

function toWebauthn(record: WebauthnCredentialRecord): WebauthnCredential {
  return {
    id: record.id,
    userId: record.userId,
    name: record.name,
    publicKey: new Uint8Array(record.publicKey),
    counter: Number(record.counter),
    transports: record.transports ?? [],
    deviceType: record.deviceType,
    backedUp: record.backedUp,
    passkey: record.passkey,
    createdAt: new Date(record.createdAt),
    lastUsedAt: record.lastUsedAt ? new Date(record.lastUsedAt) : null,
    disabledAt: record.disabledAt ? new Date(record.disabledAt) : null,
    disabledReason: record.disabledReason as WebauthnDisabledReason | null,
  };
}

@Injectable()
export class TypeOrmMfaCredentialRepository implements MfaCredentialRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async findTotp(userId: string): Promise<TotpCredential | null> {
    if (!isUuid(userId)) return null;
    const record = await this.tx.manager.getRepository(TotpCredentialRecord).findOneBy({ userId });
    return record ? toTotp(record) : null;
  }

  async savePendingTotp(credential: TotpCredential): Promise<boolean> {
    const rows = unwrapRows<{ user_id: string }>(
      await this.tx.manager.query(
        `INSERT INTO totp_credentials (user_id, secret_encrypted, confirmed_at, last_used_step, created_at)
         VALUES ($1, $2, NULL, 0, $3)
         ON CONFLICT (user_id) DO UPDATE SET secret_encrypted = EXCLUDED.secret_encrypted, last_used_step = 0,
           created_at = EXCLUDED.created_at
         WHERE totp_credentials.confirmed_at IS NULL
         RETURNING user_id`,
        [credential.userId, credential.secretEncrypted, credential.createdAt],
      ),
    );
    return rows.length === 1;
  }

  async confirmTotp(userId: string, step: number, now: Date): Promise<boolean> {
    const rows = unwrapRows<{ user_id: string }>(
      await this.tx.manager.query(
        `UPDATE totp_credentials SET confirmed_at = $2, last_used_step = $3
         WHERE user_id = $1 AND confirmed_at IS NULL RETURNING user_id`,
        [userId, now, step],
      ),
    );
    return rows.length === 1;
  }

  async advanceTotpStep(userId: string, step: number): Promise<boolean> {
    // One statement: concurrent submissions of one code serialise on the row lock, and only the
    // first still sees last_used_step < step (RFC 6238 §5.2, no replay).
    const rows = unwrapRows<{ user_id: string }>(
      await this.tx.manager.query(
        `UPDATE totp_credentials SET last_used_step = $2
         WHERE user_id = $1 AND confirmed_at IS NOT NULL AND last_used_step < $2 RETURNING user_id`,
        [userId, step],
      ),
    );
    return rows.length === 1;
  }

  async deleteTotp(userId: string): Promise<boolean> {
    if (!isUuid(userId)) return false;
    const result = await this.tx.manager.getRepository(TotpCredentialRecord).delete({ userId });
    return (result.affected ?? 0) > 0;
  }

  async listWebauthn(userId: string): Promise<WebauthnCredential[]> {
    if (!isUuid(userId)) return [];
    const records = await this.tx.manager
      .getRepository(WebauthnCredentialRecord)
      .find({ where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return records.map(toWebauthn);
  }

  async findWebauthn(credentialId: string): Promise<WebauthnCredential | null> {
    const record = await this.tx.manager.getRepository(WebauthnCredentialRecord).findOneBy({ id: credentialId });
    return record ? toWebauthn(record) : null;
  }

  async insertWebauthn(credential: WebauthnCredential): Promise<void> {
    try {
      await this.tx.manager.getRepository(WebauthnCredentialRecord).insert({
        id: credential.id,
        userId: credential.userId,
        name: credential.name,
        publicKey: Buffer.from(credential.publicKey),
        counter: String(credential.counter),
        transports: credential.transports,
        deviceType: credential.deviceType,
        backedUp: credential.backedUp,
        passkey: credential.passkey,
        createdAt: credential.createdAt,
        lastUsedAt: credential.lastUsedAt,
        disabledAt: credential.disabledAt,
        disabledReason: credential.disabledReason,
      });
    } catch (error) {
      if (sqlState(error) === UNIQUE_VIOLATION) {
        throw new DomainError('VALIDATION_FAILED', 'response names a credential that is already registered', {
          details: [{ field: 'response', message: 'names a credential that is already registered' }],
        });
      }
      throw error;
    }
  }

  async recordWebauthnUse(credentialId: string, previous: number, counter: number, now: Date): Promise<boolean> {
    const rows = unwrapRows<{ id: string }>(
      await this.tx.manager.query(
        `UPDATE webauthn_credentials SET counter = $3, last_used_at = $4
         WHERE id = $1 AND counter = $2 AND disabled_at IS NULL RETURNING id`,
        [credentialId, previous, counter, now],
      ),
    );
    return rows.length === 1;
  }

  async disableWebauthn(credentialId: string, reason: WebauthnDisabledReason, now: Date): Promise<boolean> {
    // One statement: a use and a disabling of one credential serialise on its row lock, so no
    // assertion is accepted after the one that disabled it, and only one caller disables it.
    const rows = unwrapRows<{ id: string }>(
      await this.tx.manager.query(
        `UPDATE webauthn_credentials SET disabled_at = $2, disabled_reason = $3
         WHERE id = $1 AND disabled_at IS NULL RETURNING id`,
        [credentialId, now, reason],
      ),
    );
    return rows.length === 1;
  }

  async deleteWebauthn(userId: string, credentialId: string): Promise<boolean> {
    if (!isUuid(userId)) return false;
    const result = await this.tx.manager.getRepository(WebauthnCredentialRecord).delete({ userId, id: credentialId });
    return (result.affected ?? 0) > 0;
  }

  async replaceRecoveryCodes(userId: string, codeHashes: string[], now: Date): Promise<void> {
    await this.tx.run(async () => {
      const repository = this.tx.manager.getRepository(RecoveryCodeRecord);
      await repository.delete({ userId });
      if (codeHashes.length === 0) return;
      await repository.insert(codeHashes.map((codeHash) => ({ id: crypto.randomUUID(), userId, codeHash, createdAt: now, usedAt: null })));
    });
  }

  async consumeRecoveryCode(userId: string, codeHash: string, now: Date): Promise<boolean> {
    const rows = unwrapRows<{ id: string }>(
      await this.tx.manager.query(
        `UPDATE recovery_codes SET used_at = $3
         WHERE id = (SELECT id FROM recovery_codes WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL LIMIT 1)
           AND used_at IS NULL
         RETURNING id`,
        [userId, codeHash, now],
      ),
    );
    return rows.length === 1;
  }

  async countUnusedRecoveryCodes(userId: string): Promise<number> {
    if (!isUuid(userId)) return 0;
    const rows: { n: string }[] = await this.tx.manager.query(
      `SELECT count(*) AS n FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL`,
      [userId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async deleteRecoveryCodes(userId: string): Promise<void> {
    if (!isUuid(userId)) return;
    await this.tx.manager.getRepository(RecoveryCodeRecord).delete({ userId });
  }

  async deleteAllForUser(userId: string): Promise<void> {
    if (!isUuid(userId)) return;
    await this.tx.run(async () => {
      await this.tx.manager.getRepository(TotpCredentialRecord).delete({ userId });
      await this.tx.manager.getRepository(WebauthnCredentialRecord).delete({ userId });
      await this.tx.manager.getRepository(RecoveryCodeRecord).delete({ userId });
    });
  }
}
