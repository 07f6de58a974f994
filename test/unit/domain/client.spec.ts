import { Client, ClientRegistration } from '../../../src/domain/client/client';
import { assertRedirectUri, assertResourceIdentifier } from '../../../src/domain/client/client-uris';
import { Resource } from '../../../src/domain/client/resource';
import { DomainError } from '../../../src/domain/errors';

const NOW = new Date('2026-11-25T12:00:00.000Z');
const LATER = new Date('2026-11-25T13:00:00.000Z');

const orders = Resource.create({
  id: 'r1',
  realmId: 'acme',
  identifier: 'https://api.acme.example',
  name: 'Orders API',
  scopes: [{ name: 'orders:read', description: 'Read orders' }, { name: 'orders:write' }],
  createdAt: NOW,
});

const base = (over: Partial<ClientRegistration> = {}): ClientRegistration => ({
  clientId: 'c1',
  realmId: 'acme',
  name: 'Acme Web',
  type: 'public',
  redirectUris: ['https://app.acme.example/callback'],
  registeredBy: 'admin',
  createdAt: NOW,
  ...over,
});

function refusal(work: () => unknown): { field: string } | null {
  try {
    work();
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('VALIDATION_FAILED');
    return { field: (error as DomainError).meta.details![0].field };
  }
}

