import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { ClientGrants } from '../ports/client-grants';
import { ClientRepository } from '../ports/client.repository';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { auditClientChange } from './client-admin';

@Injectable()
export class DeleteClientUseCase {
  constructor(
    private readonly clients: ClientRepository,
    private readonly grants: ClientGrants,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Removes the client; in the same transaction every grant and token the realm's OpenID provider
   * issued to it ends (`ClientGrants`).
   * @throws DomainError CLIENT_NOT_FOUND
   */
  async execute(input: { actor: AdminActor; realmId: string; clientId: string }): Promise<void> {
    await this.tx.run(async () => {
      await this.clients.lockRealm(input.realmId);
      const now = this.clock.now();
      if (!(await this.clients.delete(input.realmId, input.clientId))) throw new DomainError('CLIENT_NOT_FOUND', 'Client not found');
      await this.grants.endAllForClient(input.realmId, input.clientId, now);
      await auditClientChange(this.audit, 'client.deleted', input.actor, input.realmId, now, { clientId: input.clientId });
    });
  }
}
