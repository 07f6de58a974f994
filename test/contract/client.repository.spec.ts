import { ClientRepository } from '../../src/application/ports/client.repository';
import { InitialAccessTokenRepository } from '../../src/application/ports/initial-access-token.repository';
import { ResourceRepository } from '../../src/application/ports/resource.repository';
import { Transaction } from '../../src/application/ports/transaction';
import { Client } from '../../src/domain/client/client';
import { Resource } from '../../src/domain/client/resource';
import { immediateTransaction } from '../fakes/simple-fakes';
import {
  InMemoryClientRepository,
  InMemoryInitialAccessTokenRepository,
  InMemoryResourceRepository,
} from '../fakes/in-memory-client.repository';
import { createTestApp, TestApp } from '../support/test-app';

/** The client, resource and initial-access-token repository contract, run against the fakes and the database. */
interface Repos {
  clients: ClientRepository;
  resources: ResourceRepository;
  tokens: InitialAccessTokenRepository;
  tx: Transaction;
}

const now = new Date('2026-11-25T12:00:00.000Z');
const later = new Date('2026-11-25T13:00:00.000Z');
let counter = 0;

function aResource(realmId = 'default', identifier = `https://api${++counter}.example`): Resource {
  return Resource.create({
    id: crypto.randomUUID(),
    realmId,
    identifier,
    name: 'API',
    scopes: [{ name: 'read', description: 'Read' }, { name: 'write' }],
    createdAt: now,
  });
}

function aClient(realmId = 'default', over: Partial<Parameters<typeof Client.register>[0]> = {}, known: Resource[] = []): Client {
  return Client.register(
    {
      clientId: `client-${++counter}-${Math.random().toString(36).slice(2)}`,
      realmId,
      name: 'App',
      type: 'public',
      redirectUris: ['https://app.example/cb'],
      registeredBy: 'admin',
      createdAt: now,
      ...over,
    },
    known,
  );
}

