import { Injectable } from '@nestjs/common';
import { IdentityProvider, IdentityProviderChange } from '../../domain/federation/identity-provider';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { IdentityProviderClient } from '../ports/identity-provider-client';
import { IdentityProviderRepository } from '../ports/identity-provider.repository';
import { LinkedIdentityRepository } from '../ports/linked-identity.repository';
import { SecretCipher } from '../ports/secret-cipher';
import { Transaction } from '../ports/transaction';
import { auditProviderChange, findProvider } from './identity-provider-admin';

export interface UpdateIdentityProviderInput extends IdentityProviderChange {
  actor: AdminActor;
  realmId: string;
  alias: string;
  issuer?: string;
  /** null makes the client public. */
  clientSecret?: string | null;
}

@Injectable()
export class UpdateIdentityProviderUseCase {
  constructor(
    private readonly providers: IdentityProviderRepository,
    private readonly client: IdentityProviderClient,
    private readonly identities: LinkedIdentityRepository,
    private readonly cipher: SecretCipher,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Changes any field but the alias; a new issuer's discovery document is read first. A `sub` is
   * unique only at its issuer, so moving to another issuer unlinks every account linked at the old
   * one (their users keep their accounts, as when a provider is deleted): an account at the new
   * issuer whose `sub` happens to equal a linked one's must not sign in to that user.
   * @throws DomainError IDENTITY_PROVIDER_NOT_FOUND | VALIDATION_FAILED
   */
  async execute(input: UpdateIdentityProviderInput): Promise<IdentityProvider> {
    const { actor, realmId, alias, issuer, clientSecret, ...change } = input;
    const provider = await findProvider(this.providers, realmId, alias);
    const now = this.clock.now();
    provider.update(change, now);
    const previousIssuer = provider.issuer;
    if (issuer !== undefined && issuer !== provider.issuer) {
      const metadata = await this.client.discover(issuer);
      provider.moveTo(String(metadata.issuer), metadata, now);
    }
    const moved = provider.issuer !== previousIssuer;
    if (clientSecret !== undefined)
      provider.setClientSecret(clientSecret ? await this.cipher.encrypt(clientSecret, provider.id) : null, now);
    const changed = [
      ...Object.keys(change),
      ...(issuer !== undefined ? ['issuer'] : []),
      ...(clientSecret !== undefined ? ['clientSecret'] : []),
    ];
    await this.tx.run(async () => {
      await this.providers.save(provider);
      const unlinked = moved ? { identitiesUnlinked: await this.identities.deleteAllForProvider(provider.id) } : {};
      await auditProviderChange(this.audit, 'identity_provider.updated', actor, realmId, now, { alias, changed, ...unlinked });
    });
    return provider;
  }
}
