import { Injectable } from '@nestjs/common';
import { InitialAccessToken, InitialAccessTokenRepository } from '../../application/ports/initial-access-token.repository';
import { InitialAccessTokenRecord } from './records/client.records';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';

@Injectable()
export class TypeOrmInitialAccessTokenRepository implements InitialAccessTokenRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async insert(token: InitialAccessToken): Promise<void> {
    await this.tx.manager.getRepository(InitialAccessTokenRecord).insert({ ...token, usedAt: null });
  }

  async consume(realmId: string, tokenHash: string, now: Date): Promise<boolean> {
    // One conditional UPDATE: of concurrent registrations, exactly one sees the row unused.
    const rows = unwrapRows<{ token_hash: string }>(
      await this.tx.manager.query(
        `UPDATE initial_access_tokens SET used_at = $3
           WHERE token_hash = $1 AND realm_id = $2 AND used_at IS NULL AND expires_at > $3
           RETURNING token_hash`,
        [tokenHash, realmId, now],
      ),
    );
    return rows.length > 0;
  }
}