function contract(name: string, setup: () => Promise<{ repos: Repos; teardown: () => Promise<void> }>) {
  describe(`client repository contract: ${name}`, () => {
    let repos: Repos;
    let teardown: () => Promise<void>;
    beforeAll(async () => {
      ({ repos, teardown } = await setup());
    }, 60_000);
    afterAll(async () => teardown());

    it('stores every field of a client, finds it only in its realm, and keeps the type and creation time on save', async () => {
      const resource = aResource();
      await repos.resources.insert(resource);
      const client = aClient(
        'default',
        {
          type: 'confidential',
          postLogoutRedirectUris: ['https://app.example/'],
          grantTypes: ['authorization_code', 'client_credentials'],
          resources: [resource.identifier],
          scopes: ['openid', 'read'],
          firstParty: true,
          backchannelLogoutUri: 'https://app.example/bc',
          tokenEndpointAuthMethod: 'private_key_jwt',
          jwksUri: 'https://app.example/jwks',
          accessTokenTtlSeconds: 120,
          idTokenSignedResponseAlg: 'ES256',
        },
        [resource],
      );
      client.setSecret('hash-1', now);
      await repos.clients.insert(client);
      expect((await repos.clients.findById('default', client.clientId))?.snapshot()).toEqual(client.snapshot());
      expect(await repos.clients.findById('master', client.clientId)).toBeNull();
      expect(await repos.clients.findById('default', 'unknown')).toBeNull();

      client.update({ name: 'Renamed', scopes: ['openid'] }, [resource], later);
      client.setSecret('hash-2', later);
      await repos.clients.save(client);
      const stored = await repos.clients.findById('default', client.clientId);
      expect([stored?.name, stored?.scopes, stored?.secretHash, stored?.updatedAt, stored?.createdAt]).toEqual([
        'Renamed',
        ['openid'],
        'hash-2',
        later,
        now,
      ]);
    });

    it('lists a realm’s clients oldest first, and those naming a resource', async () => {
      const realmId = 'master';
      const resource = aResource(realmId);
      await repos.resources.insert(resource);
      const naming = aClient(realmId, { resources: [resource.identifier] }, [resource]);
      const other = aClient(realmId);
      await repos.clients.insert(naming);
      await repos.clients.insert(other);
      const listed = (await repos.clients.list(realmId)).map((c) => c.clientId);
      expect(listed).toEqual(expect.arrayContaining([naming.clientId, other.clientId]));
      expect((await repos.clients.listNamingResource(realmId, resource.identifier)).map((c) => c.clientId)).toEqual([naming.clientId]);
      expect(await repos.clients.listNamingResource('default', resource.identifier)).toEqual([]);
    });

    it('deletes a client once, only in its realm', async () => {
      const client = aClient();
      await repos.clients.insert(client);
      expect(await repos.clients.delete('master', client.clientId)).toBe(false);
      expect(await repos.clients.delete('default', client.clientId)).toBe(true);
      expect(await repos.clients.delete('default', client.clientId)).toBe(false);
      expect(await repos.clients.findById('default', client.clientId)).toBeNull();
    });

    it('keeps resource identifiers unique in a realm (RESOURCE_EXISTS), finds by id and identifier, and never changes an identifier', async () => {
      const resource = aResource();
      await repos.resources.insert(resource);
      await expect(repos.resources.insert(aResource('default', resource.identifier))).rejects.toMatchObject({ code: 'RESOURCE_EXISTS' });
      await repos.resources.insert(aResource('master', resource.identifier));
      expect((await repos.resources.findById('default', resource.id))?.snapshot()).toEqual(resource.snapshot());
      expect(await repos.resources.findById('master', resource.id)).toBeNull();
      expect(await repos.resources.findById('default', 'not-a-uuid')).toBeNull();
      expect((await repos.resources.findByIdentifiers('default', [resource.identifier, 'https://none.example'])).map((r) => r.id)).toEqual([
        resource.id,
      ]);
      expect(await repos.resources.findByIdentifiers('default', [])).toEqual([]);

      resource.update({ name: 'Renamed', scopes: [{ name: 'read' }], accessTokenTtlSeconds: 300 }, later);
      await repos.resources.save(resource);
      expect((await repos.resources.findById('default', resource.id))?.snapshot()).toMatchObject({
        identifier: resource.identifier,
        name: 'Renamed',
        scopes: [{ name: 'read', description: '' }],
        accessTokenTtlSeconds: 300,
        updatedAt: later,
      });
      expect((await repos.resources.list('default')).map((r) => r.id)).toContain(resource.id);
      expect(await repos.resources.delete('master', resource.id)).toBe(false);
      expect(await repos.resources.delete('default', resource.id)).toBe(true);
      expect(await repos.resources.delete('default', resource.id)).toBe(false);
    });

    it('consumes an initial access token once, in its realm, before it expires — also when two registrations race', async () => {
      await repos.tokens.insert({ tokenHash: 'iat-1', realmId: 'default', createdAt: now, expiresAt: later });
      expect(await repos.tokens.consume('master', 'iat-1', now)).toBe(false);
      const outcomes = await Promise.all([
        repos.tx.run(() => repos.tokens.consume('default', 'iat-1', now)),
        repos.tx.run(() => repos.tokens.consume('default', 'iat-1', now)),
      ]);
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      expect(await repos.tokens.consume('default', 'iat-1', now)).toBe(false);
      await repos.tokens.insert({ tokenHash: 'iat-2', realmId: 'default', createdAt: now, expiresAt: later });
      expect(await repos.tokens.consume('default', 'iat-2', later)).toBe(false);
      expect(await repos.tokens.consume('default', 'unknown', now)).toBe(false);
    });

    it('serialises a realm’s client writes: lockRealm inside a transaction', async () => {
      await repos.tx.run(async () => {
        await repos.clients.lockRealm('default');
        await repos.clients.lockRealm('default');
      });
    });
  });
}

contract('in-memory fakes', async () => ({
  repos: {
    clients: new InMemoryClientRepository(),
    resources: new InMemoryResourceRepository(),
    tokens: new InMemoryInitialAccessTokenRepository(),
    tx: immediateTransaction,
  },
  teardown: async () => undefined,
}));

contract('TypeORM on the database', async () => {
  const t: TestApp = await createTestApp();
  return {
    repos: {
      clients: t.app.get(ClientRepository),
      resources: t.app.get(ResourceRepository),
      tokens: t.app.get(InitialAccessTokenRepository),
      tx: t.app.get(Transaction),
    },
    teardown: () => t.close(),
  };
});
