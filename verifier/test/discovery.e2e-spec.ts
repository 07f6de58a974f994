import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import * as oidc from 'openid-client';
import { DeferredWork } from '../../src/adapters/http/deferred-work';
import { PASSWORD, register, signedInUser, uniqueEmail } from '../../test/support/flows';
import { createTestApp, type TestApp } from '../../test/support/test-app';
import { createAccessTokenVerifier, KeysUnavailableError, requireAccessToken, type AccessTokenVerifierOptions } from '../src/index';

/*
 * A team's usual setup: the frontend on one origin (PUBLIC_URL, where the emails send people),
 * the service on another (API_URL, the issuer). A resource server configured with the issuer
 * alone finds the keys through the discovery document — with a third-party library and with
 * the shipped verifier — and the shipped verifier answers 503, never 401, when it cannot get
 * the keys, with a log line saying why.
 */

async function listen(handler: (req: { url?: string }, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * The `jose` recipe of docs/resource-servers.md ("Other languages: the issuer is enough") as
 * written there, its issuer replaced by the test service's: `verifyBearer`.
 */
function joseRecipe(issuer: string): (token: string) => Promise<JWTPayload> {
  const markdown = readFileSync(join(__dirname, '../../docs/resource-servers.md'), 'utf8');
  const marker = markdown.indexOf('<!-- example: jose-issuer-only');
  if (marker < 0) throw new Error('docs/resource-servers.md has no jose-issuer-only example');
  const code = /```js\n([\s\S]*?)```/.exec(markdown.slice(marker))?.[1];
  if (!code) throw new Error('the jose-issuer-only example has no js block');
  const body = code
    .replace("import { createRemoteJWKSet, jwtVerify } from 'jose';", '')
    .replace("'https://id.example.com/realms/default'", JSON.stringify(issuer))
    .replace('export async function verifyBearer', 'async function verifyBearer');
  if (body.includes('import ') || body.includes('id.example.com')) throw new Error(`the example changed shape:\n${code}`);
  const make = new Function('createRemoteJWKSet', 'jwtVerify', `${body}\nreturn verifyBearer;`);
  return make(createRemoteJWKSet, jwtVerify) as (token: string) => Promise<JWTPayload>;
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** A port nothing listens on (taken, then released). */
async function closedPort(): Promise<string> {
  const { server, url } = await listen(() => undefined);
  await close(server);
  return url;
}

describe('resource server configured with the issuer alone, frontend on another origin', () => {
  let t: TestApp;
  /** The service's address (API_URL), and the default realm's issuer there. */
  let apiUrl: string;
  let issuer: string;
  let frontend: { server: Server; url: string };
  let user: Awaited<ReturnType<typeof signedInUser>>;

  beforeAll(async () => {
    // A single-page app's server: every path answers its HTML page, as a dev server does.
    frontend = await listen((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end('<!doctype html><title>App</title><div id="root"></div>');
    });
    const port = (await closedPort()).split(':').pop() as string;
    apiUrl = `http://127.0.0.1:${port}`;
    issuer = `${apiUrl}/realms/default`;
    t = await createTestApp({ env: { API_URL: apiUrl, PUBLIC_URL: frontend.url, CORS_ORIGINS: frontend.url } });
    await t.app.listen(Number(port), '127.0.0.1');
    user = await signedInUser(t);
  });
  afterAll(async () => {
    await t.close();
    await close(frontend.server);
  });

  it('issues tokens whose iss is the realm’s issuer under API_URL, publishes its discovery document there, and still links emails to the frontend', async () => {
    const [, payload] = user.accessToken.split('.');
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString()).iss).toBe(issuer);

    const res = await t.api().get('/realms/default/.well-known/openid-configuration');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body).toMatchObject({
      issuer,
      jwks_uri: `${apiUrl}/realms/default/jwks`,
      dpop_signing_alg_values_supported: ['ES256', 'EdDSA'],
    });

    const email = uniqueEmail('links');
    await register(t, email, PASSWORD);
    await t.app.get(DeferredWork).settled();
    const [row]: { text_body?: string; body_text?: string }[] = await t.dataSource.query(
      `SELECT * FROM email_outbox WHERE recipient = $1 ORDER BY created_at`,
      [email],
    );
    expect(JSON.stringify(row)).toContain(`${frontend.url}/verify-email?token=`);
  });

  it('a third-party library (openid-client discovery + jose) configured with the issuer only verifies the tokens', async () => {
    // openid-client refuses plain-http issuers unless told: the service runs on http in this test.
    const configuration = await oidc.discovery(new URL(issuer), 'orders-api', undefined, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    const metadata = configuration.serverMetadata();
    expect(metadata.issuer).toBe(issuer);
    const keys = createRemoteJWKSet(new URL(metadata.jwks_uri as string));
    const { payload, protectedHeader } = await jwtVerify(user.accessToken, keys, { issuer, typ: 'at+jwt' });
    expect(payload.sub).toBe(user.id);
    expect(protectedHeader.alg).toBe('ES256');
    // A token signed elsewhere is still refused by the same library.
    const forged = `${user.accessToken.slice(0, -4)}AAAA`;
    await expect(jwtVerify(forged, keys, { issuer })).rejects.toThrow();
  });

  it('the jose recipe of the docs, given the issuer alone, accepts a Bearer token and refuses a DPoP-bound one replayed as Bearer', async () => {
    const verifyBearer = joseRecipe(issuer);
    expect((await verifyBearer(user.accessToken)).sub).toBe(user.id);
    await expect(verifyBearer(`${user.accessToken.slice(0, -4)}AAAA`)).rejects.toThrow();

    // A token bound to a DPoP key, as a browser with DPoP gets it, then sent as Bearer without its proof.
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const proof = await new SignJWT({
      htm: 'POST',
      htu: `${apiUrl}/api/v1/auth/login`,
      iat: Math.floor(Date.now() / 1000),
      jti: randomUUID(),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(publicKey) })
      .sign(privateKey);
    const email = uniqueEmail('jose-dpop');
    await register(t, email, PASSWORD);
    const bound = await t.api().post('/api/v1/auth/login').set('DPoP', proof).send({ email, password: PASSWORD });
    expect(bound.body.tokens.tokenType).toBe('DPoP');
    const boundToken = bound.body.tokens.accessToken as string;
    // jose alone accepts it (the signature and issuer are fine) …
    expect(
      (await jwtVerify(boundToken, createRemoteJWKSet(new URL(`${apiUrl}/.well-known/jwks.json`)), { issuer })).payload.cnf,
    ).toBeDefined();
    // … the recipe refuses it.
    await expect(verifyBearer(boundToken)).rejects.toThrow('a DPoP-bound token needs its proof');
  });

  describe('the shipped verifier', () => {
    const warnings: string[] = [];
    const logger = { warn: (message: string) => warnings.push(message) };
    const servers: Server[] = [];

    async function resourceServer(options: Partial<AccessTokenVerifierOptions>): Promise<string> {
      const verifier = createAccessTokenVerifier({ issuer, logger, fetchTimeoutMs: 300, ...options });
      const api = express();
      api.get('/orders', requireAccessToken(verifier), (req, res) => {
        res.json({ user: (req as { accessToken?: { sub: string } }).accessToken?.sub });
      });
      const server = await new Promise<Server>((resolve) => {
        const s = api.listen(0, '127.0.0.1', () => resolve(s));
      });
      servers.push(server);
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }

    const getOrders = (url: string, token = user.accessToken) => fetch(`${url}/orders`, { headers: { authorization: `Bearer ${token}` } });

    beforeEach(() => {
      warnings.length = 0;
    });
    afterAll(async () => {
      await Promise.all(servers.map(close));
    });

    it('finds the keys through discovery when given only the issuer', async () => {
      const rs = await resourceServer({});
      const res = await getOrders(rs);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ user: user.id });
      expect(warnings).toEqual([]);
    });

    it('answers 503 with Retry-After and logs why when the issuer is the frontend (its HTML is no discovery document)', async () => {
      const rs = await resourceServer({ issuer: `${frontend.url}/realms/default` });
      const res = await getOrders(rs);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await res.json()).toEqual({ error: 'temporarily_unavailable', error_description: 'The access token cannot be checked now' });
      expect(warnings).toEqual([
        expect.stringMatching(/openid-configuration is not JSON \(is the issuer the identity service's API_URL\?\)/),
      ]);
    });

    it('answers 503 and logs why when the issuer is unreachable, too slow, answers 404, or names another issuer', async () => {
      const slow = await listen(() => undefined); // accepts the connection and never answers
      const missing = await listen((_req, res) => {
        res.statusCode = 404;
        res.end('{}');
      });
      const impostor = await listen((_req, res) => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ issuer: 'https://elsewhere.example', jwks_uri: `${apiUrl}/.well-known/jwks.json` }));
      });
      servers.push(slow.server, missing.server, impostor.server);
      const cases: [string, RegExp][] = [
        [await closedPort(), /unreachable \(fetch failed: .*ECONNREFUSED/],
        [slow.url, /unreachable \(timed out\)/],
        [missing.url, /answered 404, not 200/],
        [impostor.url, /names the issuer "https:\/\/elsewhere.example", not http/],
      ];
      for (const [candidate, why] of cases) {
        warnings.length = 0;
        const res = await getOrders(await resourceServer({ issuer: `${candidate}/realms/default` }));
        expect({ candidate, status: res.status }).toEqual({ candidate, status: 503 });
        expect(warnings).toEqual([expect.stringMatching(why)]);
        expect(warnings[0]).toContain(`cannot get the keys of ${candidate}/realms/default, answering 503`);
      }
      slow.server.closeAllConnections();
    });

    it('answers 503 when the JWKS itself cannot be fetched (refused or not 200), 401 only for the token', async () => {
      const broken = await listen((_req, res) => {
        res.statusCode = 500;
        res.end('oops');
      });
      servers.push(broken.server);
      const refused = await getOrders(await resourceServer({ jwksUri: `${await closedPort()}/.well-known/jwks.json` }));
      expect(refused.status).toBe(503);
      expect(warnings.at(-1)).toMatch(/the keys at http:\/\/127\.0\.0\.1:\d+\/\.well-known\/jwks\.json could not be fetched/);
      const failing = await getOrders(await resourceServer({ jwksUri: `${broken.url}/.well-known/jwks.json` }));
      expect(failing.status).toBe(503);

      // With the keys at hand, a bad token is the token's fault.
      const rs = await resourceServer({});
      expect((await getOrders(rs, `${user.accessToken.slice(0, -4)}AAAA`)).status).toBe(401);
    });

    it('throws KeysUnavailableError from verify() itself, for frameworks other than Express', async () => {
      const verifier = createAccessTokenVerifier({ issuer: `${frontend.url}/realms/default`, logger });
      const attempt = verifier.verify({ authorization: `Bearer ${user.accessToken}`, method: 'GET', url: 'http://api.example/orders' });
      await expect(attempt).rejects.toBeInstanceOf(KeysUnavailableError);
      await expect(attempt).rejects.toMatchObject({ status: 503 });
    });
  });
});
