import { Injectable } from '@nestjs/common';
import { Resource, ResourceChange } from '../../domain/client/resource';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { ClientRepository } from '../ports/client.repository';
import { Clock } from '../ports/clock';
import { ResourceRepository } from '../ports/resource.repository';
import { Transaction } from '../ports/transaction';
import { auditClientChange, findResource, reconcileClients } from './client-admin';

export interface UpdateResourceInput extends ResourceChange {
  actor: AdminActor;
  realmId: string;
  id: string;
}

@Injectable()
export class UpdateResourceUseCase {
  constructor(
    private readonly resources: ResourceRepository,
    private readonly clients: ClientRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Changes the name, the scopes or the token lifetime (never the identifier). A scope the
   * resource no longer has is taken from every client that held it, in the same transaction.
   * @throws DomainError RESOURCE_NOT_FOUND | VALIDATION_FAILED naming the field
   */
  async execute(input: UpdateResourceInput): Promise<Resource> {
    const { actor, realmId, id, ...change } = input;
    return this.tx.run(async () => {
      await this.clients.lockRealm(realmId);
      const resource = await findResource(this.resources, realmId, id);
      const now = this.clock.now();
      resource.update(change, now);
      await this.resources.save(resource);
      const clientsChanged =
        change.scopes !== undefined ? await reconcileClients(this.clients, this.resources, realmId, resource.identifier, now) : 0;
      const changed = Object.keys(change).filter((field) => change[field as keyof ResourceChange] !== undefined);
      await auditClientChange(this.audit, 'resource.updated', actor, realmId, now, {
        resourceId: id,
        identifier: resource.identifier,
        changed,
        clientsChanged,
      });
      return resource;
    });
  }
}
