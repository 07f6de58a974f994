import { Injectable } from '@nestjs/common';
import { ArrayContains } from 'typeorm';
import { ClientRepository } from '../../application/ports/client.repository';
import { Client } from '../../domain/client/client';
import { ClientType, GrantType, IdTokenAlgorithm, RegisteredBy, TokenEndpointAuthMethod } from '../../domain/client/client-rules';
import { ClientRecord } from './records/client.records';
import { TypeOrmTransaction } from './typeorm-transaction';

/** First key of the two-key advisory lock that serialises a realm's client and resource writes. */
const CLIENTS_LOCK = 7263010;

function toClient(r: ClientRecord): Client {
  return Client.restore({
    clientId: r.clientId,
    realmId: r.realmId,
    name: r.name,
    type: r.type as ClientType,
    secretHash: r.secretHash,
    redirectUris: r.redirectUris,
    postLogoutRedirectUris: r.postLogoutRedirectUris,
    grantTypes: r.grantTypes as GrantType[],
    scopes: r.scopes,
    resources: r.resources,
    firstParty: r.firstParty,
    backchannelLogoutUri: r.backchannelLogoutUri,
    tokenEndpointAuthMethod: r.tokenEndpointAuthMethod as TokenEndpointAuthMethod,
    jwksUri: r.jwksUri,
    accessTokenTtlSeconds: r.accessTokenTtlSeconds,
    idTokenSignedResponseAlg: r.idTokenSignedResponseAlg as IdTokenAlgorithm,
    registeredBy: r.registeredBy as RegisteredBy,
    createdAt: new Date(r.createdAt),
    updatedAt: new Date(r.updatedAt),
  });
}

function toRecord(client: Client): ClientRecord {
  const s = client.snapshot();
  const record = new ClientRecord();
  record.clientId = s.clientId;
  record.realmId = s.realmId;
  record.name = s.name;
  record.type = s.type;
  record.secretHash = s.secretHash;
  record.redirectUris = s.redirectUris;
  record.postLogoutRedirectUris = s.postLogoutRedirectUris;
  record.grantTypes = s.grantTypes;
  record.scopes = s.scopes;
  record.resources = s.resources;
  record.firstParty = s.firstParty;
  record.backchannelLogoutUri = s.backchannelLogoutUri;
  record.tokenEndpointAuthMethod = s.tokenEndpointAuthMethod;
  record.jwksUri = s.jwksUri;
  record.accessTokenTtlSeconds = s.accessTokenTtlSeconds;
  record.idTokenSignedResponseAlg = s.idTokenSignedResponseAlg;
  record.registeredBy = s.registeredBy;
  record.createdAt = s.createdAt;
  record.updatedAt = s.updatedAt;
  return record;
}

@Injectable()
export class TypeOrmClientRepository implements ClientRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  private get repo() {
    return this.tx.manager.getRepository(ClientRecord);
  }

  async lockRealm(realmId: string): Promise<void> {
    await this.tx.manager.query(`SELECT pg_advisory_xact_lock(${CLIENTS_LOCK}, hashtext($1))`, [realmId]);
  }

  async findById(realmId: string, clientId: string): Promise<Client | null> {
    const record = await this.repo.findOneBy({ realmId, clientId });
    return record ? toClient(record) : null;
  }

  async list(realmId: string): Promise<Client[]> {
    return (await this.repo.find({ where: { realmId }, order: { createdAt: 'ASC', clientId: 'ASC' } })).map(toClient);
  }

  async listNamingResource(realmId: string, identifier: string): Promise<Client[]> {
    return (await this.repo.find({ where: { realmId, resources: ArrayContains([identifier]) }, order: { createdAt: 'ASC' } })).map(
      toClient,
    );
  }

  async insert(client: Client): Promise<void> {
    await this.repo.insert(toRecord(client));
  }

  async save(client: Client): Promise<void> {
    const { clientId, realmId, type: _type, createdAt: _createdAt, ...fields } = toRecord(client);
    await this.repo.update({ clientId, realmId }, fields);
  }

  async delete(realmId: string, clientId: string): Promise<boolean> {
    const result = await this.repo.delete({ realmId, clientId });
    return (result.affected ?? 0) > 0;
  }
}
