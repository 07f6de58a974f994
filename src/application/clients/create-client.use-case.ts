import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Client, ClientRegistration } from '../../domain/client/client';
import { RegisteredBy } from '../../domain/client/client-rules';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { ClientRepository } from '../ports/client.repository';
import { Clock } from '../ports/clock';
import { ResourceRepository } from '../ports/resource.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { Transaction } from '../ports/transaction';
import { WebhookTargetPolicy } from '../ports/webhook-target-policy';
import { acceptableUrl } from '../webhooks/webhook-admin';
import { auditClientChange, namedResources } from './client-admin';
import { ClientSecrets } from './client-secrets';

export type CreateClientInput = Omit<ClientRegistration, 'clientId' | 'registeredBy' | 'createdAt'> & {
  /** The administrator; null for a dynamic registration or the command line. */
  actor: AdminActor | null;
  /** `admin` unless the realm's OpenID provider registers it (RFC 7591). */
  registeredBy?: RegisteredBy;
};

export interface CreatedClient {
  client: Client;
  /** The secret of a confidential client, answered this once; null for a public client. */
  clientSecret: string | null;
}

@Injectable()
export class CreateClientUseCase {
  constructor(
    private readonly clients: ClientRepository,
    private readonly resources: ResourceRepository,
    private readonly policy: WebhookTargetPolicy,
    private readonly secrets: ClientSecrets,
    private readonly tokens: SecureTokens,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * Registers a client with a new random id (256 bits) and, for a confidential one, a new secret
   * (shown once, stored as a hash). Its back-channel logout URI and JWKS URI follow the webhooks'
   * address rules; the resources it names must be the realm's.
   * @throws DomainError VALIDATION_FAILED naming the field
   */
  async execute(input: CreateClientInput): Promise<CreatedClient> {
    const { actor, registeredBy = 'admin', ...registration } = input;
    const backchannelLogoutUri = await this.outbound(input.backchannelLogoutUri, 'backchannelLogoutUri');
    const jwksUri = await this.outbound(input.jwksUri, 'jwksUri');
    return this.tx.run(async () => {
      await this.clients.lockRealm(input.realmId);
      const now = this.clock.now();
      const known = await namedResources(this.resources, input.realmId, input.resources ?? []);
      const client = Client.register(
        { ...registration, clientId: this.tokens.generate(), backchannelLogoutUri, jwksUri, registeredBy, createdAt: now },
        known,
      );
      let clientSecret: string | null = null;
      if (client.isConfidential) {
        const issued = this.secrets.issue();
        client.setSecret(issued.hash, now);
        clientSecret = issued.secret;
      }
      await this.clients.insert(client);
      await auditClientChange(this.audit, 'client.created', actor, input.realmId, now, {
        clientId: client.clientId,
        name: client.name,
        type: client.type,
        registeredBy,
        // Registered by an operator on the command line: no administrator, no dynamic registration.
        ...(actor === null && registeredBy === 'admin' ? { by: 'cli' } : {}),
      });
      return { client, clientSecret };
    });
  }

  private async outbound(url: string | null | undefined, field: string): Promise<string | null> {
    return url === undefined || url === null ? null : acceptableUrl(this.policy, this.config, url, field);
  }
}
