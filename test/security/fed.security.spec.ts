import http from 'node:http';
import net, { AddressInfo } from 'node:net';
import { HostResolver } from '../../src/application/ports/host-resolver';
import { ADMIN_ENV, adminApi, createRealm, storedEvents, superAdmin } from '../support/admin-flows';
import { CLIENT_ID, FederationHarness, pkce, providerAccount } from '../support/federation';
import { bearer, login, PASSWORD, register } from '../support/flows';
import { addSoftKey, code, mfaToken, nextStep, userWithTotp, verify, webauthnAnswer } from '../support/mfa';
import { addPasskey, passkeySignIn } from '../support/passkeys';
import { Misbehaviour } from '../support/oidc-provider';
import { ScriptedResolver } from '../fakes/scripted-resolver';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Sign-in with an identity provider (SECURITY.md FED-01 to FED-05), black-box against the running
 * service and a real OpenID provider (oidc-provider in its own process, driven through its own
 * pages) that can be switched to misbehave. test/e2e/federation.e2e-spec.ts and
 * federation-linking.e2e-spec.ts hold the rest of the flow; LOG-01 (log.security.spec.ts) includes
 * a provider's client secret.
 */

jest.setTimeout(120_000);

const AUTH = '/api/v1/auth';
const ALIAS = 'corp';
/** The same provider under a second alias: another provider, as far as the service knows. */
const OTHER_ALIAS = 'corp2';
const OTHER_REALM = 'fed-sec-other';

/** An HTTP server on loopback that counts the requests it gets and answers each with `respond`. */
async function countingServer(respond: (req: http.IncomingMessage, res: http.ServerResponse, origin: string) => void) {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits += 1;
    respond(req, res, `http://${req.headers.host}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    get hits() {
      return hits;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A discovery document for whatever host it is asked for: a provider at any address a test names. */
const mirror = () =>
  countingServer((_req, res, origin) => {
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        issuer: origin,
        authorization_endpoint: `${origin}/auth`,
        token_endpoint: `${origin}/token`,
        jwks_uri: `${origin}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      }),
    );
  });

