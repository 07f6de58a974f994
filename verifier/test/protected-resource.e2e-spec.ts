import { createHash, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import { ADMIN_ENV, adminApi, superAdmin } from '../../test/support/admin-flows';
import { signedInUser } from '../../test/support/flows';
import { listening } from '../../test/support/op-browser';
import { createTestApp, type TestApp } from '../../test/support/test-app';
import { protectedResource, type ProtectedResource } from '../src/index';

/*
 * An API protected as an OAuth resource server in one call, against the real service: its
 * realm's OpenID provider issues the resource tokens (client credentials here, the quickest way
 * to a resource token; test/e2e/mcp.e2e-spec.ts gets them through a user's sign-in).
 */

const ORDERS = 'https://api.example.test/orders';
const BILLING = 'https://api.example.test/billing';

describe('protectedResource: RFC 9728 metadata, challenges, audience, scopes and DPoP', () => {
  let t: TestApp;
  let issuer: string;
  let rs: Server;
  let rsUrl: string;
  let api: ProtectedResource;
  let config: oidc.Configuration;

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    const origin = await listening(t);
    issuer = `${origin}/realms/default`;
    const admin = adminApi(t, (await superAdmin(t)).accessToken, 'default');
    for (const [identifier, scopes] of [
      [ORDERS, ['orders:read', 'orders:write']],
      [BILLING, ['billing:read']],
    ] as const) {
      const created = await admin.post('/resources').send({ identifier, name: identifier, scopes: scopes.map((name) => ({ name })) });
      expect(created.status).toBe(201);
    }
    const client = await admin.post('/clients').send({
      name: 'Orders job',
      type: 'confidential',
      grantTypes: ['client_credentials'],
      resources: [ORDERS, BILLING],
      scopes: ['orders:read', 'orders:write', 'billing:read'],
    });
    expect(client.status).toBe(201);
    config = await oidc.discovery(
      new URL(issuer),
      client.body.client.clientId,
      undefined,
      oidc.ClientSecretBasic(client.body.clientSecret),
      { execute: [oidc.allowInsecureRequests] },
    );

    api = protectedResource({
      issuer,
      resource: ORDERS,
      scopes: ['orders:read'],
      scopesSupported: ['orders:read', 'orders:write'],
      resourceName: 'Orders',
    });
    const app = express();
    app.use(api.metadata);
    app.get('/orders', api.protect(), (req, res) => {
      const token = (req as { accessToken?: { sub: string; scopes: string[]; audience: string[] } }).accessToken;
      res.json({ sub: token?.sub, scopes: token?.scopes, audience: token?.audience });
    });
    app.post('/orders', api.protect('orders:write'), (_req, res) => {
      res.status(201).json({ created: true });
    });
    rs = await new Promise<Server>((resolve) => {
      const server = app.listen(0, '127.0.0.1', () => resolve(server));
    });
    rsUrl = `http://127.0.0.1:${(rs.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => rs.close(() => resolve()));
    await t.close();
  });

  const tokenFor = async (resource: string, scope: string, options?: oidc.DPoPOptions) =>
    (await oidc.clientCredentialsGrant(config, { resource, scope }, options)).access_token;
  const metadataUrl = () => `${rsUrl}/.well-known/oauth-protected-resource/orders`;

  it('serves the metadata document at the well-known path and at that path followed by the resource’s path', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/orders']) {
      const res = await fetch(`${rsUrl}${path}`);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await res.json()).toEqual({
        resource: ORDERS,
        authorization_servers: [issuer],
        scopes_supported: ['orders:read', 'orders:write'],
        bearer_methods_supported: ['header'],
        dpop_signing_alg_values_supported: ['ES256', 'EdDSA'],
        resource_name: 'Orders',
      });
    }
    // The authorization server it names is the realm's provider, with a discovery document.
    const discovery = await fetch(`${issuer}/.well-known/openid-configuration`);
    expect(((await discovery.json()) as { issuer: string }).issuer).toBe(issuer);
    // Other paths and methods pass on (Express answers 404).
    expect((await fetch(`${rsUrl}/.well-known/oauth-protected-resource/billing`)).status).toBe(404);
    expect((await fetch(`${rsUrl}/.well-known/oauth-protected-resource`, { method: 'POST' })).status).toBe(404);
  });

  it('without a token: 401 with a Bearer challenge naming the metadata URL', async () => {
    const res = await fetch(`${rsUrl}/orders`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl()}", DPoP algs="ES256 EdDSA"`);
    expect(await res.json()).toEqual({ error: 'missing_token', error_description: 'An access token is required' });
  });

  it('a token for this resource with the required scope passes; req.accessToken has its scopes and audience', async () => {
    const token = await tokenFor(ORDERS, 'orders:read');
    const res = await fetch(`${rsUrl}/orders`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ sub: config.clientMetadata().client_id, scopes: ['orders:read'], audience: [ORDERS] });
  });

  it('a token for another resource of the realm, a token without aud (the service’s own sign-in) and a forged one: 401 invalid_token', async () => {
    const cases: [string, string][] = [
      [await tokenFor(BILLING, 'billing:read'), 'The token is for another resource'],
      [(await signedInUser(t)).accessToken, 'The token is for another resource'],
      [`${await tokenFor(ORDERS, 'orders:read')}x`, 'The token signature is invalid'],
    ];
    for (const [token, description] of cases) {
      const res = await fetch(`${rsUrl}/orders`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(
        `Bearer error="invalid_token", error_description="${description}", resource_metadata="${metadataUrl()}"`,
      );
      expect(await res.json()).toEqual({ error: 'invalid_token', error_description: description });
    }
  });

  it('a token lacking a required scope: 403 insufficient_scope naming every scope the route needs', async () => {
    const readOnly = await tokenFor(ORDERS, 'orders:read');
    const res = await fetch(`${rsUrl}/orders`, { method: 'POST', headers: { authorization: `Bearer ${readOnly}` } });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="orders:read orders:write", resource_metadata="${metadataUrl()}"`,
    );
    expect(await res.json()).toEqual({
      error: 'insufficient_scope',
      error_description: 'This requires the scope "orders:write"',
      scope: 'orders:read orders:write',
    });
    // The options' scopes count on every route: a token with orders:write alone is refused too.
    const writeOnly = await tokenFor(ORDERS, 'orders:write');
    expect((await fetch(`${rsUrl}/orders`, { headers: { authorization: `Bearer ${writeOnly}` } })).status).toBe(403);
    const both = await tokenFor(ORDERS, 'orders:read orders:write');
    expect((await fetch(`${rsUrl}/orders`, { method: 'POST', headers: { authorization: `Bearer ${both}` } })).status).toBe(201);
  });

  it('a DPoP-bound token passes with its proof; as Bearer, or with a replayed proof: 401 DPoP invalid_dpop_proof', async () => {
    const keyPair = await generateKeyPair('ES256');
    const token = await tokenFor(ORDERS, 'orders:read', { DPoP: oidc.getDPoPHandle(config, keyPair) });
    expect(JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).cnf.jkt).toEqual(expect.any(String));
    const proof = await new SignJWT({
      htm: 'GET',
      htu: `${rsUrl}/orders`,
      iat: Math.floor(Date.now() / 1000),
      jti: randomUUID(),
      ath: createHash('sha256').update(token).digest('base64url'),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(keyPair.publicKey) })
      .sign(keyPair.privateKey);

    const ok = await fetch(`${rsUrl}/orders`, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
    expect(ok.status).toBe(200);

    const replayed = await fetch(`${rsUrl}/orders`, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
    expect(replayed.status).toBe(401);
    expect(replayed.headers.get('www-authenticate')).toBe(
      `DPoP error="invalid_dpop_proof", error_description="The DPoP proof was already used", algs="ES256 EdDSA", resource_metadata="${metadataUrl()}"`,
    );

    const asBearer = await fetch(`${rsUrl}/orders`, { headers: { authorization: `Bearer ${token}` } });
    expect(asBearer.status).toBe(401);
    expect(await asBearer.json()).toMatchObject({ error: 'invalid_dpop_proof' });
  });

  it('refuses bad options early', () => {
    expect(() => protectedResource({ issuer, resource: 'not a uri' })).toThrow('resource must be an absolute URI');
    expect(() => protectedResource({ issuer, resource: ORDERS, scopes: ['a"b'] })).toThrow('is not a scope name');
    expect(() => api.protect('two words')).toThrow('is not a scope name');
  });
});