describe('Client', () => {
  it('registers a public client with the defaults', () => {
    const client = Client.register(base(), []);
    expect(client.snapshot()).toMatchObject({
      type: 'public',
      tokenEndpointAuthMethod: 'none',
      grantTypes: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'email', 'offline_access', 'roles'],
      resources: [],
      postLogoutRedirectUris: [],
      firstParty: false,
      backchannelLogoutUri: null,
      jwksUri: null,
      accessTokenTtlSeconds: null,
      idTokenSignedResponseAlg: 'RS256',
      registeredBy: 'admin',
      secretHash: null,
    });
  });

  it('gives a confidential client client_secret_basic by default, and a secret', () => {
    const client = Client.register(base({ type: 'confidential' }), []);
    expect(client.tokenEndpointAuthMethod).toBe('client_secret_basic');
    client.setSecret('hash', LATER);
    expect([client.secretHash, client.updatedAt]).toEqual(['hash', LATER]);
  });

  it('refuses a secret to a public client', () => {
    expect(refusal(() => Client.register(base(), []).setSecret('hash', NOW))).toEqual({ field: 'type' });
  });

  it.each<[string, Partial<ClientRegistration>, string]>([
    ['an empty name', { name: '  ' }, 'name'],
    ['a name over 100 characters', { name: 'x'.repeat(101) }, 'name'],
    ['an unknown type', { type: 'native' }, 'type'],
    ['a public client with a secret method', { tokenEndpointAuthMethod: 'client_secret_basic' }, 'tokenEndpointAuthMethod'],
    ['a confidential client with none', { type: 'confidential', tokenEndpointAuthMethod: 'none' }, 'tokenEndpointAuthMethod'],
    ['an unknown method', { type: 'confidential', tokenEndpointAuthMethod: 'tls_client_auth' }, 'tokenEndpointAuthMethod'],
    ['private_key_jwt without jwksUri', { type: 'confidential', tokenEndpointAuthMethod: 'private_key_jwt' }, 'jwksUri'],
    ['no grant type', { grantTypes: [] }, 'grantTypes'],
    ['an unknown grant type', { grantTypes: ['password'] }, 'grantTypes'],
    ['a public client with client_credentials', { grantTypes: ['client_credentials'] }, 'grantTypes'],
    ['authorization_code without a redirect URI', { redirectUris: [] }, 'redirectUris'],
    ['a relative redirect URI', { redirectUris: ['/callback'] }, 'redirectUris'],
    ['a redirect URI with a fragment', { redirectUris: ['https://app.acme.example/cb#x'] }, 'redirectUris'],
    ['a redirect URI with an empty fragment', { redirectUris: ['https://app.acme.example/cb#'] }, 'redirectUris'],
    ['http on a public host', { redirectUris: ['http://app.acme.example/cb'] }, 'redirectUris'],
    ['http on localhost', { redirectUris: ['http://localhost:8080/cb'] }, 'redirectUris'],
    ['a private-use scheme without a dot', { redirectUris: ['myapp:/callback'] }, 'redirectUris'],
    ['a javascript: URI', { redirectUris: ['javascript:alert(1)'] }, 'redirectUris'],
    ['credentials in a redirect URI', { redirectUris: ['https://u:p@app.acme.example/cb'] }, 'redirectUris'],
    ['21 redirect URIs', { redirectUris: Array.from({ length: 21 }, (_, i) => `https://app.acme.example/${i}`) }, 'redirectUris'],
    ['a bad post-logout URI', { postLogoutRedirectUris: ['http://app.acme.example/'] }, 'postLogoutRedirectUris'],
    ['an unknown scope', { scopes: ['openid', 'admin'] }, 'scopes'],
    ['a resource scope without its resource', { scopes: ['orders:read'] }, 'scopes'],
    ['an unknown resource', { resources: ['https://unknown.example'] }, 'resources'],
    ['accessTokenTtlSeconds 59', { accessTokenTtlSeconds: 59 }, 'accessTokenTtlSeconds'],
    ['accessTokenTtlSeconds 86401', { accessTokenTtlSeconds: 86401 }, 'accessTokenTtlSeconds'],
    ['accessTokenTtlSeconds 90.5', { accessTokenTtlSeconds: 90.5 }, 'accessTokenTtlSeconds'],
    ['an unknown ID token algorithm', { idTokenSignedResponseAlg: 'HS256' }, 'idTokenSignedResponseAlg'],
    ['a dynamic first-party client', { registeredBy: 'dynamic', firstParty: true }, 'firstParty'],
  ])('refuses %s, naming the field', (_name, over, field) => {
    expect(refusal(() => Client.register(base(over), [orders]))).toEqual({ field });
  });

  it.each([
    'https://app.acme.example/callback',
    'http://127.0.0.1:51004/callback',
    'http://[::1]/callback',
    'com.example.app:/callback',
    'com.example.app://callback',
  ])('accepts the redirect URI %s, kept as written', (uri) => {
    expect(assertRedirectUri(uri, 'redirectUris')).toBe(uri);
  });

  it('accepts a client with no redirect URI when authorization_code is not allowed, and the scopes of its resources', () => {
    const client = Client.register(
      base({
        type: 'confidential',
        redirectUris: [],
        grantTypes: ['client_credentials'],
        resources: ['https://api.acme.example'],
        scopes: ['orders:read', 'orders:read'],
        accessTokenTtlSeconds: 60,
      }),
      [orders],
    );
    expect([client.scopes, client.resources, client.accessTokenTtlSeconds]).toEqual([['orders:read'], ['https://api.acme.example'], 60]);
  });

  it('checks a change against the whole client: no client_credentials for a public client, no last redirect URI taken away', () => {
    const client = Client.register(base(), []);
    expect(refusal(() => client.update({ grantTypes: ['authorization_code', 'client_credentials'] }, [], LATER))).toEqual({
      field: 'grantTypes',
    });
    expect(refusal(() => client.update({ redirectUris: [] }, [], LATER))).toEqual({ field: 'redirectUris' });
    expect(refusal(() => client.update({ resources: [] }, [], LATER))).toBeNull();
    client.update({ grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'], redirectUris: [], name: 'TV app' }, [], LATER);
    expect([client.redirectUris, client.name, client.updatedAt, client.type]).toEqual([[], 'TV app', LATER, 'public']);
  });

  it('ignores fields a change may not touch', () => {
    const client = Client.register(base(), []);
    client.update({ name: 'Renamed', ...({ type: 'confidential', clientId: 'other' } as object) }, [], LATER);
    expect([client.clientId, client.type, client.name]).toEqual(['c1', 'public', 'Renamed']);
  });

  it('takes a deleted resource and its scopes away, keeping the OpenID scopes', () => {
    const client = Client.register(base({ resources: ['https://api.acme.example'], scopes: ['openid', 'orders:read'] }), [orders]);
    expect(client.reconcileResources([orders], LATER)).toBe(false);
    expect(client.reconcileResources([], LATER)).toBe(true);
    expect([client.resources, client.scopes, client.updatedAt]).toEqual([[], ['openid'], LATER]);
  });
});

describe('Resource', () => {
  it('keeps its identifier, scopes with descriptions, and an optional token lifetime', () => {
    expect(orders.snapshot()).toMatchObject({
      identifier: 'https://api.acme.example',
      scopes: [
        { name: 'orders:read', description: 'Read orders' },
        { name: 'orders:write', description: '' },
      ],
      accessTokenTtlSeconds: null,
    });
    expect(assertResourceIdentifier('http://127.0.0.1:8080/api')).toBe('http://127.0.0.1:8080/api');
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a relative identifier', { identifier: '/api' }, 'identifier'],
    ['an http identifier off loopback', { identifier: 'http://api.acme.example' }, 'identifier'],
    ['an identifier with a fragment', { identifier: 'https://api.acme.example/#v1' }, 'identifier'],
    ['a urn identifier', { identifier: 'urn:acme:api' }, 'identifier'],
    ['an empty name', { name: '' }, 'name'],
    ['a scope name with a capital', { scopes: [{ name: 'Orders' }] }, 'scopes'],
    ['a scope name of 65 characters', { scopes: [{ name: 'a'.repeat(65) }] }, 'scopes'],
    ['a scope named twice', { scopes: [{ name: 'read' }, { name: 'read' }] }, 'scopes'],
    ['an OpenID scope name', { scopes: [{ name: 'email' }] }, 'scopes'],
    ['a description over 200 characters', { scopes: [{ name: 'read', description: 'x'.repeat(201) }] }, 'scopes'],
    ['accessTokenTtlSeconds 0', { accessTokenTtlSeconds: 0 }, 'accessTokenTtlSeconds'],
  ])('refuses %s, naming the field', (_name, over, field) => {
    const input = { id: 'r2', realmId: 'acme', identifier: 'https://api.acme.example', name: 'API', createdAt: NOW, ...over };
    expect(refusal(() => Resource.create(input as Parameters<typeof Resource.create>[0]))).toEqual({ field });
  });

  it('changes name, scopes and lifetime, never its identifier', () => {
    const resource = Resource.restore(orders.snapshot());
    resource.update({ name: 'Orders', scopes: [{ name: 'orders:read' }], accessTokenTtlSeconds: 600 }, LATER);
    expect(resource.snapshot()).toMatchObject({
      identifier: 'https://api.acme.example',
      name: 'Orders',
      scopes: [{ name: 'orders:read', description: '' }],
      accessTokenTtlSeconds: 600,
      updatedAt: LATER,
    });
  });
});
