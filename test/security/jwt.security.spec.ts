import { createHmac, createPublicKey, generateKeyPairSync, sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPrivateKey } from 'node:crypto';
import { SignJWT } from 'jose';
import { CreateRealmUseCase } from '../../src/application/admin/create-realm.use-case';
import { AccessTokens, realmIssuer } from '../../src/application/ports/access-tokens';
import { TypeOrmSigningKeyStore } from '../../src/adapters/persistence/typeorm-signing-key-store';
import { createTestApp, TestApp } from '../support/test-app';
import { bearer, login, PASSWORD, signedInUser } from '../support/flows';
import { mfaToken, userWithTotp } from '../support/mfa';

const b64 = (v: object | string) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
const parts = (token: string) => {
  const [h, p, s] = token.split('.');
  return {
    h,
    p,
    s,
    header: JSON.parse(Buffer.from(h, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(p, 'base64url').toString()),
  };
};

/** An independent verifier: JWKS → public key, ES256 signature, iss, exp — no code of the service. */
function verifyWithJwks(token: string, jwks: { keys: Record<string, unknown>[] }, issuer: string, nowSeconds: number): boolean {
  const { h, p, s, header, payload } = parts(token);
  if (header.alg !== 'ES256') return false;
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) return false;
  const key = createPublicKey({ key: jwk as never, format: 'jwk' });
  const ok = cryptoVerify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'));
  return ok && payload.iss === issuer && payload.exp > nowSeconds;
}

