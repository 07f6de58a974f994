import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import * as oidc from 'openid-client';
import { createMcpApp } from '../../examples/mcp-server/server';
import { ADMIN_ENV, adminApi, superAdmin } from '../../test/support/admin-flows';
import { PASSWORD, register, uniqueEmail } from '../../test/support/flows';
import { Browser, listening } from '../../test/support/op-browser';
import { createTestApp, type TestApp } from '../../test/support/test-app';

const REDIRECT = 'https://agent.example.test/callback';
const OTHER_API = 'https://api.example.test/other';

/** What an MCP host keeps for one server: its registration, tokens and PKCE verifier (in memory here). */
class AgentAuth implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  stored?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;

  get redirectUrl(): string {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test agent',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: OAuthClientInformationMixed) {
    this.client = client;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: OAuthTokens) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/*
 * The official MCP SDK's client against the example MCP server (examples/mcp-server) and the
 * service: discovery from the server's RFC 9728 metadata, dynamic registration in a realm open to
 * it, authorization with PKCE and `resource` through the service's pages (a real sign-in and the
 * consent), then a tool call.
 */
describe('an MCP client (official SDK) signs a user in and calls a tool of the example MCP server', () => {
  let t: TestApp;
  let origin: string;
  let issuer: string;
  let mcp: Server;
  let resource: string;
  let admin: ReturnType<typeof adminApi>;

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    origin = await listening(t);
    issuer = `${origin}/realms/default`;
    admin = adminApi(t, (await superAdmin(t)).accessToken, 'default');
    expect((await admin.patch('/realm').send({ settings: { clientRegistration: 'open' } })).status).toBe(200);

    // The MCP server's URL is its resource identifier: known once it listens.
    mcp = createServer();
    await new Promise<void>((resolve) => mcp.listen(0, '127.0.0.1', resolve));
    resource = `http://127.0.0.1:${(mcp.address() as AddressInfo).port}/mcp`;
    mcp.on('request', createMcpApp({ issuer, resource }));
    for (const [identifier, scopes] of [
      [resource, ['tools:call', 'tools:read']],
      [OTHER_API, ['other:read']],
    ] as const) {
      const created = await admin.post('/resources').send({ identifier, name: identifier, scopes: scopes.map((name) => ({ name })) });
      expect(created.status).toBe(201);
    }
  });
  afterAll(async () => {
    mcp.closeAllConnections();
    await new Promise<void>((resolve) => mcp.close(() => resolve()));
    await t.close();
  });

  it('discovery, registration, sign-in with consent, PKCE and resource; then whoami answers the signed-in user', async () => {
    const person = await register(t, uniqueEmail('mcp'), PASSWORD);
    const auth = new AgentAuth();

    // First attempt: 401 → the SDK reads the metadata, registers, and sends the user to sign in.
    await expect(
      new Client({ name: 'test-agent', version: '1.0.0' }).connect(
        new StreamableHTTPClientTransport(new URL(resource), { authProvider: auth }),
      ),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    const clientId = auth.client?.client_id as string;
    expect((await admin.get(`/clients/${clientId}`)).body.client).toMatchObject({
      type: 'public',
      registeredBy: 'dynamic',
      firstParty: false,
      resources: [resource],
    });
    const url = auth.authorizationUrl as URL;
    expect(`${url.origin}${url.pathname}`).toBe(`${issuer}/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: clientId,
      response_type: 'code',
      code_challenge_method: 'S256',
      resource,
      scope: 'tools:call',
      redirect_uri: REDIRECT,
    });

    // The user signs in on the service's pages and allows the agent.
    const browser = new Browser(origin);
    let page = await browser.open(url.href);
    page = await browser.submit(page, { email: person.email, password: PASSWORD });
    expect(page.html).toContain('Test agent');
    expect(page.html).toContain('<button type="submit" name="decision" value="allow">');
    page = await browser.submit(page, { decision: 'allow' });
    const back = new URL(page.location as string);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: auth });
    await transport.finishAuth(back.searchParams.get('code') as string);
    const claims = JSON.parse(Buffer.from((auth.stored?.access_token as string).split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ aud: resource, sub: person.id, client_id: clientId, scope: 'tools:call', iss: issuer });

    // Now the tool call goes through.
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(resource), { authProvider: auth }));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['whoami']);
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    expect(result.structuredContent).toEqual({ sub: person.id, clientId, scopes: ['tools:call'] });
    await client.close();
  });

  it('registration: a scope naming a resource’s scopes gives that resource, never to a client_credentials client; unknown scopes are refused', async () => {
    const register = (body: Record<string, unknown>, token?: string) =>
      fetch(`${issuer}/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ client_name: 'Agent', redirect_uris: [REDIRECT], ...body }),
      });
    const opened = await register({ token_endpoint_auth_method: 'none', scope: 'openid tools:read' });
    expect(opened.status).toBe(201);
    const { client_id } = (await opened.json()) as { client_id: string };
    expect((await admin.get(`/clients/${client_id}`)).body.client).toMatchObject({
      resources: [resource],
      scopes: ['openid', 'tools:read'],
    });
    const unknown = await register({ token_endpoint_auth_method: 'none', scope: 'tools:delete' });
    expect([unknown.status, ((await unknown.json()) as { error: string }).error]).toEqual([400, 'invalid_client_metadata']);

    // With initial access tokens a confidential client may register; a machine client gets no resource.
    expect((await admin.patch('/realm').send({ settings: { clientRegistration: 'token' } })).status).toBe(200);
    try {
      const iat = async () => (await admin.post('/initial-access-tokens').send({})).body.initialAccessToken as string;
      const machine = await register({ grant_types: ['client_credentials'], redirect_uris: [], scope: 'tools:call' }, await iat());
      expect([machine.status, ((await machine.json()) as { error: string }).error]).toEqual([400, 'invalid_client_metadata']);
      const web = await register({ token_endpoint_auth_method: 'client_secret_basic', scope: 'tools:call' }, await iat());
      expect(web.status).toBe(201);
      const webId = ((await web.json()) as { client_id: string }).client_id;
      expect((await admin.get(`/clients/${webId}`)).body.client.resources).toEqual([resource]);
    } finally {
      expect((await admin.patch('/realm').send({ settings: { clientRegistration: 'open' } })).status).toBe(200);
    }
  });

  describe('the same tool call with a token the server must refuse', () => {
    let config: oidc.Configuration;
    beforeAll(async () => {
      const created = await admin.post('/clients').send({
        name: 'Token source',
        type: 'confidential',
        grantTypes: ['client_credentials'],
        resources: [resource, OTHER_API],
        scopes: ['tools:call', 'tools:read', 'other:read'],
      });
      expect(created.status).toBe(201);
      config = await oidc.discovery(
        new URL(issuer),
        created.body.client.clientId,
        undefined,
        oidc.ClientSecretBasic(created.body.clientSecret),
        { execute: [oidc.allowInsecureRequests] },
      );
    });

    const callTool = (token: string) =>
      fetch(resource, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
      });
    const tokenFor = async (target: string, scope: string) =>
      (await oidc.clientCredentialsGrant(config, { resource: target, scope })).access_token;

    it('with tools:call for this server it is answered (the check below fails for the token, not the request)', async () => {
      const res = await callTool(await tokenFor(resource, 'tools:call'));
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('You are ');
    });

    it('a token for another resource of the realm → 401 invalid_token naming the metadata', async () => {
      const res = await callTool(await tokenFor(OTHER_API, 'other:read'));
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(
        `Bearer error="invalid_token", error_description="The token is for another resource", resource_metadata="${new URL(resource).origin}/.well-known/oauth-protected-resource/mcp"`,
      );
    });

    it('a token for this server without tools:call → 403 insufficient_scope', async () => {
      const res = await callTool(await tokenFor(resource, 'tools:read'));
      expect(res.status).toBe(403);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope", scope="tools:call", resource_metadata="/);
    });
  });
});
