import { ClientRepository } from '../../src/application/ports/client.repository';
import { InitialAccessToken, InitialAccessTokenRepository } from '../../src/application/ports/initial-access-token.repository';
import { ResourceRepository } from '../../src/application/ports/resource.repository';
import { Client } from '../../src/domain/client/client';
import { Resource } from '../../src/domain/client/resource';
import { DomainError } from '../../src/domain/errors';

const byCreation = <T extends { createdAt: Date }>(a: T, b: T) => a.createdAt.getTime() - b.createdAt.getTime();

/** Clients kept as snapshots, so a caller's later changes reach the store only through save(). */
export class InMemoryClientRepository extends ClientRepository {
  private readonly rows = new Map<string, ReturnType<Client['snapshot']>>();

  async lockRealm(): Promise<void> {}

  async findById(realmId: string, clientId: string): Promise<Client | null> {
    const row = this.rows.get(clientId);
    return row && row.realmId === realmId ? Client.restore(row) : null;
  }

  async list(realmId: string): Promise<Client[]> {
    return [...this.rows.values()]
      .filter((r) => r.realmId === realmId)
      .sort(byCreation)
      .map((r) => Client.restore(r));
  }

  async listNamingResource(realmId: string, identifier: string): Promise<Client[]> {
    return (await this.list(realmId)).filter((c) => c.resources.includes(identifier));
  }

  async insert(client: Client): Promise<void> {
    if (this.rows.has(client.clientId)) throw new Error('duplicate client id');
    this.rows.set(client.clientId, client.snapshot());
  }

  async save(client: Client): Promise<void> {
    const row = this.rows.get(client.clientId);
    if (!row || row.realmId !== client.realmId) return;
    this.rows.set(client.clientId, { ...client.snapshot(), type: row.type, createdAt: row.createdAt });
  }

  async delete(realmId: string, clientId: string): Promise<boolean> {
    const row = this.rows.get(clientId);
    return row?.realmId === realmId && this.rows.delete(clientId);
  }
}

export class InMemoryResourceRepository extends ResourceRepository {
  private readonly rows = new Map<string, ReturnType<Resource['snapshot']>>();

  async findById(realmId: string, id: string): Promise<Resource | null> {
    const row = this.rows.get(id);
    return row && row.realmId === realmId ? Resource.restore(row) : null;
  }

  async findByIdentifiers(realmId: string, identifiers: readonly string[]): Promise<Resource[]> {
    return (await this.list(realmId)).filter((r) => identifiers.includes(r.identifier));
  }

  async list(realmId: string): Promise<Resource[]> {
    return [...this.rows.values()]
      .filter((r) => r.realmId === realmId)
      .sort(byCreation)
      .map((r) => Resource.restore(r));
  }

  async insert(resource: Resource): Promise<void> {
    if ([...this.rows.values()].some((r) => r.realmId === resource.realmId && r.identifier === resource.identifier)) {
      throw new DomainError('RESOURCE_EXISTS', `The realm has a resource ${resource.identifier}`);
    }
    this.rows.set(resource.id, resource.snapshot());
  }

  async save(resource: Resource): Promise<void> {
    const row = this.rows.get(resource.id);
    if (!row || row.realmId !== resource.realmId) return;
    this.rows.set(resource.id, { ...resource.snapshot(), identifier: row.identifier, createdAt: row.createdAt });
  }

  async delete(realmId: string, id: string): Promise<boolean> {
    return this.rows.get(id)?.realmId === realmId && this.rows.delete(id);
  }
}

export class InMemoryInitialAccessTokenRepository extends InitialAccessTokenRepository {
  private readonly rows = new Map<string, InitialAccessToken & { usedAt: Date | null }>();

  async insert(token: InitialAccessToken): Promise<void> {
    this.rows.set(token.tokenHash, { ...token, usedAt: null });
  }

  async consume(realmId: string, tokenHash: string, now: Date): Promise<boolean> {
    const row = this.rows.get(tokenHash);
    if (!row || row.realmId !== realmId || row.usedAt !== null || row.expiresAt.getTime() <= now.getTime()) return false;
    row.usedAt = now;
    return true;
  }
}
