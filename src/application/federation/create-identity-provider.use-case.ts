import { Injectable } from '@nestjs/common';
import { IdentityProvider } from '../../domain/federation/identity-provider';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { IdentityProviderClient } from '../ports/identity-provider-client';
import { IdentityProviderRepository } from '../ports/identity-provider.repository';
import { SecretCipher } from '../ports/secret-cipher';
import { Transaction } from '../ports/transaction';
import { auditProviderChange } from './identity-provider-admin';

export interface CreateIdentityProviderInput {
  actor: AdminActor;
  realmId: string;
  alias: string;
  displayName: string;
  issuer: string;
  clientId: string;
  clientSecret?: string | null;
  scopes?: string[];
  enabled?: boolean;
  trustEmailVerified?: boolean;
}

@Injectable()
export class CreateIdentityProviderUseCase {
  constructor(
    private readonly providers: IdentityProviderRepository,
    private readonly client: IdentityProviderClient,
    private readonly cipher: SecretCipher,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Registers a provider after reading its discovery document; the client secret is stored encrypted.
   * @throws DomainError VALIDATION_FAILED (the issuer's discovery fails, or a malformed field) | IDENTITY_PROVIDER_EXISTS
   */
  async execute(input: CreateIdentityProviderInput): Promise<IdentityProvider> {
    const id = crypto.randomUUID();
    const now = this.clock.now();
    // Fields first: a malformed alias is refused before any request leaves.
    IdentityProvider.create({ ...input, id, issuer: input.issuer, clientSecretEncrypted: null, metadata: {}, createdAt: now });
    const metadata = await this.client.discover(input.issuer);
    const secret = input.clientSecret ? await this.cipher.encrypt(input.clientSecret, id) : null;
    const provider = IdentityProvider.create({
      ...input,
      id,
      issuer: String(metadata.issuer),
      clientSecretEncrypted: secret,
      metadata,
      createdAt: now,
    });
    await this.tx.run(async () => {
      await this.providers.insert(provider);
      await auditProviderChange(this.audit, 'identity_provider.created', input.actor, input.realmId, now, {
        alias: provider.alias,
        issuer: provider.issuer,
      });
    });
    return provider;
  }
}