/** A socket that accepts connections and never answers. */
async function stallingSocket() {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('FED — sign-in with an identity provider (SECURITY.md)', () => {
  /** Development rules (loopback and http allowed); the provider as `corp` and `corp2` in realm default, as `corp` in OTHER_REALM. */
  let h: FederationHarness;
  let t: TestApp;
  const accounts = {
    alice: providerAccount('alice'),
    carol: providerAccount('carol', false),
    dave: providerAccount('dave'),
    mallory: providerAccount('mallory'),
    judy: providerAccount('judy'),
    zoe: providerAccount('zoe'),
    yara: providerAccount('yara'),
  };

  beforeAll(async () => {
    h = await FederationHarness.start({ accounts, aliases: [ALIAS, OTHER_ALIAS] });
    t = h.t;
    await h.register(OTHER_ALIAS);
    await createRealm(t, h.rootToken, OTHER_REALM);
    await h.register(ALIAS, OTHER_REALM);
  });
  afterAll(() => h?.stop());

  const me = (accessToken: string) =>
    t
      .api()
      .get(`${AUTH}/me`)
      .set(...bearer(accessToken));
  const callbackOf = (alias: string, search: string) => `${t.config.apiUrl}/api/v1/auth/federation/${alias}/callback${search}`;

  /** A sign-in of `account` while the provider misbehaves as `mode`: where the browser is sent back to. */
  async function signInWhile(mode: Misbehaviour, account: string, location?: string) {
    const { back } = await h.toCallback(account);
    await h.idp.misbehave(mode, location);
    try {
      const began = Date.now();
      const callback = await h.callback(back);
      expect(callback.status).toBe(303);
      return { location: new URL(callback.headers.location), ms: Date.now() - began };
    } finally {
      await h.idp.misbehave(null);
    }
  }

  async function expectProviderError(location: URL, account: string, why: RegExp) {
    expect(location.searchParams.get('error')).toBe('provider_error');
    expect(location.searchParams.get('code')).toBeNull();
    expect(await t.dataSource.query(`SELECT id FROM users WHERE email = $1`, [accounts[account as keyof typeof accounts].email])).toEqual(
      [],
    );
    const failed = (await storedEvents(t, 'default', { type: 'login.failed' })).at(-1)!;
    expect(failed.details).toMatchObject({ method: 'federated', reason: 'provider_error', why: expect.stringMatching(why) });
  }

  it('FED-01 refuses a replayed state → 400 INVALID_VERIFICATION_TOKEN, no redirect', async () => {
    const { back } = await h.throughProvider('alice');
    const replay = await h.callback(back);
    expect([replay.status, replay.body.error?.code]).toEqual([400, 'INVALID_VERIFICATION_TOKEN']);
    expect(replay.headers.location).toBeUndefined();
  });

  it('FED-01 refuses an expired state (over 10 minutes) → 400 INVALID_VERIFICATION_TOKEN', async () => {
    const { back } = await h.toCallback('alice');
    t.clock.advance(601);
    try {
      const late = await h.callback(back);
      expect([late.status, late.body.error?.code]).toEqual([400, 'INVALID_VERIFICATION_TOKEN']);
      expect(late.headers.location).toBeUndefined();
    } finally {
      t.clock.advance(-601);
    }
  });

  it('FED-01 refuses a state at another provider’s callback, of the same realm or of another → 400, and spends it', async () => {
    const ofOther = new URL((await h.toCallback('alice', { alias: OTHER_ALIAS })).back);
    const foreign = await h.callback(callbackOf(ALIAS, ofOther.search));
    expect([foreign.status, foreign.body.error?.code]).toEqual([400, 'INVALID_VERIFICATION_TOKEN']);
    expect((await h.callback(ofOther.href)).status).toBe(400);
    const ofOtherRealm = new URL((await h.toCallback('alice', { realm: OTHER_REALM })).back);
    const crossRealm = await h.callback(callbackOf(OTHER_ALIAS, ofOtherRealm.search));
    expect([crossRealm.status, crossRealm.body.error?.code]).toEqual([400, 'INVALID_VERIFICATION_TOKEN']);
    expect((await h.callback(ofOtherRealm.href)).status).toBe(400);
  });

  it('FED-01 sends S256 PKCE, a ≥128-bit state and a nonce; an ID token with another nonce → provider_error', async () => {
    const { back, authorizationUrl } = await h.toCallback('alice');
    const asked = new URL(authorizationUrl).searchParams;
    expect(asked.get('code_challenge_method')).toBe('S256');
    expect(asked.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(asked.get('state')!, 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(asked.get('nonce')).toEqual(expect.any(String));
    await t.dataSource.query(
      `UPDATE federation_tokens SET payload = jsonb_set(payload, '{nonce}', '"another-nonce"') WHERE kind = 'state' AND used_at IS NULL`,
    );
    const callback = await h.callback(back);
    expect(new URL(callback.headers.location).searchParams.get('error')).toBe('provider_error');
  });

  it('FED-02 refuses a callback whose iss parameter names another issuer (mix-up) → provider_error, no session', async () => {
    const { back } = await h.toCallback('alice');
    const url = new URL(back);
    expect(url.searchParams.get('iss')).toBe(h.idp.issuer);
    url.searchParams.set('iss', 'https://attacker.example');
    const location = new URL((await h.callback(url.href)).headers.location);
    expect(location.searchParams.get('error')).toBe('provider_error');
    expect(location.searchParams.get('code')).toBeNull();
  });

  it(
    'FED-03 takes over an unverified account — the squatter’s password, TOTP, recovery codes, security key, passkey, ' +
      'linked identity and sessions all stop working',
    async () => {
      // The squatter registers the victim's address first and arms the account with everything it can hold.
      const squatter = await userWithTotp(t, accounts.dave.email);
      const key = await addSoftKey(t, squatter.accessToken, 'Squatter key');
      const passkey = await addPasskey(t, squatter.accessToken);
      expect((await h.link('mallory', squatter.accessToken)).res?.status).toBe(200);
      // Each of them works before the takeover.
      const viaPasskey = await passkeySignIn(t, passkey.authenticator);
      expect(viaPasskey.status).toBe(200);
      const viaTotp = await verify(t, { mfaToken: await mfaToken(t, squatter.email), type: 'totp', code: code(t, squatter.secret) });
      expect(viaTotp.status).toBe(200);
      const viaRecovery = await verify(t, {
        mfaToken: await mfaToken(t, squatter.email),
        type: 'recovery',
        code: squatter.recoveryCodes[0],
      });
      expect(viaRecovery.status).toBe(200);
      const keyToken = await mfaToken(t, squatter.email);
      const viaKey = await verify(t, {
        mfaToken: keyToken,
        type: 'webauthn',
        code: JSON.stringify((await webauthnAnswer(t, keyToken, key.authenticator)).assertion),
      });
      expect(viaKey.status).toBe(200);
      // The linked identity signs in to the account (as a first factor: the account has MFA).
      const viaMallory = await h.signIn('mallory');
      expect(viaMallory.body).toMatchObject({ requiresMfa: true, user: { id: squatter.id } });
      // Second steps the squatter left waiting, one per factor.
      const pending = {
        totp: await mfaToken(t, squatter.email),
        recovery: await mfaToken(t, squatter.email),
        key: await mfaToken(t, squatter.email),
        federated: viaMallory.body.mfaToken as string,
      };
      const sessions = [viaPasskey, viaTotp, viaRecovery, viaKey].map((r) => r.body.tokens);

      // The owner signs in with the provider, which vouches for the address.
      const res = await h.signIn('dave');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ requiresMfa: false, user: { id: squatter.id, emailVerified: true } });
      const owner = res.body.tokens.accessToken as string;

      expect((await login(t, accounts.dave.email, PASSWORD)).body.error.code).toBe('INVALID_CREDENTIALS');
      nextStep(t);
      for (const token of [pending.totp, pending.federated]) {
        expect((await verify(t, { mfaToken: token, type: 'totp', code: code(t, squatter.secret) })).status).toBe(401);
      }
      const recovery = await verify(t, { mfaToken: pending.recovery, type: 'recovery', code: squatter.recoveryCodes[1] });
      expect(recovery.status).toBe(401);
      const keyOptions = await t.api().post(`${AUTH}/mfa/webauthn/options`).send({ mfaToken: pending.key });
      expect(keyOptions.status).toBe(401);
      expect((await passkeySignIn(t, passkey.authenticator)).status).toBe(401);
      for (const tokens of sessions) {
        expect((await me(tokens.accessToken)).status).toBe(401);
        expect((await t.api().post(`${AUTH}/refresh`).send({ refreshToken: tokens.refreshToken })).body.error.code).toBe('INVALID_TOKEN');
      }
      const factors = await t
        .api()
        .get(`${AUTH}/mfa`)
        .set(...bearer(owner));
      expect(factors.body).toMatchObject({ enabled: false, webauthnCredentials: [], recoveryCodesRemaining: 0 });
      expect((await me(owner)).body.user).toMatchObject({ hasPassword: false, emailVerified: true });
      expect((await h.identities(owner)).map((i) => i.subject)).toEqual(['dave']);
      // The squatter's account at the provider now lands on an account of its own.
      const malloryAfter = await h.signIn('mallory');
      expect(malloryAfter.status).toBe(200);
      expect(malloryAfter.body.user.id).not.toBe(squatter.id);

      const [linked] = await storedEvents(t, 'default', { userId: squatter.id, type: 'identity.linked' }).then((events) =>
        events.filter((e) => e.details.takeover),
      );
      expect(linked.details).toMatchObject({
        provider: ALIAS,
        subject: 'dave',
        takeover: true,
        removed: { password: true, identities: 1, sessions: expect.any(Number) },
      });
    },
  );

  it('FED-03 a provider email that is not verified, with an existing account → email_already_registered, nothing linked', async () => {
    const existing = await register(t, accounts.carol.email);
    const { location } = await h.throughProvider('carol');
    expect(location.searchParams.get('error')).toBe('email_already_registered');
    expect(location.searchParams.get('code')).toBeNull();
    expect(await t.dataSource.query(`SELECT 1 FROM user_identities WHERE user_id = $1`, [existing.id])).toHaveLength(0);
    expect((await login(t, accounts.carol.email, PASSWORD)).status).toBe(200);
  });

  it('FED-04 spends a login code on any attempt: used twice → 401; a wrong code verifier → 401 and the right one then fails too', async () => {
    const { location, verifier } = await h.throughProvider('alice');
    const code = location.searchParams.get('code');
    expect(code).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    const wrong = await h.exchange(code, pkce().verifier);
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const right = await h.exchange(code, verifier);
    expect([right.status, right.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const again = await h.throughProvider('alice');
    const code2 = again.location.searchParams.get('code');
    expect((await h.exchange(code2, again.verifier)).status).toBe(200);
    expect((await h.exchange(code2, again.verifier)).status).toBe(401);
  });

  it('FED-04 refuses a login code made in another realm → 401', async () => {
    const { location, verifier } = await h.throughProvider('judy', { realm: OTHER_REALM });
    const res = await h.exchange(location.searchParams.get('code'), verifier);
    expect([res.status, res.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
  });

  it('FED-04 refuses at start a returnTo of another host, with userinfo, //, a backslash, a dot-segment or a fragment → 400', async () => {
    const api = t.config.apiUrl;
    for (const returnTo of [
      'https://evil.example.net/account/x',
      `${api}@evil.example.net/account/`,
      '//evil.example.net/account/x',
      `${api}\\@evil.example.net/account/`,
      `${api}/account/%2e%2e/admin`,
      `${api}/account/x#@evil.example.net`,
    ]) {
      const res = await t.api().post(`${AUTH}/federation/${ALIAS}/start`).send({ returnTo, codeChallenge: pkce().challenge });
      expect([returnTo, res.status, res.body.error?.details]).toEqual([
        returnTo,
        400,
        [{ field: 'returnTo', message: expect.any(String) }],
      ]);
    }
    const allowed = await t
      .api()
      .post(`${AUTH}/federation/${ALIAS}/start`)
      .send({ returnTo: h.returnTo(), codeChallenge: pkce().challenge });
    expect(allowed.status).toBe(200);
  });

  it.each<[string, Misbehaviour, RegExp]>([
    ['signed by a key the provider does not publish', 'foreign-key', /signature/i],
    ['issued to another client (aud)', 'audience', /"aud"/],
    ['that expired an hour ago', 'expired', /"exp"/],
  ])('FED-02 refuses an ID token %s → provider_error, no user, no session', async (_what, mode, why) => {
    const { location } = await signInWhile(mode, 'zoe');
    await expectProviderError(location, 'zoe', why);
  });

  it('FED-02 control: the same account signs in once the provider behaves', async () => {
    const res = await h.signIn('zoe');
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(accounts.zoe.email);
  });

  it('FED-05 a token endpoint that accepts and never answers → provider_error within 6 s', async () => {
    const { location, ms } = await signInWhile('stall', 'yara');
    expect(ms).toBeLessThan(6000);
    await expectProviderError(location, 'yara', /no answer within 5000 ms|timed out|abort/i);
  });

  it('FED-05 a redirect from the token endpoint is not followed → provider_error', async () => {
    const target = await countingServer((_req, res) => res.end('{}'));
    try {
      const { location } = await signInWhile('redirect', 'yara', `${target.url}/token`);
      await expectProviderError(location, 'yara', /.+/);
      expect(target.hits).toBe(0);
    } finally {
      await target.close();
    }
  });

  it('FED-05 a discovery document that redirects, or a provider that never answers, is refused at creation (400 issuer) within 6 s', async () => {
    const document = await mirror();
    const redirector = await countingServer((req, res) => {
      res.writeHead(302, { location: `${document.url}${req.url}` }).end();
    });
    const stalling = await stallingSocket();
    try {
      const create = (alias: string, issuer: string) =>
        adminApi(t, h.rootToken, 'default').post('/identity-providers').send({ alias, displayName: alias, issuer, clientId: CLIENT_ID });
      // The control: the document itself is accepted here (loopback allowed).
      expect((await create('mirrored', document.url)).status).toBe(201);
      const served = document.hits;
      const redirected = await create('redirected', redirector.url);
      expect([redirected.status, redirected.body.error.details]).toEqual([400, [{ field: 'issuer', message: expect.any(String) }]]);
      expect(redirector.hits).toBe(1);
      expect(document.hits).toBe(served);
      const began = Date.now();
      const stalled = await create('stalled', stalling.url);
      expect(Date.now() - began).toBeLessThan(6000);
      expect([stalled.status, stalled.body.error.details]).toEqual([400, [{ field: 'issuer', message: expect.any(String) }]]);
    } finally {
      await Promise.all([document.close(), redirector.close(), stalling.close()]);
    }
  });

  it('FED-05 stores the client secret encrypted and never returns it', async () => {
    const one = await adminApi(t, h.rootToken, 'default').get('/identity-providers/corp');
    expect(one.body.identityProvider).toMatchObject({ alias: 'corp', hasClientSecret: true });
    const all = await adminApi(t, h.rootToken, 'default').get('/identity-providers');
    for (const body of [one.body, all.body]) expect(JSON.stringify(body)).not.toContain(h.clientSecret);
    const [row] = await t.dataSource.query(`SELECT client_secret FROM identity_providers WHERE alias = 'corp' AND realm_id = 'default'`);
    expect(row.client_secret).toEqual(expect.any(String));
    expect(row.client_secret).not.toContain(h.clientSecret);
  });

  it('FED-05 a provider that is down → provider_error', async () => {
    const { back } = await h.toCallback('yara');
    await h.idp.stop();
    const began = Date.now();
    const callback = await h.callback(back);
    expect(Date.now() - began).toBeLessThan(6000);
    await expectProviderError(new URL(callback.headers.location), 'yara', /.+/);
  });

  describe('with the production address rules (IDP_ALLOW_PRIVATE_NETWORKS off)', () => {
    let strict: TestApp;
    let root: string;
    const resolver = new ScriptedResolver();

    beforeAll(async () => {
      // http stays allowed, so that a refusal below is the address's, not the scheme's.
      strict = await createTestApp({
        env: { ...ADMIN_ENV, IDP_ALLOW_HTTP: 'true' },
        override: (b) => b.overrideProvider(HostResolver).useValue(resolver),
      });
      root = (await superAdmin(strict)).accessToken;
    });
    afterAll(() => strict?.close());

    it('FED-05 refuses an issuer on 127.0.0.1, 169.254.169.254 or a name resolving to a private address (400 issuer), connecting to none', async () => {
      const document = await mirror();
      try {
        resolver.answers.set('idp.internal.test', [{ address: '127.0.0.1', family: 4 }]);
        resolver.answers.set('sso.corp.test', [{ address: '10.0.0.7', family: 4 }]);
        for (const issuer of [
          document.url,
          `http://idp.internal.test:${document.port}`,
          'https://169.254.169.254',
          'http://169.254.169.254/latest/meta-data',
          'https://sso.corp.test',
          'https://[::1]',
        ]) {
          const res = await adminApi(strict, root, 'default')
            .post('/identity-providers')
            .send({ alias: 'ssrf', displayName: 'SSRF', issuer, clientId: CLIENT_ID });
          expect([issuer, res.status, res.body.error?.details]).toEqual([issuer, 400, [{ field: 'issuer', message: expect.any(String) }]]);
        }
        expect(document.hits).toBe(0);
        // The same document with loopback allowed: the refusal above was the address rule's.
        const allowed = await adminApi(t, h.rootToken, 'default')
          .post('/identity-providers')
          .send({ alias: 'loopback', displayName: 'Loopback', issuer: document.url, clientId: CLIENT_ID });
        expect(allowed.status).toBe(201);
      } finally {
        await document.close();
      }
    });
  });
});
