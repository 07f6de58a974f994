import { IdentityProviderRepository } from '../../src/application/ports/identity-provider.repository';
import { DomainError } from '../../src/domain/errors';
import { IdentityProvider } from '../../src/domain/federation/identity-provider';
import { InMemoryLinkedIdentityRepository } from './in-memory-linked-identity.repository';

export class InMemoryIdentityProviderRepository extends IdentityProviderRepository {
  private readonly rows = new Map<string, IdentityProvider>();

  /** `identities`: the links a deletion removes with the provider, as the database's cascade does. */
  constructor(
    providers: IdentityProvider[] = [],
    private readonly identities?: InMemoryLinkedIdentityRepository,
  ) {
    super();
    for (const provider of providers) this.rows.set(provider.id, copy(provider));
  }

  async findByAlias(realmId: string, alias: string): Promise<IdentityProvider | null> {
    const found = [...this.rows.values()].find((p) => p.realmId === realmId && p.alias === alias);
    return found ? copy(found) : null;
  }

  async findById(id: string): Promise<IdentityProvider | null> {
    const found = this.rows.get(id);
    return found ? copy(found) : null;
  }

  async list(realmId: string): Promise<IdentityProvider[]> {
    return [...this.rows.values()]
      .filter((p) => p.realmId === realmId)
      .sort((a, b) => (a.alias < b.alias ? -1 : a.alias > b.alias ? 1 : 0))
      .map(copy);
  }

  async insert(provider: IdentityProvider): Promise<void> {
    if ([...this.rows.values()].some((p) => p.realmId === provider.realmId && p.alias === provider.alias)) {
      throw new DomainError('IDENTITY_PROVIDER_EXISTS', `The realm has an identity provider named ${provider.alias}`);
    }
    this.rows.set(provider.id, copy(provider));
  }

  /** Writes every field but the alias and the creation time, as the database's UPDATE does. */
  async save(provider: IdentityProvider): Promise<void> {
    const stored = this.rows.get(provider.id);
    if (!stored || stored.realmId !== provider.realmId) return;
    this.rows.set(provider.id, IdentityProvider.restore({ ...provider.snapshot(), alias: stored.alias, createdAt: stored.createdAt }));
  }

  async delete(realmId: string, alias: string): Promise<boolean> {
    const found = [...this.rows.values()].find((p) => p.realmId === realmId && p.alias === alias);
    if (!found) return false;
    this.rows.delete(found.id);
    await this.identities?.deleteAllForProvider(found.id);
    return true;
  }
}

function copy(provider: IdentityProvider): IdentityProvider {
  return IdentityProvider.restore(provider.snapshot());
}
