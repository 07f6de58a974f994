import { Injectable } from '@nestjs/common';
import { Resource } from '../../domain/client/resource';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { ClientRepository } from '../ports/client.repository';
import { Clock } from '../ports/clock';
import { ResourceRepository } from '../ports/resource.repository';
import { Transaction } from '../ports/transaction';
import { auditClientChange } from './client-admin';

export interface CreateResourceInput {
  actor: AdminActor;
  realmId: string;
  identifier: string;
  name: string;
  scopes?: { name: string; description?: string | null }[];
  accessTokenTtlSeconds?: number | null;
}

@Injectable()
export class CreateResourceUseCase {
  constructor(
    private readonly resources: ResourceRepository,
    private readonly clients: ClientRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /** @throws DomainError VALIDATION_FAILED naming the field | RESOURCE_EXISTS for an identifier the realm has */
  async execute(input: CreateResourceInput): Promise<Resource> {
    const { actor, ...fields } = input;
    const now = this.clock.now();
    const resource = Resource.create({ ...fields, id: crypto.randomUUID(), createdAt: now });
    await this.tx.run(async () => {
      await this.clients.lockRealm(input.realmId);
      await this.resources.insert(resource);
      await auditClientChange(this.audit, 'resource.created', actor, input.realmId, now, {
        resourceId: resource.id,
        identifier: resource.identifier,
        scopes: resource.scopeNames,
      });
    });
    return resource;
  }
}
