import { Injectable } from '@nestjs/common';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { ClientRepository } from '../ports/client.repository';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { auditClientChange, findClient } from './client-admin';
import { ClientSecrets } from './client-secrets';
import { CreatedClient } from './create-client.use-case';

@Injectable()
export class RotateClientSecretUseCase {
  constructor(
    private readonly clients: ClientRepository,
    private readonly secrets: ClientSecrets,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Gives a confidential client a new secret (answered this once); the old one stops working at once.
   * @throws DomainError CLIENT_NOT_FOUND | VALIDATION_FAILED (field `type`) for a public client
   */
  async execute(input: { actor: AdminActor; realmId: string; clientId: string }): Promise<CreatedClient & { clientSecret: string }> {
    return this.tx.run(async () => {
      await this.clients.lockRealm(input.realmId);
      const client = await findClient(this.clients, input.realmId, input.clientId);
      const now = this.clock.now();
      const issued = this.secrets.issue();
      client.setSecret(issued.hash, now);
      await this.clients.save(client);
      await auditClientChange(this.audit, 'client.secret_rotated', input.actor, input.realmId, now, { clientId: client.clientId });
      return { client, clientSecret: issued.secret };
    });
  }
}
