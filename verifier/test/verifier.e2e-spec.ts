import { createHash, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { calculateJwkThumbprint, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { AccessTokens } from '../../src/application/ports/access-tokens';
import { PASSWORD, register, signedInUser, uniqueEmail } from '../../test/support/flows';
import { createTestApp, type TestApp } from '../../test/support/test-app';
import { createAccessTokenVerifier, requireAccessToken, type AccessTokenVerifier, type AccessTokenVerifierOptions } from '../src/index';

/*
 * The verifier against the real service: tokens come from its login, keys from its JWKS over
 * HTTP, and DPoP proofs are signed here with jose.
 */

const ISSUER = 'https://id.example.test';
/** The realm's issuer: the `iss` of its tokens. */
const REALM_ISSUER = `${ISSUER}/realms/default`;

interface Key {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}

async function newKey(alg: 'ES256' | 'EdDSA' = 'ES256'): Promise<Key & { alg: string }> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  const jwk = await exportJWK(publicKey);
  return { alg, privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}

const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

describe('resource-server verifier', () => {
  let t: TestApp;
  let serviceUrl: string;
  let rs: Server;
  let rsUrl: string;
  let jwksFetches = 0;
  let verifier: AccessTokenVerifier;

  const now = () => Math.floor(t.clock.now().getTime() / 1000);
  const countingFetch: NonNullable<AccessTokenVerifierOptions['fetch']> = (url, init) => {
    jwksFetches += 1;
    return fetch(url, init);
  };
  const verifierWith = (options: Partial<AccessTokenVerifierOptions> = {}) =>
    createAccessTokenVerifier({
      issuer: REALM_ISSUER,
      jwksUri: `${serviceUrl}/.well-known/jwks.json`,
      jwksCooldownMs: 0,
      now: () => t.clock.now(),
      fetch: countingFetch,
      ...options,
    });

  beforeAll(async () => {
    t = await createTestApp({ env: { JWT_ISSUER: ISSUER, API_URL: ISSUER } });
    await t.app.listen(0, '127.0.0.1');
    serviceUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    verifier = verifierWith();

    // A resource server of its own, on another port, protected by the middleware.
    const api = express();
    api.get('/orders', requireAccessToken(verifier), (req, res) => {
      res.json({
        user: (req as { accessToken?: { sub: string } }).accessToken?.sub,
        token: (req as { accessToken?: unknown }).accessToken,
      });
    });
    rs = await new Promise<Server>((resolve) => {
      const server = api.listen(0, '127.0.0.1', () => resolve(server));
    });
    rsUrl = `http://127.0.0.1:${(rs.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => rs.close(() => resolve()));
    await t.close();
  });

  async function proof(
    key: Key & { alg: string },
    method: string,
    url: string,
    accessToken?: string,
    claims: Record<string, unknown> = {},
  ) {
    return new SignJWT({
      htm: method,
      htu: url,
      iat: now(),
      jti: randomUUID(),
      ...(accessToken ? { ath: ath(accessToken) } : {}),
      ...claims,
    })
      .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk })
      .sign(key.privateKey);
  }

  async function boundLogin(key: Key & { alg: string }) {
    const user = await register(t, uniqueEmail('rs-dpop'));
    const res = await t
      .api()
      .post('/api/v1/auth/login')
      .set('DPoP', await proof(key, 'POST', `${ISSUER}/api/v1/auth/login`))
      .send({ email: user.email, password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body.tokens.tokenType).toBe('DPoP');
    return { user, accessToken: res.body.tokens.accessToken as string };
  }

  const orders = (headers: Record<string, string>, path = '/orders') => fetch(`${rsUrl}${path}`, { headers });

  async function expectRefused(res: Response, code: string, challenge: RegExp) {
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(challenge);
    expect(await res.json()).toEqual({ error: code, error_description: expect.any(String) });
  }

  describe('Bearer tokens', () => {
    it('accepts a token of the service, with the keys fetched from its JWKS', async () => {
      const user = await signedInUser(t);
      const res = await orders({ Authorization: `Bearer ${user.accessToken}` });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { user: string; token: Record<string, unknown> };
      expect(body.user).toBe(user.id);
      expect(body.token).toMatchObject({ sub: user.id, realm: 'default', scheme: 'Bearer', amr: ['pwd'] });
      expect(body.token).not.toHaveProperty('jkt');
      expect(decodeProtectedHeader(user.accessToken).typ).toBe('at+jwt');
    });

    it('answers 401 with both challenges when there is no token', async () => {
      await expectRefused(await orders({}), 'missing_token', /^Bearer, DPoP algs="ES256 EdDSA"$/);
    });

    it('refuses an expired token, and accepts it just before its expiry', async () => {
      const user = await signedInUser(t);
      const at = (seconds: number) => verifierWith({ now: () => new Date(t.clock.now().getTime() + seconds * 1000) });
      await expect(
        at(14 * 60).verify({ authorization: `Bearer ${user.accessToken}`, method: 'GET', url: `${rsUrl}/orders` }),
      ).resolves.toMatchObject({
        sub: user.id,
      });
      await expect(
        at(15 * 60 + 10).verify({ authorization: `Bearer ${user.accessToken}`, method: 'GET', url: `${rsUrl}/orders` }),
      ).rejects.toMatchObject({
        code: 'invalid_token',
        message: 'The token has expired',
      });
    });

    it('refuses a token from another issuer, and one signed by a key the JWKS does not hold (fetching the keys again first)', async () => {
      const user = await signedInUser(t);
      const request = { authorization: `Bearer ${user.accessToken}`, method: 'GET', url: `${rsUrl}/orders` };
      // Another service's realm of the same name, and another realm of this service.
      for (const issuer of ['https://other.example.test/realms/default', `${ISSUER}/realms/tenant-a`]) {
        await expect(verifierWith({ issuer }).verify(request)).rejects.toMatchObject({
          code: 'invalid_token',
          message: 'The token is from another issuer',
        });
      }

      // Same claims, same header, but signed by someone else's key under a kid of their own.
      const outsider = await generateKeyPair('ES256');
      const forged = await new SignJWT({ realm: 'default', sid: randomUUID(), roles: ['admin'], amr: ['pwd'], jti: randomUUID() })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: randomUUID() })
        .setIssuer(REALM_ISSUER)
        .setSubject(user.id)
        .setIssuedAt(now())
        .setExpirationTime(now() + 600)
        .sign(outsider.privateKey);
      const before = jwksFetches;
      await expectRefused(await orders({ Authorization: `Bearer ${forged}` }), 'invalid_token', /^Bearer error="invalid_token"/);
      expect(jwksFetches).toBe(before + 1);

      // The service's own kid, someone else's signature.
      const stolenKid = await new SignJWT({ realm: 'default', sid: randomUUID() })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: decodeProtectedHeader(user.accessToken).kid as string })
        .setIssuer(REALM_ISSUER)
        .setSubject(user.id)
        .setExpirationTime(now() + 600)
        .sign(outsider.privateKey);
      await expectRefused(await orders({ Authorization: `Bearer ${stolenKid}` }), 'invalid_token', /^Bearer error="invalid_token"/);
    });

    it('refuses a token of another realm', async () => {
      const user = await signedInUser(t);
      await expect(
        verifierWith({ realm: 'tenant-a' }).verify({
          authorization: `Bearer ${user.accessToken}`,
          method: 'GET',
          url: `${rsUrl}/x`,
        }),
      ).rejects.toMatchObject({ code: 'invalid_token', message: 'The token is for another realm' });
    });

    it('follows a key rotation: a token under a new kid fetches the keys again, a known kid does not', async () => {
      const first = await signedInUser(t);
      expect((await orders({ Authorization: `Bearer ${first.accessToken}` })).status).toBe(200);
      const before = jwksFetches;
      expect((await orders({ Authorization: `Bearer ${first.accessToken}` })).status).toBe(200);
      expect(jwksFetches).toBe(before);

      const kid = await t.app.get(AccessTokens).rotate(t.clock.now());
      const second = await signedInUser(t);
      expect(decodeProtectedHeader(second.accessToken).kid).toBe(kid);
      expect((await orders({ Authorization: `Bearer ${second.accessToken}` })).status).toBe(200);
      expect(jwksFetches).toBe(before + 1);
      // The previous key is still published: tokens signed before the rotation keep working.
      expect((await orders({ Authorization: `Bearer ${first.accessToken}` })).status).toBe(200);
    });
  });

  describe('DPoP-bound tokens', () => {
    it('accepts a bound token with a proof by its key (ES256 and EdDSA)', async () => {
      for (const alg of ['ES256', 'EdDSA'] as const) {
        const key = await newKey(alg);
        const { user, accessToken } = await boundLogin(key);
        const res = await orders(
          { Authorization: `DPoP ${accessToken}`, DPoP: await proof(key, 'GET', `${rsUrl}/orders`, accessToken) },
          '/orders?page=2',
        );
        expect(res.status).toBe(200);
        expect(((await res.json()) as { token: unknown }).token).toMatchObject({ sub: user.id, scheme: 'DPoP', jkt: key.jkt });
      }
    });

    it('refuses the token replayed without its key: the same proof again, no proof, or a proof by another key', async () => {
      const key = await newKey();
      const { accessToken } = await boundLogin(key);
      const captured = await proof(key, 'GET', `${rsUrl}/orders`, accessToken);
      expect((await orders({ Authorization: `DPoP ${accessToken}`, DPoP: captured })).status).toBe(200);

      const refusedProof = /^DPoP error="invalid_dpop_proof".*algs="ES256 EdDSA"$/;
      await expectRefused(await orders({ Authorization: `DPoP ${accessToken}`, DPoP: captured }), 'invalid_dpop_proof', refusedProof);
      await expectRefused(await orders({ Authorization: `DPoP ${accessToken}` }), 'invalid_dpop_proof', refusedProof);
      const thief = await newKey();
      await expectRefused(
        await orders({ Authorization: `DPoP ${accessToken}`, DPoP: await proof(thief, 'GET', `${rsUrl}/orders`, accessToken) }),
        'invalid_dpop_proof',
        refusedProof,
      );
      // The owner still gets through with a fresh proof.
      expect(
        (await orders({ Authorization: `DPoP ${accessToken}`, DPoP: await proof(key, 'GET', `${rsUrl}/orders`, accessToken) })).status,
      ).toBe(200);
    });

    it('refuses a bound token sent as Bearer, with a DPoP challenge', async () => {
      const key = await newKey();
      const { accessToken } = await boundLogin(key);
      await expectRefused(
        await orders({ Authorization: `Bearer ${accessToken}`, DPoP: await proof(key, 'GET', `${rsUrl}/orders`, accessToken) }),
        'invalid_dpop_proof',
        /^DPoP error="invalid_dpop_proof"/,
      );
    });

    it('refuses an unbound token under the DPoP scheme', async () => {
      const user = await signedInUser(t);
      const key = await newKey();
      await expectRefused(
        await orders({ Authorization: `DPoP ${user.accessToken}`, DPoP: await proof(key, 'GET', `${rsUrl}/orders`, user.accessToken) }),
        'invalid_token',
        /^DPoP error="invalid_token"/,
      );
    });

    it.each([
      ['another method', { htm: 'POST' }, ''],
      ['another URL', { htu: 'https://api.example.test/orders' }, ''],
      ['another path', {}, '/payments'],
      ['an old iat', { iat: -120 }, ''],
      ['an iat in the future', { iat: 120 }, ''],
      ['another token (ath)', { ath: ath('another-token') }, ''],
      ['no ath', { ath: undefined }, ''],
      ['no jti', { jti: undefined }, ''],
    ])('refuses a proof for %s', async (_what, change, path) => {
      const key = await newKey();
      const { accessToken } = await boundLogin(key);
      const claims: Record<string, unknown> = { ...change };
      if (typeof claims.iat === 'number') claims.iat = now() + (claims.iat as number);
      const dpop = await proof(key, 'GET', `${rsUrl}/orders${path}`, accessToken, claims);
      await expectRefused(
        await orders({ Authorization: `DPoP ${accessToken}`, DPoP: dpop }),
        'invalid_dpop_proof',
        /^DPoP error="invalid_dpop_proof"/,
      );
    });

    it('refuses a proof with another typ, or a private key in its header', async () => {
      const key = await newKey();
      const { accessToken } = await boundLogin(key);
      const claims = { htm: 'GET', htu: `${rsUrl}/orders`, iat: now(), jti: randomUUID(), ath: ath(accessToken) };
      const wrongTyp = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'JWT', jwk: key.jwk }).sign(key.privateKey);
      await expectRefused(
        await orders({ Authorization: `DPoP ${accessToken}`, DPoP: wrongTyp }),
        'invalid_dpop_proof',
        /invalid_dpop_proof/,
      );

      const exportable = await generateKeyPair('ES256', { extractable: true });
      const privateJwk = await exportJWK(exportable.privateKey);
      const withPrivate = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: privateJwk })
        .sign(exportable.privateKey);
      await expectRefused(
        await orders({ Authorization: `DPoP ${accessToken}`, DPoP: withPrivate }),
        'invalid_dpop_proof',
        /invalid_dpop_proof/,
      );
    });
  });
});
