import { createHash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { ADMIN_ENV, adminApi, storedEvents, superAdmin } from '../support/admin-flows';
import { fingerprintOf, from, MAC_CHROME } from '../support/devices';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { code, decodeJwt, mfaToken, userWithTotp } from '../support/mfa';
import { createTestApp, TestApp } from '../support/test-app';

/*
 * Proofs are made here with jose, independently of the service's own code.
 */

const API = 'https://id.example.test';
const ME = '/api/v1/auth/me';

interface Key {
  alg: 'ES256' | 'EdDSA';
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}

async function newKey(alg: Key['alg'] = 'ES256'): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { alg, privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}

const ath = (token: string) => createHash('sha256').update(token).digest('base64url');
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

interface ProofOptions {
  accessToken?: string;
  claims?: Record<string, unknown>;
  header?: Record<string, unknown>;
  omit?: string[];
}

describe('DPoP: sender-constrained sessions', () => {
  let t: TestApp;
  const sharedPrefix = `test:${randomUUID()}:`;

  beforeAll(async () => {
    t = await createTestApp({ env: { ...ADMIN_ENV, API_URL: API, REDIS_KEY_PREFIX: sharedPrefix } });
  });
  afterAll(() => t.close());

  const now = () => Math.floor(t.clock.now().getTime() / 1000);

  async function proof(key: Key, method: string, path: string, options: ProofOptions = {}): Promise<string> {
    const claims: Record<string, unknown> = {
      htm: method,
      htu: `${API}${path}`,
      iat: now(),
      jti: randomUUID(),
      ...(options.accessToken ? { ath: ath(options.accessToken) } : {}),
      ...options.claims,
    };
    for (const name of options.omit ?? []) delete claims[name];
    return new SignJWT(claims).setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk, ...options.header }).sign(key.privateKey);
  }

  /** Registers and logs in with a proof by `key`; returns the bound tokens. */
  async function boundLogin(key: Key, extra: Record<string, unknown> = {}) {
    const user = await register(t, uniqueEmail('dpop'));
    const res = await t
      .api()
      .post('/api/v1/auth/login')
      .set('DPoP', await proof(key, 'POST', '/api/v1/auth/login'))
      .send({ email: user.email, password: PASSWORD, ...extra });
    expect(res.status).toBe(200);
    return {
      user,
      accessToken: res.body.tokens.accessToken as string,
      refreshToken: res.body.tokens.refreshToken as string,
      body: res.body,
    };
  }

  function me(accessToken: string, dpop: string | null, scheme = 'DPoP', app = t) {
    const req = app.api().get(ME).set('Authorization', `${scheme} ${accessToken}`);
    return dpop === null ? req : req.set('DPoP', dpop);
  }

  async function refresh(refreshToken: string, dpop: string | null) {
    const req = t.api().post('/api/v1/auth/refresh');
    if (dpop !== null) req.set('DPoP', dpop);
    return req.send({ refreshToken });
  }

  function expectProofRefused(res: { status: number; body: { error?: { code: string } }; headers: Record<string, unknown> }) {
    expect(res.status).toBe(401);
    expect(res.body.error?.code).toBe('INVALID_DPOP_PROOF');
    expect(String(res.headers['www-authenticate'])).toMatch(/^DPoP /);
    expect(String(res.headers['www-authenticate'])).toContain('error="invalid_dpop_proof"');
  }

  describe('binding', () => {
    it('binds a login with a proof: tokenType DPoP, cnf.jkt in the access token, dpopBound on the session', async () => {
      const key = await newKey();
      const { accessToken, body } = await boundLogin(key);
      expect(body.tokens.tokenType).toBe('DPoP');
      expect(decodeJwt(accessToken).cnf).toEqual({ jkt: key.jkt });
      const sessions = await t
        .api()
        .get('/api/v1/auth/sessions')
        .set('Authorization', `DPoP ${accessToken}`)
        .set('DPoP', await proof(key, 'GET', '/api/v1/auth/sessions', { accessToken }));
      expect(sessions.status).toBe(200);
      expect(sessions.body.sessions).toEqual([expect.objectContaining({ current: true, dpopBound: true })]);
    });

    it('leaves a login without a proof unbound: Bearer tokens, no cnf, dpopBound false', async () => {
      const user = await register(t, uniqueEmail('plain'));
      const res = await t.api().post('/api/v1/auth/login').send({ email: user.email, password: PASSWORD });
      expect(res.body.tokens.tokenType).toBe('Bearer');
      const accessToken = res.body.tokens.accessToken as string;
      expect(decodeJwt(accessToken)).not.toHaveProperty('cnf');
      const sessions = await t.api().get('/api/v1/auth/sessions').set('Authorization', `Bearer ${accessToken}`);
      expect(sessions.body.sessions).toEqual([expect.objectContaining({ dpopBound: false })]);
      // An unbound token works as Bearer and is refused under the DPoP scheme.
      expect((await me(accessToken, null, 'Bearer')).status).toBe(200);
      const asDpop = await me(accessToken, await proof(await newKey(), 'GET', ME, { accessToken }));
      expect(asDpop.status).toBe(401);
      expect(asDpop.body.error.code).toBe('INVALID_TOKEN');
      expect(asDpop.headers['www-authenticate']).toContain('error="invalid_token"');
    });

    it('refuses a login whose proof is invalid with INVALID_DPOP_PROOF, and opens no session', async () => {
      const key = await newKey();
      const user = await register(t, uniqueEmail('badlogin'));
      const res = await t
        .api()
        .post('/api/v1/auth/login')
        .set('DPoP', await proof(key, 'POST', '/api/v1/auth/refresh'))
        .send({ email: user.email, password: PASSWORD });
      expectProofRefused(res);
      expect(await storedEvents(t, 'default', { userId: user.id, type: 'login.succeeded' })).toEqual([]);
    });

    it('accepts EdDSA (Ed25519) keys', async () => {
      const key = await newKey('EdDSA');
      const { accessToken, body } = await boundLogin(key);
      expect(body.tokens.tokenType).toBe('DPoP');
      expect(decodeJwt(accessToken).cnf).toEqual({ jkt: key.jkt });
      expect((await me(accessToken, await proof(key, 'GET', ME, { accessToken }))).status).toBe(200);
    });

    it('binds a login with MFA at /mfa/verify, with a proof there; a bad proof there spends neither code nor mfaToken', async () => {
      const key = await newKey();
      const user = await userWithTotp(t);
      const token = await mfaToken(t, user.email);
      const bad = await t
        .api()
        .post('/api/v1/auth/mfa/verify')
        .set('DPoP', await proof(key, 'POST', '/api/v1/auth/login'))
        .send({ mfaToken: token, type: 'totp', code: code(t, user.secret) });
      expectProofRefused(bad);
      const res = await t
        .api()
        .post('/api/v1/auth/mfa/verify')
        .set('DPoP', await proof(key, 'POST', '/api/v1/auth/mfa/verify'))
        .send({ mfaToken: token, type: 'totp', code: code(t, user.secret) });
      expect(res.status).toBe(200);
      expect(res.body.tokens.tokenType).toBe('DPoP');
      const accessToken = res.body.tokens.accessToken as string;
      expect(decodeJwt(accessToken)).toMatchObject({ cnf: { jkt: key.jkt }, amr: ['pwd', 'otp'] });
      expect((await me(accessToken, await proof(key, 'GET', ME, { accessToken }))).status).toBe(200);
      expectProofRefused(await me(accessToken, null, 'Bearer'));
    });
  });

  describe('resource requests with a bound access token', () => {
    let key: Key;
    let accessToken: string;

    beforeAll(async () => {
      key = await newKey();
      ({ accessToken } = await boundLogin(key));
    });

    it('accepts Authorization: DPoP with a fresh proof covering the token', async () => {
      const res = await me(accessToken, await proof(key, 'GET', ME, { accessToken }));
      expect(res.status).toBe(200);
      expect(res.body.user.email).toMatch(/^dpop\./);
    });

    it('refuses the bound token as Bearer, with or without a proof', async () => {
      expectProofRefused(await me(accessToken, null, 'Bearer'));
      expectProofRefused(await me(accessToken, await proof(key, 'GET', ME, { accessToken }), 'Bearer'));
    });

    it('refuses Authorization: DPoP without a proof', async () => {
      expectProofRefused(await me(accessToken, null));
    });

    it('answers a bad token under the DPoP scheme with error="invalid_token"', async () => {
      const forged = `${accessToken.slice(0, -4)}AAAA`;
      const res = await me(forged, await proof(key, 'GET', ME, { accessToken: forged }));
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('INVALID_TOKEN');
      expect(res.headers['www-authenticate']).toMatch(/^DPoP .*error="invalid_token"/);
    });

    it.each([
      ['typ other than dpop+jwt', { header: { typ: 'JWT' } }],
      ['no typ', { header: { typ: undefined } }],
      ['htm of another method', { claims: { htm: 'POST' } }],
      ['htu of another path', { claims: { htu: `${API}/api/v1/auth/sessions` } }],
      ['htu of another origin', { claims: { htu: `https://evil.example.test${ME}` } }],
      ['htu over http', { claims: { htu: `http://id.example.test${ME}` } }],
      ['iat 61 s in the past', { claims: { iat: -61 } }],
      ['iat 61 s in the future', { claims: { iat: 61 } }],
      ['no iat', { omit: ['iat'] }],
      ['no jti', { omit: ['jti'] }],
      ['empty jti', { claims: { jti: '' } }],
      ['jti of 129 characters', { claims: { jti: 'j'.repeat(129) } }],
      ['no ath', { omit: ['ath'] }],
      ['ath of another token', { claims: { ath: ath('another token') } }],
    ] as [string, ProofOptions & { claims?: Record<string, unknown> }][])('refuses a proof with %s', async (_case, options) => {
      const claims = { ...options.claims };
      if (typeof claims.iat === 'number') claims.iat = now() + claims.iat;
      const header = options.header && 'typ' in options.header && options.header.typ === undefined ? { typ: undefined } : options.header;
      let dpop: string;
      if (header && header.typ === undefined && 'typ' in header) {
        // jose always writes the header it is given; build a proof without typ by hand.
        const payload = { htm: 'GET', htu: `${API}${ME}`, iat: now(), jti: randomUUID(), ath: ath(accessToken) };
        dpop = await new SignJWT(payload).setProtectedHeader({ alg: 'ES256', jwk: key.jwk }).sign(key.privateKey);
      } else {
        dpop = await proof(key, 'GET', ME, { accessToken, claims, header, omit: options.omit });
      }
      expectProofRefused(await me(accessToken, dpop));
    });

    it('accepts iat up to the window either way, a 128-character jti, and an htu with a query', async () => {
      // Near the 60-second edge, with room for the proof's signing and the request on a loaded machine.
      for (const claims of [
        { iat: now() - 57 },
        { iat: now() + 57 },
        { jti: 'j'.repeat(127) + randomUUID().slice(0, 1) },
        { htu: `${API}${ME}?a=1` },
      ]) {
        const res = await me(accessToken, await proof(key, 'GET', ME, { accessToken, claims }));
        expect({ claims, status: res.status }).toEqual({ claims, status: 200 });
      }
    });

    it('refuses a proof signed by another key than the bound one', async () => {
      expectProofRefused(await me(accessToken, await proof(await newKey(), 'GET', ME, { accessToken })));
    });

    it('refuses a proof whose signature does not match its jwk', async () => {
      const other = await newKey();
      expectProofRefused(await me(accessToken, await proof(other, 'GET', ME, { accessToken, header: { jwk: key.jwk } })));
    });

    it('refuses a proof that carries a private key', async () => {
      const privateJwk = await exportJWK(key.privateKey);
      expectProofRefused(await me(accessToken, await proof(key, 'GET', ME, { accessToken, header: { jwk: privateJwk } })));
    });

    it('refuses HS256 and alg none', async () => {
      const claims = { htm: 'GET', htu: `${API}${ME}`, iat: now(), jti: randomUUID(), ath: ath(accessToken) };
      const secret = new TextEncoder().encode('a shared secret of at least 32 bytes!!');
      const hs256 = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: { kty: 'oct', k: Buffer.from(secret).toString('base64url') } as never })
        .sign(secret);
      expectProofRefused(await me(accessToken, hs256));
      const none = `${b64({ alg: 'none', typ: 'dpop+jwt', jwk: key.jwk })}.${b64(claims)}.`;
      expectProofRefused(await me(accessToken, none));
      // The key's own public JWK under HS256 (algorithm confusion).
      const confused = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: key.jwk })
        .sign(new TextEncoder().encode(JSON.stringify(key.jwk)));
      expectProofRefused(await me(accessToken, confused));
    });

    it('refuses a replayed proof (same jti, same key)', async () => {
      const dpop = await proof(key, 'GET', ME, { accessToken });
      expect((await me(accessToken, dpop)).status).toBe(200);
      expectProofRefused(await me(accessToken, dpop));
    });

    const withRedis = process.env.REDIS_URL ? it : it.skip;
    withRedis('refuses a proof replayed on a second instance sharing Redis', async () => {
      const second = await createTestApp({ database: t.database, env: { ...ADMIN_ENV, API_URL: API, REDIS_KEY_PREFIX: sharedPrefix } });
      try {
        const dpop = await proof(key, 'GET', ME, { accessToken });
        expect((await me(accessToken, dpop)).status).toBe(200);
        expectProofRefused(await me(accessToken, dpop, 'DPoP', second));
        const fresh = await proof(key, 'GET', ME, { accessToken });
        expect((await me(accessToken, fresh, 'DPoP', second)).status).toBe(200);
        expectProofRefused(await me(accessToken, fresh));
      } finally {
        await second.close();
      }
    });
  });

  describe('refresh and logout of a bound session', () => {
    it('refreshes with a proof by the bound key to DPoP tokens bound to the same key', async () => {
      const key = await newKey();
      const { refreshToken } = await boundLogin(key);
      const res = await refresh(refreshToken, await proof(key, 'POST', '/api/v1/auth/refresh'));
      expect(res.status).toBe(200);
      expect(res.body.tokens.tokenType).toBe('DPoP');
      expect(decodeJwt(res.body.tokens.accessToken).cnf).toEqual({ jkt: key.jkt });
    });

    it('refuses a stolen refresh token without a proof and with the thief’s own key; the owner’s still works', async () => {
      const key = await newKey();
      const { user, refreshToken } = await boundLogin(key);
      expectProofRefused(await refresh(refreshToken, null));
      const thief = await newKey();
      expectProofRefused(await refresh(refreshToken, await proof(thief, 'POST', '/api/v1/auth/refresh')));
      // A proof by the right key made for another endpoint, and a replay of the owner's proof, fail too.
      expectProofRefused(await refresh(refreshToken, await proof(key, 'POST', '/api/v1/auth/logout')));
      const owners = await proof(key, 'POST', '/api/v1/auth/refresh');
      const ok = await refresh(refreshToken, owners);
      expect(ok.status).toBe(200);
      expectProofRefused(await refresh(ok.body.tokens.refreshToken, owners));

      const refused = await storedEvents(t, 'default', { userId: user.id, type: 'dpop.refused' });
      expect(refused.map((e) => e.details)).toEqual([
        { action: 'refresh', reason: 'missing' },
        { action: 'refresh', reason: 'other_key' },
        { action: 'refresh', reason: 'htu' },
        { action: 'refresh', reason: 'replay' },
      ]);
      expect(await storedEvents(t, 'default', { userId: user.id, type: 'refresh.reused' })).toEqual([]);
      const root = await superAdmin(t);
      const listed = await adminApi(t, root.accessToken, 'default').get(`/events?type=dpop.refused&userId=${user.id}`);
      expect(listed.status).toBe(200);
      expect(listed.body.events).toHaveLength(4);
    });

    it('refuses a full clone — same fingerprint, device and network, stolen tokens, no key', async () => {
      const key = await newKey();
      const login = await from(t.api().post('/api/v1/auth/login'), MAC_CHROME)
        .set('DPoP', await proof(key, 'POST', '/api/v1/auth/login'))
        .send({ email: (await register(t, uniqueEmail('clone'))).email, password: PASSWORD, deviceFingerprint: fingerprintOf(MAC_CHROME) });
      expect(login.status).toBe(200);
      const { accessToken, refreshToken } = login.body.tokens;

      const clone = await from(t.api().post('/api/v1/auth/refresh'), MAC_CHROME)
        .set('DPoP', await proof(await newKey(), 'POST', '/api/v1/auth/refresh'))
        .send({ refreshToken, deviceFingerprint: fingerprintOf(MAC_CHROME) });
      expectProofRefused(clone);
      const cloneNoProof = await from(t.api().post('/api/v1/auth/refresh'), MAC_CHROME).send({
        refreshToken,
        deviceFingerprint: fingerprintOf(MAC_CHROME),
      });
      expectProofRefused(cloneNoProof);
      expectProofRefused(await from(t.api().get(ME), MAC_CHROME).set('Authorization', `Bearer ${accessToken}`));
      expectProofRefused(
        await from(t.api().get(ME), MAC_CHROME)
          .set('Authorization', `DPoP ${accessToken}`)
          .set('DPoP', await proof(await newKey(), 'GET', ME, { accessToken })),
      );

      const owner = await from(t.api().post('/api/v1/auth/refresh'), MAC_CHROME)
        .set('DPoP', await proof(key, 'POST', '/api/v1/auth/refresh'))
        .send({ refreshToken, deviceFingerprint: fingerprintOf(MAC_CHROME) });
      expect(owner.status).toBe(200);
    });

    it('needs the key to log out: without it the session goes on; with it the session ends', async () => {
      const key = await newKey();
      const { accessToken, refreshToken } = await boundLogin(key);
      expectProofRefused(await t.api().post('/api/v1/auth/logout').send({ refreshToken }));
      expectProofRefused(
        await t
          .api()
          .post('/api/v1/auth/logout')
          .set('DPoP', await proof(await newKey(), 'POST', '/api/v1/auth/logout'))
          .send({ refreshToken }),
      );
      expect((await me(accessToken, await proof(key, 'GET', ME, { accessToken }))).status).toBe(200);

      const out = await t
        .api()
        .post('/api/v1/auth/logout')
        .set('DPoP', await proof(key, 'POST', '/api/v1/auth/logout'))
        .send({ refreshToken });
      expect(out.status).toBe(200);
      const after = await me(accessToken, await proof(key, 'GET', ME, { accessToken }));
      expect(after.status).toBe(401);
      expect(after.body.error.code).toBe('INVALID_TOKEN');
    });
  });
});
