import { createHash } from 'node:crypto';
import { HostResolver } from '../../src/application/ports/host-resolver';
import { ClientRepository } from '../../src/application/ports/client.repository';
import { ClientSecrets } from '../../src/application/clients/client-secrets';
import { InitialAccessTokens } from '../../src/application/clients/initial-access-tokens';
import { ADMIN_ENV, adminApi, createRealm, createUser, SignedIn, storedEvents, superAdmin } from '../support/admin-flows';
import { ScriptedResolver } from '../fakes/scripted-resolver';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(120_000);

type Body = Record<string, unknown>;
const BASE64URL_256 = /^[A-Za-z0-9_-]{43}$/;
const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

/**
 * Clients and API resources over the admin API: every route, every rule, the
 * secret shown once, resources leaving clients, initial access tokens, the master boundary.
 */
describe('admin API: clients, resources and initial access tokens', () => {
  let t: TestApp;
  let root: SignedIn;
  let admin: SignedIn;
  const resolver = new ScriptedResolver();
  let realmCounter = 0;

  beforeAll(async () => {
    resolver.answers.set('logout.public.test', [{ address: '93.184.216.34', family: 4 }]);
    resolver.answers.set('keys.public.test', [{ address: '93.184.216.34', family: 4 }]);
    resolver.answers.set('db.internal.test', [{ address: '10.0.0.7', family: 4 }]);
    t = await createTestApp({
      env: { ...ADMIN_ENV, ACCESS_TOKEN_TTL_SECONDS: '86400' },
      override: (b) => b.overrideProvider(HostResolver).useValue(resolver),
    });
    root = await superAdmin(t);
    admin = await createUser(t, root.accessToken, 'default', { roles: ['realm-admin'] });
  });
  afterAll(() => t?.close());

  /** A realm of its own per test, administered by its realm-admin. */
  async function freshRealm(): Promise<{ realm: string; api: ReturnType<typeof adminApi>; adminId: string }> {
    realmCounter += 1;
    const realm = `cl-${Date.now().toString(36)}-${realmCounter}`;
    await createRealm(t, root.accessToken, realm);
    const realmAdmin = await createUser(t, root.accessToken, realm, { roles: ['realm-admin'] });
    return { realm, api: adminApi(t, realmAdmin.accessToken, realm), adminId: realmAdmin.id };
  }

  const web = { name: 'Acme Web', type: 'public', redirectUris: ['https://app.acme.example/callback'] };
  const orders = {
    identifier: 'https://api.acme.example',
    name: 'Orders API',
    scopes: [{ name: 'orders:read', description: 'Read your orders' }, { name: 'orders:write' }],
  };

  describe('clients', () => {
    it('registers a public client with the defaults, lists it and shows it; no secret anywhere', async () => {
      const { realm, api, adminId } = await freshRealm();
      const created = await api.post('/clients').send(web);
      expect(created.status).toBe(201);
      expect(Object.keys(created.body)).toEqual(['client']);
      const client = created.body.client as Body;
      expect(client).toEqual({
        clientId: expect.stringMatching(BASE64URL_256),
        name: 'Acme Web',
        type: 'public',
        redirectUris: ['https://app.acme.example/callback'],
        postLogoutRedirectUris: [],
        grantTypes: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email', 'offline_access', 'roles'],
        resources: [],
        firstParty: false,
        backchannelLogoutUri: null,
        tokenEndpointAuthMethod: 'none',
        jwksUri: null,
        accessTokenTtlSeconds: null,
        idTokenSignedResponseAlg: 'RS256',
        registeredBy: 'admin',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect((await api.get('/clients')).body).toEqual({ clients: [client] });
      expect((await api.get(`/clients/${client.clientId}`)).body).toEqual({ client });
      expect(await storedEvents(t, realm, { type: 'client.created' })).toEqual([
        expect.objectContaining({
          actor_id: adminId,
          details: { clientId: client.clientId, name: 'Acme Web', type: 'public', registeredBy: 'admin' },
        }),
      ]);
      const [row] = await t.dataSource.query(`SELECT secret_hash FROM oauth_clients WHERE client_id = $1`, [client.clientId]);
      expect(row.secret_hash).toBeNull();
    });

    it('answers a confidential client’s secret once; GET never shows it and the database holds only its hash', async () => {
      const { realm, api } = await freshRealm();
      const created = await api.post('/clients').send({ name: 'Backend', type: 'confidential', grantTypes: ['client_credentials'] });
      expect(created.status).toBe(201);
      const { client, clientSecret } = created.body as { client: Body; clientSecret: string };
      expect(clientSecret).toMatch(BASE64URL_256);
      expect(client.tokenEndpointAuthMethod).toBe('client_secret_basic');
      const shown = [await api.get('/clients'), await api.get(`/clients/${client.clientId}`)];
      for (const res of shown) expect(JSON.stringify(res.body)).not.toContain(clientSecret);
      for (const res of shown) expect(JSON.stringify(res.body)).not.toMatch(/"(clientSecret|secretHash|secret_hash)"/);
      const rows = await t.dataSource.query(`SELECT * FROM oauth_clients WHERE realm_id = $1`, [realm]);
      expect(JSON.stringify(rows)).not.toContain(clientSecret);
      expect(rows[0].secret_hash).toBe(sha256(clientSecret));
      const events = await t.dataSource.query(`SELECT details FROM audit_events WHERE realm_id = $1`, [realm]);
      expect(JSON.stringify(events)).not.toContain(clientSecret);

      const stored = (await t.app.get(ClientRepository).findById(realm, client.clientId as string))!;
      const secrets = t.app.get(ClientSecrets);
      expect(secrets.verify(stored, clientSecret)).toBe(true);
      expect(secrets.verify(stored, `${clientSecret.slice(0, -1)}A`)).toBe(false);
    });

    it('rotates a confidential client’s secret: the new one is answered once, the old one stops working', async () => {
      const { realm, api } = await freshRealm();
      const created = await api.post('/clients').send({ ...web, type: 'confidential', tokenEndpointAuthMethod: 'client_secret_post' });
      const { clientId } = created.body.client as { clientId: string };
      const old = created.body.clientSecret as string;
      const rotated = await api.post(`/clients/${clientId}/rotate-secret`).send({});
      expect(rotated.status).toBe(200);
      expect(Object.keys(rotated.body)).toEqual(['client', 'clientSecret']);
      expect(rotated.body.clientSecret).toMatch(BASE64URL_256);
      expect(rotated.body.clientSecret).not.toBe(old);
      const stored = (await t.app.get(ClientRepository).findById(realm, clientId))!;
      const secrets = t.app.get(ClientSecrets);
      expect([secrets.verify(stored, old), secrets.verify(stored, rotated.body.clientSecret)]).toEqual([false, true]);
      expect(await storedEvents(t, realm, { type: 'client.secret_rotated' })).toEqual([expect.objectContaining({ details: { clientId } })]);

      const publicClient = (await api.post('/clients').send(web)).body.client as { clientId: string };
      const refused = await api.post(`/clients/${publicClient.clientId}/rotate-secret`).send({});
      expect([refused.status, refused.body.error.code, refused.body.error.details[0].field]).toEqual([400, 'VALIDATION_FAILED', 'type']);
      const unknown = await api.post('/clients/no-such-client/rotate-secret').send({});
      expect([unknown.status, unknown.body.error.code]).toEqual([404, 'CLIENT_NOT_FOUND']);
    });

    it.each<[string, Body, string]>([
      ['no name', { type: 'public', redirectUris: web.redirectUris }, 'name'],
      ['a name that is not a string', { ...web, name: 5 }, 'name'],
      ['an empty name', { ...web, name: ' ' }, 'name'],
      ['no type', { name: 'x', redirectUris: web.redirectUris }, 'type'],
      ['an unknown type', { ...web, type: 'native' }, 'type'],
      ['an unknown field', { ...web, clientSecret: 'mine' }, 'clientSecret'],
      ['registeredBy from the caller', { ...web, registeredBy: 'dynamic' }, 'registeredBy'],
      [
        'a public client authenticating with a secret',
        { ...web, tokenEndpointAuthMethod: 'client_secret_basic' },
        'tokenEndpointAuthMethod',
      ],
      ['a confidential client with none', { ...web, type: 'confidential', tokenEndpointAuthMethod: 'none' }, 'tokenEndpointAuthMethod'],
      ['private_key_jwt without a JWKS URI', { ...web, type: 'confidential', tokenEndpointAuthMethod: 'private_key_jwt' }, 'jwksUri'],
      ['grant types that are not a list', { ...web, grantTypes: 'authorization_code' }, 'grantTypes'],
      ['an unknown grant type', { ...web, grantTypes: ['password'] }, 'grantTypes'],
      ['no grant type', { ...web, grantTypes: [] }, 'grantTypes'],
      ['client_credentials for a public client', { ...web, grantTypes: ['client_credentials'] }, 'grantTypes'],
      ['authorization_code without a redirect URI', { name: 'x', type: 'public' }, 'redirectUris'],
      ['a relative redirect URI', { ...web, redirectUris: ['/callback'] }, 'redirectUris'],
      ['a redirect URI with a fragment', { ...web, redirectUris: ['https://app.acme.example/cb#done'] }, 'redirectUris'],
      ['http off loopback', { ...web, redirectUris: ['http://app.acme.example/cb'] }, 'redirectUris'],
      ['http on localhost', { ...web, redirectUris: ['http://localhost:3000/cb'] }, 'redirectUris'],
      ['a private-use scheme without a dot', { ...web, redirectUris: ['acme:/callback'] }, 'redirectUris'],
      [
        'a post-logout URI with a fragment',
        { ...web, postLogoutRedirectUris: ['https://app.acme.example/#bye'] },
        'postLogoutRedirectUris',
      ],
      ['a post-logout URI over http', { ...web, postLogoutRedirectUris: ['http://app.acme.example/'] }, 'postLogoutRedirectUris'],
      ['an unknown scope', { ...web, scopes: ['openid', 'admin'] }, 'scopes'],
      ['a resource’s scope without the resource', { ...web, scopes: ['orders:read'] }, 'scopes'],
      ['an unknown resource', { ...web, resources: ['https://nowhere.example'] }, 'resources'],
      ['firstParty not a boolean', { ...web, firstParty: 'yes' }, 'firstParty'],
      ['a back-channel logout URI over http', { ...web, backchannelLogoutUri: 'http://logout.public.test/bc' }, 'backchannelLogoutUri'],
      [
        'a back-channel logout URI on a private network',
        { ...web, backchannelLogoutUri: 'https://db.internal.test/bc' },
        'backchannelLogoutUri',
      ],
      ['a back-channel logout URI on loopback', { ...web, backchannelLogoutUri: 'https://127.0.0.1/bc' }, 'backchannelLogoutUri'],
      [
        'a back-channel logout URI that does not resolve',
        { ...web, backchannelLogoutUri: 'https://nowhere.test/bc' },
        'backchannelLogoutUri',
      ],
      [
        'a back-channel logout URI with credentials',
        { ...web, backchannelLogoutUri: 'https://u:p@logout.public.test/' },
        'backchannelLogoutUri',
      ],
      ['a JWKS URI on a metadata address', { ...web, type: 'confidential', jwksUri: 'https://169.254.169.254/keys' }, 'jwksUri'],
      ['a JWKS URI that is not a URL', { ...web, type: 'confidential', jwksUri: 'keys.public.test' }, 'jwksUri'],
      ['accessTokenTtlSeconds 59', { ...web, accessTokenTtlSeconds: 59 }, 'accessTokenTtlSeconds'],
      ['accessTokenTtlSeconds 86401', { ...web, accessTokenTtlSeconds: 86401 }, 'accessTokenTtlSeconds'],
      ['accessTokenTtlSeconds not whole', { ...web, accessTokenTtlSeconds: 90.5 }, 'accessTokenTtlSeconds'],
      ['an unknown ID token algorithm', { ...web, idTokenSignedResponseAlg: 'none' }, 'idTokenSignedResponseAlg'],
    ])('refuses %s with 400 VALIDATION_FAILED naming the field, and stores nothing', async (_name, body, field) => {
      const res = await adminApi(t, admin.accessToken, 'default').post('/clients').send(body);
      expect([res.status, res.body.error?.code]).toEqual([400, 'VALIDATION_FAILED']);
      expect((res.body.error.details as { field: string }[]).map((d) => d.field)).toContain(field);
      expect(await t.dataSource.query(`SELECT 1 FROM oauth_clients WHERE realm_id = 'default' AND name = $1`, [String(body.name)])).toEqual(
        [],
      );
    });

    it('accepts loopback, private-use and https redirect URIs, public back-channel and JWKS URIs, and every grant of a confidential client', async () => {
      const { api } = await freshRealm();
      const res = await api.post('/clients').send({
        name: 'Everything',
        type: 'confidential',
        redirectUris: ['https://app.acme.example/cb', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb', 'com.acme.app:/callback'],
        postLogoutRedirectUris: ['https://app.acme.example/'],
        grantTypes: ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'],
        scopes: ['openid'],
        firstParty: true,
        backchannelLogoutUri: 'https://logout.public.test/bc',
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwksUri: 'https://keys.public.test/jwks.json',
        accessTokenTtlSeconds: 86400,
        idTokenSignedResponseAlg: 'ES256',
      });
      expect(res.status).toBe(201);
      expect(res.body.client).toMatchObject({
        redirectUris: ['https://app.acme.example/cb', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb', 'com.acme.app:/callback'],
        firstParty: true,
        backchannelLogoutUri: 'https://logout.public.test/bc',
        jwksUri: 'https://keys.public.test/jwks.json',
        tokenEndpointAuthMethod: 'private_key_jwt',
        accessTokenTtlSeconds: 86400,
        idTokenSignedResponseAlg: 'ES256',
      });
    });

    it('changes any field but clientId and type, checking the whole client again; null clears', async () => {
      const { realm, api } = await freshRealm();
      const created = await api.post('/clients').send({ ...web, backchannelLogoutUri: 'https://logout.public.test/bc' });
      const { clientId } = created.body.client as { clientId: string };
      for (const [body, field] of [
        [{ clientId: 'mine' }, 'clientId'],
        [{ type: 'confidential' }, 'type'],
        [{ grantTypes: ['authorization_code', 'client_credentials'] }, 'grantTypes'],
        [{ redirectUris: [] }, 'redirectUris'],
        [{ name: null }, 'name'],
        [{ scopes: null }, 'scopes'],
        [{ backchannelLogoutUri: 'https://db.internal.test/bc' }, 'backchannelLogoutUri'],
      ] as const) {
        const res = await api.patch(`/clients/${clientId}`).send(body);
        expect([field, res.status, res.body.error?.code, res.body.error?.details?.[0]?.field]).toEqual([
          field,
          400,
          'VALIDATION_FAILED',
          field,
        ]);
      }
      const changed = await api.patch(`/clients/${clientId}`).send({
        name: 'TV app',
        grantTypes: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
        redirectUris: [],
        backchannelLogoutUri: null,
        accessTokenTtlSeconds: 300,
      });
      expect(changed.status).toBe(200);
      expect(changed.body.client).toMatchObject({
        clientId,
        type: 'public',
        name: 'TV app',
        redirectUris: [],
        backchannelLogoutUri: null,
        accessTokenTtlSeconds: 300,
      });
      expect((await api.get(`/clients/${clientId}`)).body.client).toEqual(changed.body.client);
      const [updated] = await storedEvents(t, realm, { type: 'client.updated' });
      expect(updated.details.clientId).toBe(clientId);
      expect((updated.details.changed as string[]).sort()).toEqual([
        'accessTokenTtlSeconds',
        'backchannelLogoutUri',
        'grantTypes',
        'name',
        'redirectUris',
      ]);
      const unknown = await api.patch('/clients/no-such-client').send({ name: 'x' });
      expect([unknown.status, unknown.body.error.code]).toEqual([404, 'CLIENT_NOT_FOUND']);
    });

    it('deletes a client: 404 afterwards, audited', async () => {
      const { realm, api } = await freshRealm();
      const { clientId } = (await api.post('/clients').send(web)).body.client as { clientId: string };
      const removed = await api.delete(`/clients/${clientId}`);
      expect([removed.status, removed.body]).toEqual([200, { success: true }]);
      expect((await api.get(`/clients/${clientId}`)).body.error.code).toBe('CLIENT_NOT_FOUND');
      expect((await api.delete(`/clients/${clientId}`)).status).toBe(404);
      expect((await api.get('/clients')).body).toEqual({ clients: [] });
      expect(await storedEvents(t, realm, { type: 'client.deleted' })).toEqual([expect.objectContaining({ details: { clientId } })]);
    });

    it('keeps clients to their realm: another realm’s administrator gets 404', async () => {
      const a = await freshRealm();
      const { clientId } = (await a.api.post('/clients').send(web)).body.client as { clientId: string };
      for (const res of [
        await adminApi(t, root.accessToken, 'default').get(`/clients/${clientId}`),
        await adminApi(t, root.accessToken, 'default').patch(`/clients/${clientId}`).send({ name: 'x' }),
        await adminApi(t, root.accessToken, 'default').post(`/clients/${clientId}/rotate-secret`).send({}),
        await adminApi(t, root.accessToken, 'default').delete(`/clients/${clientId}`),
      ]) {
        expect([res.status, res.body.error.code]).toEqual([404, 'CLIENT_NOT_FOUND']);
      }
      expect((await a.api.get(`/clients/${clientId}`)).status).toBe(200);
    });
  });

  describe('resources', () => {
    it('registers, lists, changes and deletes a resource, audited; a second one with the identifier is 409 RESOURCE_EXISTS', async () => {
      const { realm, api } = await freshRealm();
      const created = await api.post('/resources').send({ ...orders, accessTokenTtlSeconds: 600 });
      expect(created.status).toBe(201);
      const resource = created.body.resource as Body;
      expect(resource).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        identifier: 'https://api.acme.example',
        name: 'Orders API',
        scopes: [
          { name: 'orders:read', description: 'Read your orders' },
          { name: 'orders:write', description: '' },
        ],
        accessTokenTtlSeconds: 600,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect((await api.get('/resources')).body).toEqual({ resources: [resource] });
      const again = await api.post('/resources').send({ identifier: orders.identifier, name: 'Again' });
      expect([again.status, again.body.error.code]).toEqual([409, 'RESOURCE_EXISTS']);
      // Another realm may use the same identifier.
      expect(
        (
          await adminApi(t, admin.accessToken, 'default')
            .post('/resources')
            .send({ ...orders, identifier: `${orders.identifier}/${realm}` })
        ).status,
      ).toBe(201);

      const changed = await api.patch(`/resources/${resource.id}`).send({ name: 'Orders', accessTokenTtlSeconds: null });
      expect(changed.status).toBe(200);
      expect(changed.body.resource).toMatchObject({
        id: resource.id,
        identifier: orders.identifier,
        name: 'Orders',
        accessTokenTtlSeconds: null,
      });
      const identifier = await api.patch(`/resources/${resource.id}`).send({ identifier: 'https://other.example' });
      expect([identifier.status, identifier.body.error.details[0].field]).toEqual([400, 'identifier']);

      expect((await api.delete(`/resources/${resource.id}`)).body).toEqual({ success: true });
      expect((await api.get('/resources')).body).toEqual({ resources: [] });
      for (const res of [
        await api.patch(`/resources/${resource.id}`).send({ name: 'x' }),
        await api.delete(`/resources/${resource.id}`),
        await api.delete('/resources/not-a-uuid'),
      ]) {
        expect([res.status, res.body.error.code]).toEqual([404, 'RESOURCE_NOT_FOUND']);
      }
      expect((await storedEvents(t, realm)).map((e) => e.type).filter((type) => type.startsWith('resource.'))).toEqual([
        'resource.created',
        'resource.updated',
        'resource.deleted',
      ]);
    });

    it.each<[string, Body, string]>([
      ['no identifier', { name: 'API' }, 'identifier'],
      ['a relative identifier', { identifier: '/api', name: 'API' }, 'identifier'],
      ['an http identifier off loopback', { identifier: 'http://api.acme.example', name: 'API' }, 'identifier'],
      ['an identifier with a fragment', { identifier: 'https://api.acme.example/#v2', name: 'API' }, 'identifier'],
      ['no name', { identifier: 'https://api.acme.example/x' }, 'name'],
      ['scopes that are not a list', { ...orders, scopes: 'orders:read' }, 'scopes'],
      ['a scope without a name', { ...orders, scopes: [{ description: 'x' }] }, 'scopes.0.name'],
      ['a scope with an unknown field', { ...orders, scopes: [{ name: 'read', label: 'x' }] }, 'scopes.0.label'],
      ['a malformed scope name', { ...orders, scopes: [{ name: 'Orders.Read' }] }, 'scopes'],
      ['a scope named twice', { ...orders, scopes: [{ name: 'read' }, { name: 'read' }] }, 'scopes'],
      ['an OpenID scope name', { ...orders, scopes: [{ name: 'openid' }] }, 'scopes'],
      ['accessTokenTtlSeconds 59', { ...orders, accessTokenTtlSeconds: 59 }, 'accessTokenTtlSeconds'],
      ['an unknown field', { ...orders, audience: 'x' }, 'audience'],
    ])('refuses %s with 400 VALIDATION_FAILED naming the field', async (_name, body, field) => {
      const res = await adminApi(t, admin.accessToken, 'default').post('/resources').send(body);
      expect([res.status, res.body.error?.code]).toEqual([400, 'VALIDATION_FAILED']);
      expect((res.body.error.details as { field: string }[]).map((d) => d.field)).toContain(field);
    });

    it('lets a client name a resource and hold its scopes; deleting the resource takes both from every client', async () => {
      const { realm, api } = await freshRealm();
      const resource = (await api.post('/resources').send(orders)).body.resource as { id: string };
      const other = (
        await api.post('/resources').send({ identifier: 'https://billing.acme.example', name: 'Billing', scopes: [{ name: 'invoices' }] })
      ).body.resource as { id: string };
      const withBoth = (
        await api.post('/clients').send({
          ...web,
          resources: [orders.identifier, 'https://billing.acme.example'],
          scopes: ['openid', 'orders:read', 'orders:write', 'invoices'],
        })
      ).body.client as { clientId: string };
      const withOrders = (await api.post('/clients').send({ ...web, resources: [orders.identifier], scopes: ['orders:read'] })).body
        .client as { clientId: string };
      const untouched = (await api.post('/clients').send(web)).body.client as Body;

      // A scope the resource loses leaves the clients that held it.
      const narrowed = await api.patch(`/resources/${resource.id}`).send({ scopes: [{ name: 'orders:read' }] });
      expect(narrowed.status).toBe(200);
      expect((await api.get(`/clients/${withBoth.clientId}`)).body.client.scopes).toEqual(['openid', 'orders:read', 'invoices']);

      expect((await api.delete(`/resources/${resource.id}`)).status).toBe(200);
      expect((await api.get(`/clients/${withBoth.clientId}`)).body.client).toMatchObject({
        resources: ['https://billing.acme.example'],
        scopes: ['openid', 'invoices'],
      });
      expect((await api.get(`/clients/${withOrders.clientId}`)).body.client).toMatchObject({ resources: [], scopes: [] });
      expect((await api.get(`/clients/${untouched.clientId}`)).body.client).toEqual(untouched);
      const rows = await t.dataSource.query(`SELECT client_id FROM oauth_clients WHERE realm_id = $1 AND $2 = ANY(resources)`, [
        realm,
        orders.identifier,
      ]);
      expect(rows).toEqual([]);
      expect(await storedEvents(t, realm, { type: 'resource.deleted' })).toEqual([
        expect.objectContaining({ details: { resourceId: resource.id, identifier: orders.identifier, clientsChanged: 2 } }),
      ]);
      // The other resource is still there for new clients.
      expect(other.id).toBeDefined();
      expect((await api.post('/clients').send({ ...web, resources: [orders.identifier] })).body.error.details[0].field).toBe('resources');
    });
  });

  describe('initial access tokens', () => {
    it('answers a token once, stores its hash, and lets exactly one registration consume it', async () => {
      const { realm, api } = await freshRealm();
      const created = await api.post('/initial-access-tokens').send({});
      expect(created.status).toBe(201);
      const { initialAccessToken, expiresAt } = created.body as { initialAccessToken: string; expiresAt: string };
      expect(initialAccessToken).toMatch(BASE64URL_256);
      const lifetime = new Date(expiresAt).getTime() - t.clock.now().getTime();
      expect(Math.abs(lifetime - 86_400_000)).toBeLessThan(5_000);
      const rows = await t.dataSource.query(`SELECT * FROM initial_access_tokens WHERE realm_id = $1`, [realm]);
      expect(JSON.stringify(rows)).not.toContain(initialAccessToken);
      expect(rows[0].token_hash).toBe(sha256(initialAccessToken));

      const tokens = t.app.get(InitialAccessTokens);
      expect(await tokens.consume('default', initialAccessToken)).toBe(false);
      const outcomes = await Promise.all([tokens.consume(realm, initialAccessToken), tokens.consume(realm, initialAccessToken)]);
      expect(outcomes.sort()).toEqual([false, true]);
      expect(await tokens.consume(realm, initialAccessToken)).toBe(false);
      expect(await tokens.consume(realm, 'not-a-token')).toBe(false);
    });

    it('expires after expiresInSeconds (60–2592000)', async () => {
      const { realm, api } = await freshRealm();
      const res = await api.post('/initial-access-tokens').send({ expiresInSeconds: 60 });
      expect(res.status).toBe(201);
      expect((await api.post('/initial-access-tokens').send({ expiresInSeconds: 2592000 })).status).toBe(201);
      for (const expiresInSeconds of [59, 2592001, 90.5, '600']) {
        const bad = await api.post('/initial-access-tokens').send({ expiresInSeconds });
        expect([bad.status, bad.body.error.details[0].field]).toEqual([400, 'expiresInSeconds']);
      }
      t.clock.advance(61);
      expect(await t.app.get(InitialAccessTokens).consume(realm, res.body.initialAccessToken)).toBe(false);
    });
  });

  describe("master's boundary", () => {
    it('keeps clients, resources and initial access tokens of master to the super-admins; a realm-admin of master is refused', async () => {
      const masterAdmin = await createUser(t, root.accessToken, 'master', { roles: ['realm-admin'] });
      const refused = adminApi(t, masterAdmin.accessToken, 'master');
      for (const res of [
        await refused.get('/clients'),
        await refused.post('/clients').send(web),
        await refused.get('/clients/anything'),
        await refused.get('/resources'),
        await refused.post('/resources').send(orders),
        await refused.post('/initial-access-tokens').send({}),
      ]) {
        expect([res.status, res.body.error.code]).toEqual([403, 'FORBIDDEN']);
      }
      expect(await t.dataSource.query(`SELECT 1 FROM oauth_clients WHERE realm_id = 'master'`)).toEqual([]);

      const allowed = adminApi(t, root.accessToken, 'master');
      const created = await allowed.post('/clients').send(web);
      expect(created.status).toBe(201);
      expect((await allowed.get('/clients')).body.clients).toHaveLength(1);
      expect((await allowed.post('/resources').send(orders)).status).toBe(201);
      expect((await allowed.post('/initial-access-tokens').send({})).status).toBe(201);
      // A realm-admin of another realm administers its own realm's clients.
      expect((await adminApi(t, admin.accessToken, 'default').get('/clients')).status).toBe(200);
    });
  });
});
