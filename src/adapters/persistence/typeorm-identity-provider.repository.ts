import { Injectable } from '@nestjs/common';
import { IdentityProviderRepository } from '../../application/ports/identity-provider.repository';
import { DomainError } from '../../domain/errors';
import { IdentityProvider } from '../../domain/federation/identity-provider';
import { sqlState, UNIQUE_VIOLATION } from './database-errors';
import { IdentityProviderRecord } from './records/federation.records';
import { TypeOrmTransaction } from './typeorm-transaction';
import { isUuid } from './typeorm-user.repository';

function toProvider(r: IdentityProviderRecord): IdentityProvider {
  return IdentityProvider.restore({
    id: r.id,
    realmId: r.realmId,
    alias: r.alias,
    displayName: r.displayName,
    issuer: r.issuer,
    clientId: r.clientId,
    clientSecretEncrypted: r.clientSecret,
    scopes: r.scopes,
    enabled: r.enabled,
    trustEmailVerified: r.trustEmailVerified,
    metadata: r.metadata as Record<string, unknown>,
    createdAt: new Date(r.createdAt),
    updatedAt: new Date(r.updatedAt),
  });
}

function toRecord(provider: IdentityProvider): IdentityProviderRecord {
  const s = provider.snapshot();
  const record = new IdentityProviderRecord();
  record.id = s.id;
  record.realmId = s.realmId;
  record.alias = s.alias;
  record.displayName = s.displayName;
  record.issuer = s.issuer;
  record.clientId = s.clientId;
  record.clientSecret = s.clientSecretEncrypted;
  record.scopes = s.scopes;
  record.enabled = s.enabled;
  record.trustEmailVerified = s.trustEmailVerified;
  record.metadata = s.metadata;
  record.createdAt = s.createdAt;
  record.updatedAt = s.updatedAt;
  return record;
}

@Injectable()
export class TypeOrmIdentityProviderRepository implements IdentityProviderRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  private get repo() {
    return this.tx.manager.getRepository(IdentityProviderRecord);
  }

  async findByAlias(realmId: string, alias: string): Promise<IdentityProvider | null> {
    const record = await this.repo.findOneBy({ realmId, alias });
    return record ? toProvider(record) : null;
  }

  async findById(id: string): Promise<IdentityProvider | null> {
    if (!isUuid(id)) return null;
    const record = await this.repo.findOneBy({ id });
    return record ? toProvider(record) : null;
  }

  async list(realmId: string): Promise<IdentityProvider[]> {
    return (await this.repo.find({ where: { realmId }, order: { alias: 'ASC' } })).map(toProvider);
  }

  async insert(provider: IdentityProvider): Promise<void> {
    try {
      await this.repo.insert(toRecord(provider));
    } catch (error) {
      if (sqlState(error) === UNIQUE_VIOLATION) {
        throw new DomainError('IDENTITY_PROVIDER_EXISTS', `The realm has an identity provider named ${provider.alias}`);
      }
      throw error;
    }
  }

  async save(provider: IdentityProvider): Promise<void> {
    const { id, realmId, alias: _alias, createdAt: _createdAt, ...fields } = toRecord(provider);
    await this.repo.update({ id, realmId }, fields);
  }

  async delete(realmId: string, alias: string): Promise<boolean> {
    const result = await this.repo.delete({ realmId, alias });
    return (result.affected ?? 0) > 0;
  }
}
