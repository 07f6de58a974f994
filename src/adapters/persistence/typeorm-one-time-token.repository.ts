import { Injectable } from '@nestjs/common';
import { OneTimeToken, OneTimeTokenKind, OneTimeTokenRepository } from '../../application/ports/one-time-token.repository';
import { OneTimeTokenRecord } from './records/one-time-token.record';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';

function toOneTimeToken(record: OneTimeTokenRecord): OneTimeToken {
  return {
    tokenHash: record.tokenHash,
    realmId: record.realmId,
    userId: record.userId,
    kind: record.kind as OneTimeTokenKind,
    email: record.email,
    payload: (record.payload ?? {}) as Record<string, unknown>,
    attempts: Number(record.attempts),
    createdAt: new Date(record.createdAt),
    expiresAt: new Date(record.expiresAt),
    usedAt: record.usedAt ? new Date(record.usedAt) : null,
  };
}

@Injectable()
export class TypeOrmOneTimeTokenRepository implements OneTimeTokenRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async insert(token: OneTimeToken): Promise<void> {
    await this.tx.manager.getRepository(OneTimeTokenRecord).insert({ ...token });
  }

  async voidUnused(userId: string, kind: OneTimeTokenKind, now: Date): Promise<void> {
    await this.tx.manager.query(`UPDATE one_time_tokens SET used_at = $3 WHERE user_id = $1 AND kind = $2 AND used_at IS NULL`, [
      userId,
      kind,
      now,
    ]);
  }

  async find(tokenHash: string, kind: OneTimeTokenKind): Promise<OneTimeToken | null> {
    const record = await this.tx.manager.getRepository(OneTimeTokenRecord).findOneBy({ tokenHash, kind });
    return record ? toOneTimeToken(record) : null;
  }

  async consume(tokenHash: string, now: Date): Promise<boolean> {
    const rows = unwrapRows<{ token_hash: string }>(
      await this.tx.manager.query(
        `UPDATE one_time_tokens SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING token_hash`,
        [tokenHash, now],
      ),
    );
    return rows.length === 1;
  }

  async recordFailedAttempt(tokenHash: string, now: Date, maxAttempts: number): Promise<number | null> {
    // The attempt that reaches the limit also uses the token up, so it is dead for every caller.
    const rows = unwrapRows<{ attempts: number }>(
      await this.tx.manager.query(
        `UPDATE one_time_tokens SET attempts = attempts + 1,
           used_at = CASE WHEN attempts + 1 >= $3 THEN $2::timestamptz ELSE used_at END
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING attempts`,
        [tokenHash, now, maxAttempts],
      ),
    );
    return rows[0] ? Number(rows[0].attempts) : null;
  }

  async updatePayload(tokenHash: string, payload: Record<string, unknown>): Promise<void> {
    await this.tx.manager.getRepository(OneTimeTokenRecord).update({ tokenHash }, { payload });
  }

  async voidUnusedForEmail(realmId: string, email: string, kind: OneTimeTokenKind, now: Date): Promise<void> {
    await this.tx.manager.query(
      `UPDATE one_time_tokens SET used_at = $4 WHERE realm_id = $1 AND email = $2 AND kind = $3 AND used_at IS NULL`,
      [realmId, email, kind, now],
    );
  }

  async findLatestForEmail(realmId: string, email: string, kind: OneTimeTokenKind): Promise<OneTimeToken | null> {
    const record = await this.tx.manager
      .getRepository(OneTimeTokenRecord)
      .findOne({ where: { realmId, email, kind }, order: { createdAt: 'DESC', tokenHash: 'DESC' } });
    return record ? toOneTimeToken(record) : null;
  }

  async reserveAttempt(tokenHash: string, now: Date, maxAttempts: number): Promise<number | null> {
    const rows = unwrapRows<{ attempts: number }>(
      await this.tx.manager.query(
        `UPDATE one_time_tokens SET attempts = attempts + 1
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 AND attempts < $3 RETURNING attempts`,
        [tokenHash, now, maxAttempts],
      ),
    );
    return rows[0] ? Number(rows[0].attempts) : null;
  }

  async setPayloadFlag(tokenHash: string, flag: string, now: Date): Promise<boolean> {
    const rows = unwrapRows<{ token_hash: string }>(
      await this.tx.manager.query(
        `UPDATE one_time_tokens SET payload = jsonb_set(payload, ARRAY[$2::text], 'true'::jsonb)
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $3 AND NOT coalesce((payload ->> $2)::boolean, false)
         RETURNING token_hash`,
        [tokenHash, flag, now],
      ),
    );
    return rows.length === 1;
  }
}
