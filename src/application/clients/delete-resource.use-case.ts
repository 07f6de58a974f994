import { Injectable } from '@nestjs/common';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { ClientRepository } from '../ports/client.repository';
import { Clock } from '../ports/clock';
import { ResourceRepository } from '../ports/resource.repository';
import { Transaction } from '../ports/transaction';
import { auditClientChange, findResource, reconcileClients } from './client-admin';

@Injectable()
export class DeleteResourceUseCase {
  constructor(
    private readonly resources: ResourceRepository,
    private readonly clients: ClientRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Removes the resource and, in the same transaction, takes it and its scopes from every client
   * that named it.
   * @throws DomainError RESOURCE_NOT_FOUND
   */
  async execute(input: { actor: AdminActor; realmId: string; id: string }): Promise<void> {
    const { actor, realmId, id } = input;
    await this.tx.run(async () => {
      await this.clients.lockRealm(realmId);
      const resource = await findResource(this.resources, realmId, id);
      const now = this.clock.now();
      await this.resources.delete(realmId, id);
      const clientsChanged = await reconcileClients(this.clients, this.resources, realmId, resource.identifier, now);
      await auditClientChange(this.audit, 'resource.deleted', actor, realmId, now, {
        resourceId: id,
        identifier: resource.identifier,
        clientsChanged,
      });
    });
  }
}
