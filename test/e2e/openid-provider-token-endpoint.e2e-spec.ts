import http from 'node:http';
import { AddressInfo } from 'node:net';
import * as jose from 'jose';
import * as oidc from 'openid-client';
import { ADMIN_ENV, adminApi, superAdmin } from '../support/admin-flows';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { authorizationRequest, Browser, listening } from '../support/op-browser';
import { createTestApp, TestApp } from '../support/test-app';

const API = 'https://api.example.test/orders';
const REDIRECT = 'https://app.example.test/callback';
const TOKEN_LIMIT = 5;

/**
 * The realm's token endpoint with real clients: `private_key_jwt` (a JWKS the client publishes),
 * DPoP-bound tokens (RFC 9449), and its rate limit per client.
 */
describe('the OpenID provider’s token endpoint', () => {
  let t: TestApp;
  let origin: string;
  let issuer: string;
  let admin: ReturnType<typeof adminApi>;
  let jwksServer: http.Server;
  let keys: { privateKey: jose.CryptoKey; publicJwk: jose.JWK };

  beforeAll(async () => {
    const pair = await jose.generateKeyPair('ES256', { extractable: true });
    keys = {
      privateKey: pair.privateKey,
      publicJwk: { ...(await jose.exportJWK(pair.publicKey)), kid: 'client-key-1', alg: 'ES256', use: 'sig' },
    };
    jwksServer = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [keys.publicJwk] })),
    );
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    t = await createTestApp({
      env: { ...ADMIN_ENV, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_OP_TOKEN: `${TOKEN_LIMIT}/60` },
    });
    origin = await listening(t);
    issuer = `${origin}/realms/default`;
    admin = adminApi(t, (await superAdmin(t)).accessToken, 'default');
    expect((await admin.post('/resources').send({ identifier: API, name: 'Orders', scopes: [{ name: 'orders:read' }] })).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
    await new Promise<void>((resolve) => jwksServer.close(() => resolve()));
  });

  const jwksUri = () => `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`;
  const keySet = () => jose.createRemoteJWKSet(new URL(`${issuer}/jwks`));

  async function machine(body: Record<string, unknown> = {}) {
    const created = await admin.post('/clients').send({
      name: 'Nightly job',
      type: 'confidential',
      grantTypes: ['client_credentials'],
      resources: [API],
      scopes: ['orders:read'],
      ...body,
    });
    expect(created.status).toBe(201);
    return { clientId: created.body.client.clientId as string, secret: created.body.clientSecret as string };
  }

  const discover = (clientId: string, auth: oidc.ClientAuth) =>
    oidc.discovery(new URL(issuer), clientId, undefined, auth, { execute: [oidc.allowInsecureRequests] });

  it('private_key_jwt: a client that publishes its keys authenticates with a signed assertion (openid-client)', async () => {
    const { clientId } = await machine({ tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: jwksUri() });
    const config = await discover(clientId, oidc.PrivateKeyJwt({ key: keys.privateKey, kid: 'client-key-1' }));
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'orders:read', resource: API });
    const { payload } = await jose.jwtVerify(tokens.access_token, keySet(), { issuer, audience: API, typ: 'at+jwt' });
    expect(payload).toMatchObject({ sub: clientId, client_id: clientId, scope: 'orders:read' });
    // Its secret is no way in for a private_key_jwt client.
    const bySecret = await discover(clientId, oidc.ClientSecretBasic('not the key'));
    await expect(oidc.clientCredentialsGrant(bySecret, { scope: 'orders:read', resource: API })).rejects.toMatchObject({ status: 401 });
  });

  it('DPoP: a client credentials token is bound to the client’s key (cnf.jkt, token_type DPoP)', async () => {
    const { clientId, secret } = await machine();
    const config = await discover(clientId, oidc.ClientSecretBasic(secret));
    const pair = await oidc.randomDPoPKeyPair('ES256');
    const tokens = await oidc.clientCredentialsGrant(
      config,
      { scope: 'orders:read', resource: API },
      { DPoP: oidc.getDPoPHandle(config, pair) },
    );
    expect(tokens.token_type).toBe('dpop');
    const { payload } = await jose.jwtVerify(tokens.access_token, keySet(), { issuer, audience: API });
    expect((payload.cnf as { jkt: string }).jkt).toBe(await jose.calculateJwkThumbprint(await jose.exportJWK(pair.publicKey)));
  });

  it('DPoP: a user’s access token and refresh token are bound; without the key’s proof they are refused', async () => {
    const created = await admin
      .post('/clients')
      .send({ name: 'SPA', type: 'public', redirectUris: [REDIRECT], firstParty: true, scopes: ['openid', 'email'] });
    const config = await discover(created.body.client.clientId, oidc.None());
    const person = await register(t, uniqueEmail('op-dpop'));
    const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email' });
    const browser = new Browser(origin);
    let page = await browser.open(request.url.href);
    page = await browser.submit(page, { email: person.email, password: PASSWORD });
    const tokens = await oidc.authorizationCodeGrant(
      config,
      new URL(page.location!),
      { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce },
      undefined,
      { DPoP: dpop },
    );
    expect(tokens.token_type).toBe('dpop');
    const info = await oidc.fetchUserInfo(config, tokens.access_token, person.id, { DPoP: dpop });
    expect(info.email).toBe(person.email);
    await expect(oidc.fetchUserInfo(config, tokens.access_token, person.id)).rejects.toMatchObject({ status: 401 });
    const other = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: other })).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: dpop });
    expect(refreshed.token_type).toBe('dpop');
  });

  it(`takes ${TOKEN_LIMIT} requests a minute per client (RATE_LIMIT_OP_TOKEN), then 429 with Retry-After; other clients are not counted with it`, async () => {
    const first = await machine();
    const second = await machine();
    const ask = (client: { clientId: string; secret: string }) =>
      t
        .api()
        .post('/realms/default/token')
        .auth(client.clientId, client.secret)
        .type('form')
        .send({ grant_type: 'client_credentials', scope: 'orders:read', resource: API });
    for (let n = 1; n <= TOKEN_LIMIT; n++) {
      const res = await ask(first);
      expect([res.status, res.headers['ratelimit-limit'], res.headers['ratelimit-remaining']]).toEqual([
        200,
        String(TOKEN_LIMIT),
        String(TOKEN_LIMIT - n),
      ]);
    }
    const refused = await ask(first);
    expect([refused.status, refused.body.error.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await ask(second)).status).toBe(200);
  });
});
