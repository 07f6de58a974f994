import { Injectable } from '@nestjs/common';
import { ClientGrants } from '../../application/ports/client-grants';
import { TypeOrmTransaction } from './typeorm-transaction';

/**
 * Ends what the realm's OpenID provider issued to a client, in `op_artifacts`: its grants, every
 * code and token issued under them, and what it holds without a grant (client-credentials tokens),
 * in one statement of the caller's transaction.
 */
@Injectable()
export class TypeOrmClientGrants implements ClientGrants {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async endAllForClient(realmId: string, clientId: string): Promise<void> {
    await this.tx.manager.query(
      `DELETE FROM op_artifacts
        WHERE realm_id = $1
          AND (payload->>'clientId' = $2
               OR grant_id IN (SELECT id FROM op_artifacts WHERE realm_id = $1 AND model = 'Grant' AND payload->>'clientId' = $2))`,
      [realmId, clientId],
    );
  }
}
