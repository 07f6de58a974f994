import { IdentityProvider } from '../../domain/federation/identity-provider';

export abstract class IdentityProviderRepository {
  abstract findByAlias(realmId: string, alias: string): Promise<IdentityProvider | null>;
  abstract findById(id: string): Promise<IdentityProvider | null>;
  /** The realm's providers by alias. */
  abstract list(realmId: string): Promise<IdentityProvider[]>;
  /** @throws DomainError IDENTITY_PROVIDER_EXISTS for an alias the realm has */
  abstract insert(provider: IdentityProvider): Promise<void>;
  abstract save(provider: IdentityProvider): Promise<void>;
  /** Removes the provider with its links; false when the realm has no such alias. */
  abstract delete(realmId: string, alias: string): Promise<boolean>;
}
