import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Client, ClientChange } from '../../domain/client/client';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { ClientRepository } from '../ports/client.repository';
import { Clock } from '../ports/clock';
import { ResourceRepository } from '../ports/resource.repository';
import { Transaction } from '../ports/transaction';
import { WebhookTargetPolicy } from '../ports/webhook-target-policy';
import { acceptableUrl } from '../webhooks/webhook-admin';
import { auditClientChange, findClient, namedResources } from './client-admin';

export interface UpdateClientInput extends ClientChange {
  actor: AdminActor;
  realmId: string;
  clientId: string;
}

@Injectable()
export class UpdateClientUseCase {
  constructor(
    private readonly clients: ClientRepository,
    private readonly resources: ResourceRepository,
    private readonly policy: WebhookTargetPolicy,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * Changes any field but the id and the type; the whole client is checked again. A new
   * back-channel logout or JWKS URI follows the webhooks' address rules.
   * @throws DomainError CLIENT_NOT_FOUND | VALIDATION_FAILED naming the field
   */
  async execute(input: UpdateClientInput): Promise<Client> {
    const { actor, realmId, clientId, ...change } = input;
    for (const field of ['backchannelLogoutUri', 'jwksUri'] as const) {
      const url = change[field];
      if (url !== undefined && url !== null) change[field] = await acceptableUrl(this.policy, this.config, url, field);
    }
    return this.tx.run(async () => {
      await this.clients.lockRealm(realmId);
      const client = await findClient(this.clients, realmId, clientId);
      const now = this.clock.now();
      client.update(change, await namedResources(this.resources, realmId, change.resources ?? client.resources), now);
      await this.clients.save(client);
      const changed = Object.keys(change).filter((field) => change[field as keyof ClientChange] !== undefined);
      await auditClientChange(this.audit, 'client.updated', actor, realmId, now, { clientId, changed });
      return client;
    });
  }
}