describe('JWT — access tokens (SECURITY.md)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  const me = (token: string) =>
    t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(token));

  it('JWT-01 lives exp − iat = 900 s and is refused with TOKEN_EXPIRED after it', async () => {
    const user = await signedInUser(t);
    const { payload } = parts(user.accessToken);
    expect(payload.exp - payload.iat).toBe(900);
    // To one second before `exp` from wherever the clock is now (it keeps running in real time).
    t.clock.advance(payload.exp - 1 - t.clock.now().getTime() / 1000);
    expect((await me(user.accessToken)).status).toBe(200);
    t.clock.advance(2);
    const res = await me(user.accessToken);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('TOKEN_EXPIRED');
  });

  it('JWT-02 refuses alg none and HS256 keyed with the public key (algorithm confusion)', async () => {
    const user = await signedInUser(t);
    const { header, payload, p } = parts(user.accessToken);
    const jwks = (await t.api().get('/.well-known/jwks.json')).body;
    const pem = createPublicKey({ key: jwks.keys[0], format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
    const none = `${b64({ ...header, alg: 'none' })}.${p}.`;
    const hsInput = `${b64({ ...header, alg: 'HS256' })}.${b64(payload)}`;
    const hs = `${hsInput}.${createHmac('sha256', pem).update(hsInput).digest('base64url')}`;
    for (const token of [none, hs]) {
      const res = await me(token);
      expect([res.status, res.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    }
  });

  it('JWT-03 verifies the signature always: a changed sub or role claim is refused', async () => {
    const alice = await signedInUser(t);
    const bob = await signedInUser(t);
    const { h, s, payload } = parts(alice.accessToken);
    for (const changed of [
      { ...payload, sub: bob.id },
      { ...payload, roles: ['realm-admin'] },
      { ...payload, exp: payload.exp + 3600 },
    ]) {
      const res = await me(`${h}.${b64(changed)}.${s}`);
      expect([res.status, res.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    }
    const flipped = s.slice(0, -2) + (s.endsWith('AA') ? 'BB' : 'AA');
    expect((await me(`${h}.${parts(alice.accessToken).p}.${flipped}`)).status).toBe(401);
  });

  it('JWT-04 treats kid as untrusted and never takes a key from jwk/jku/x5u headers', async () => {
    const user = await signedInUser(t);
    const { header, p, s, payload } = parts(user.accessToken);
    for (const kid of ['no-such-kid', '../../dev/null', "' OR '1'='1", 'k'.repeat(10_000), 42]) {
      const res = await me(`${b64({ ...header, kid })}.${p}.${s}`);
      expect([res.status, res.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    }
    const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = attacker.publicKey.export({ format: 'jwk' });
    // A key server the attacker controls: it must never be asked for anything.
    const hits: string[] = [];
    const keyServer = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ keys: [{ ...jwk, kid: 'attacker', alg: 'ES256' }] }));
    });
    await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
    const keyUrl = `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}`;
    for (const extra of [{ jwk }, { jku: `${keyUrl}/jwks.json` }, { x5u: `${keyUrl}/cert.pem` }]) {
      const hdr = { ...header, kid: 'attacker', ...extra };
      const input = `${b64(hdr)}.${b64(payload)}`;
      const sig = cryptoSign('sha256', Buffer.from(input), { key: attacker.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
      const res = await me(`${input}.${sig}`);
      expect([res.status, res.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    }
    await new Promise((resolve) => keyServer.close(resolve));
    expect(hits).toEqual([]);
  });

  it('JWT-05 checks iss and typ, and refuses other kinds of token (refresh, mfa, email) as bearer', async () => {
    const user = await signedInUser(t);
    const { header, p, s } = parts(user.accessToken);
    expect(header.typ).toBe('at+jwt');
    expect((await me(`${b64({ ...header, typ: 'JWT' })}.${p}.${s}`)).status).toBe(401);
    const [outbox] = await t.dataSource.query(`SELECT text_body FROM email_outbox WHERE recipient = $1`, [user.email]);
    const emailToken = /token=([A-Za-z0-9_-]+)/.exec(outbox.text_body)![1];
    const withTotp = await userWithTotp(t);
    for (const other of [user.refreshToken, emailToken, await mfaToken(t, withTotp.email)]) {
      const res = await me(other);
      expect([res.status, res.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    }
    // A genuine signature over a foreign issuer: sign with the service's own key.
    const tokens = t.app.get(AccessTokens);
    const foreign = await tokens.issue(
      { sub: user.id, realm: 'default', sid: parts(user.accessToken).payload.sid, roles: [], amr: ['pwd'] },
      t.clock.now(),
      900,
    );
    expect((await me(foreign)).status).toBe(200);
    const { payload } = parts(foreign);
    expect(payload.iss).toBe(realmIssuer(t.config.issuer, 'default'));
    // Genuinely signed by the service's current key, with an issuer that is not the token's realm's:
    // another realm's, the service's bare address (a token of before realms had issuers), a stranger's.
    const [current] = await t.app.get(TypeOrmSigningKeyStore).published();
    const signedAs = (iss: string) =>
      new SignJWT({ ...payload, iss })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: current.kid })
        .sign(createPrivateKey(current.privateKey));
    for (const iss of [realmIssuer(t.config.issuer, 'other'), t.config.issuer, 'https://evil.test']) {
      const res = await me(await signedAs(iss));
      expect([iss, res.status, res.body.error?.code]).toEqual([iss, 401, 'INVALID_TOKEN']);
    }
    expect((await me(await signedAs(payload.iss))).status).toBe(200);
  });

  it('JWT-05 each realm has its own issuer: its discovery document names it (both paths); an unknown realm → 404', async () => {
    await t.app.get(CreateRealmUseCase).execute({ id: 'jwt-other', name: 'Other', actorId: null, ip: null });
    for (const realm of ['default', 'jwt-other']) {
      const issuer = `${t.config.apiUrl}/realms/${realm}`;
      for (const path of [`/realms/${realm}/.well-known/openid-configuration`, `/.well-known/oauth-authorization-server/realms/${realm}`]) {
        const res = await t.api().get(path);
        expect([path, res.status, res.body.issuer, res.body.jwks_uri]).toEqual([
          path,
          200,
          issuer,
          `${t.config.apiUrl}/realms/${realm}/jwks`,
        ]);
      }
    }
    const other = await signedInUser(t, 'jwt-other');
    expect(parts(other.accessToken).payload.iss).toBe(`${t.config.apiUrl}/realms/jwt-other`);
    for (const path of ['/realms/nowhere/.well-known/openid-configuration', '/.well-known/oauth-authorization-server/realms/nowhere']) {
      const res = await t.api().get(path);
      expect([res.status, res.body.error.code]).toEqual([404, 'REALM_NOT_FOUND']);
    }
    // The document of before realms had issuers is gone.
    expect((await t.api().get('/.well-known/openid-configuration')).status).toBe(404);
  });

  it('JWT-06 verifies with an independent ES256 verifier through the JWKS', async () => {
    const user = await signedInUser(t);
    const jwks = (await t.api().get('/.well-known/jwks.json')).body;
    expect(
      verifyWithJwks(user.accessToken, jwks, realmIssuer(t.config.issuer, 'default'), Math.floor(t.clock.now().getTime() / 1000)),
    ).toBe(true);
    expect(
      verifyWithJwks(
        user.accessToken.slice(0, -4) + 'AAAA',
        jwks,
        realmIssuer(t.config.issuer, 'default'),
        Math.floor(t.clock.now().getTime() / 1000),
      ),
    ).toBe(false);
  });

  it('JWT-07 makes the access token unusable at once after logout and after a password change (admin revoke and suspension: SES-02)', async () => {
    const user = await signedInUser(t);
    expect((await me(user.accessToken)).status).toBe(200);
    await t.api().post('/api/v1/auth/logout').send({ refreshToken: user.refreshToken });
    const res = await me(user.accessToken);
    expect([res.status, res.body.error.code]).toEqual([401, 'INVALID_TOKEN']);

    const other = await login(t, user.email, PASSWORD);
    const current = await login(t, user.email, PASSWORD);
    const otherToken = other.body.tokens.accessToken as string;
    expect((await me(otherToken)).status).toBe(200);
    await t
      .api()
      .post('/api/v1/auth/password/change')
      .set(...bearer(current.body.tokens.accessToken))
      .send({ currentPassword: PASSWORD, newPassword: 'another passphrase entirely' })
      .expect(200);
    expect((await me(otherToken)).status).toBe(401);
  });

  it('JWT-08 never reads tokens from URLs, marks token responses no-store, and keeps the old kid after rotation', async () => {
    const user = await signedInUser(t);
    expect((await t.api().get(`/api/v1/auth/me?access_token=${user.accessToken}`)).status).toBe(401);
    const login = await t.api().post('/api/v1/auth/login').send({ email: user.email, password: 'correct horse battery staple' });
    expect(login.headers['cache-control']).toBe('no-store');
    const refreshed = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken });
    expect(refreshed.headers['cache-control']).toBe('no-store');
    const oldKid = parts(user.accessToken).header.kid;
    const newKid = await t.app.get(AccessTokens).rotate(t.clock.now());
    const kids = (await t.api().get('/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
    expect(kids).toEqual(expect.arrayContaining([oldKid, newKid]));
    expect((await me(refreshed.body.tokens.accessToken)).status).toBe(200);
    const fresh = await t.api().post('/api/v1/auth/login').send({ email: user.email, password: 'correct horse battery staple' });
    expect(parts(fresh.body.tokens.accessToken).header.kid).toBe(newKid);
  });
});
