import { Injectable } from '@nestjs/common';
import { FederationToken, FederationTokenKind, FederationTokenRepository } from '../../application/ports/federation-token.repository';
import { FederationTokenRecord } from './records/federation.records';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';

@Injectable()
export class TypeOrmFederationTokenRepository implements FederationTokenRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async insert(token: FederationToken): Promise<void> {
    await this.tx.manager.getRepository(FederationTokenRecord).insert({ ...token, usedAt: null });
  }

  async consume(tokenHash: string, kind: FederationTokenKind, now: Date): Promise<FederationToken | null> {
    const rows = await this.tx.manager.query(
      `UPDATE federation_tokens SET used_at = $3
       WHERE token_hash = $1 AND kind = $2 AND used_at IS NULL AND expires_at > $3
       RETURNING token_hash AS "tokenHash", kind, realm_id AS "realmId", provider_id AS "providerId", payload,
                 created_at AS "createdAt", expires_at AS "expiresAt"`,
      [tokenHash, kind, now],
    );
    const row = unwrapRows<FederationToken>(rows)[0];
    return row ? { ...row, createdAt: new Date(row.createdAt), expiresAt: new Date(row.expiresAt) } : null;
  }
}
