import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { ResourceRepository } from '../../application/ports/resource.repository';
import { Resource } from '../../domain/client/resource';
import { DomainError } from '../../domain/errors';
import { sqlState, UNIQUE_VIOLATION } from './database-errors';
import { ResourceRecord } from './records/client.records';
import { TypeOrmTransaction } from './typeorm-transaction';
import { isUuid } from './typeorm-user.repository';

function toResource(r: ResourceRecord): Resource {
  return Resource.restore({
    id: r.id,
    realmId: r.realmId,
    identifier: r.identifier,
    name: r.name,
    scopes: r.scopes.map(({ name, description }) => ({ name, description })),
    accessTokenTtlSeconds: r.accessTokenTtlSeconds,
    createdAt: new Date(r.createdAt),
    updatedAt: new Date(r.updatedAt),
  });
}

function toRecord(resource: Resource): ResourceRecord {
  const s = resource.snapshot();
  const record = new ResourceRecord();
  record.id = s.id;
  record.realmId = s.realmId;
  record.identifier = s.identifier;
  record.name = s.name;
  record.scopes = s.scopes;
  record.accessTokenTtlSeconds = s.accessTokenTtlSeconds;
  record.createdAt = s.createdAt;
  record.updatedAt = s.updatedAt;
  return record;
}

@Injectable()
export class TypeOrmResourceRepository implements ResourceRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  private get repo() {
    return this.tx.manager.getRepository(ResourceRecord);
  }

  async findById(realmId: string, id: string): Promise<Resource | null> {
    if (!isUuid(id)) return null;
    const record = await this.repo.findOneBy({ realmId, id });
    return record ? toResource(record) : null;
  }

  async findByIdentifiers(realmId: string, identifiers: readonly string[]): Promise<Resource[]> {
    if (identifiers.length === 0) return [];
    return (await this.repo.find({ where: { realmId, identifier: In([...identifiers]) }, order: { createdAt: 'ASC', id: 'ASC' } })).map(
      toResource,
    );
  }

  async list(realmId: string): Promise<Resource[]> {
    return (await this.repo.find({ where: { realmId }, order: { createdAt: 'ASC', id: 'ASC' } })).map(toResource);
  }

  async insert(resource: Resource): Promise<void> {
    try {
      await this.repo.insert(toRecord(resource));
    } catch (error) {
      if (sqlState(error) === UNIQUE_VIOLATION) {
        throw new DomainError('RESOURCE_EXISTS', `The realm has a resource ${resource.identifier}`);
      }
      throw error;
    }
  }

  async save(resource: Resource): Promise<void> {
    const { id, realmId, identifier: _identifier, createdAt: _createdAt, ...fields } = toRecord(resource);
    await this.repo.update({ id, realmId }, fields);
  }

  async delete(realmId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const result = await this.repo.delete({ realmId, id });
    return (result.affected ?? 0) > 0;
  }
}
