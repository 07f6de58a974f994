import http from 'node:http';
import { AddressInfo } from 'node:net';
import * as jose from 'jose';
import * as oidc from 'openid-client';
import { OpClient, OpClients } from '../../src/application/ports/op-clients';
import { SessionRepository } from '../../src/application/ports/session.repository';
import { aClient, InMemoryOpClients, TEST_REDIRECT } from '../fakes/in-memory-op-clients';
import { CreateRealmUseCase } from '../../src/application/admin/create-realm.use-case';
import { bearer, PASSWORD, register, uniqueEmail } from '../support/flows';
import { authorizationRequest, Browser, listening, Page } from '../support/op-browser';
import { createTestApp, TestApp } from '../support/test-app';
import { ADMIN_ENV, adminApi, createRealm, superAdmin } from '../support/admin-flows';
import { BackchannelReceiver, ReceivedLogout } from '../support/backchannel-receiver';

const REDIRECT = TEST_REDIRECT;
const LOOPBACK = 'http://127.0.0.1:8123/callback';
const API = 'https://api.example.test/orders';
const OTHER_API = 'https://api.example.test/billing';

describe('OP — the realm as an OpenID provider (SECURITY.md)', () => {
  let t: TestApp;
  let origin: string;
  let issuer: string;
  let clients: InMemoryOpClients;

  beforeAll(async () => {
    t = await createTestApp({ override: (builder) => builder.overrideProvider(OpClients).useValue(new InMemoryOpClients()) });
    origin = await listening(t);
    issuer = `${origin}/realms/default`;
    clients = t.app.get(OpClients) as InMemoryOpClients;
  });
  afterAll(() => t.close());

  async function client(overrides: Partial<OpClient> = {}, realm = 'default') {
    const registered = aClient(overrides);
    clients.register(realm, registered);
    const config = await oidc.discovery(new URL(`${origin}/realms/${realm}`), registered.clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
    return { registered, config };
  }

  /** Signs a new user in (consenting when asked) and stops at the redirect back to the app. */
  async function signedIn(browser: Browser, url: URL, realm?: string): Promise<{ page: Page; userId: string }> {
    const person = await register(t, uniqueEmail('op-sec'), PASSWORD, realm);
    let page = await browser.open(url.href);
    page = await browser.submit(page, { email: person.email, password: PASSWORD });
    if (!page.location) page = await browser.submit(page, { decision: 'allow' });
    return { page, userId: person.id };
  }

  /** The authorization endpoint's answer to `params`, without following it. */
  async function authorize(params: Record<string, string>): Promise<Response> {
    return fetch(`${issuer}/auth?${new URLSearchParams(params)}`, { redirect: 'manual' });
  }

  const challenge = async () => oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier());

  it('OP-01 PKCE S256 is required of every client: no challenge, or plain → invalid_request', async () => {
    const { registered } = await client();
    const base = { client_id: registered.clientId, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, state: 's' };
    const variants: Record<string, string>[] = [{}, { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }];
    for (const extra of variants) {
      const res = await authorize({ ...base, ...extra });
      expect(res.status).toBe(303);
      const location = new URL(res.headers.get('location')!);
      expect([location.origin + location.pathname, location.searchParams.get('error')]).toEqual([REDIRECT, 'invalid_request']);
    }
  });

  it('OP-01 an unknown client or a redirect URI that is not registered exactly gets an error page, never a redirect', async () => {
    const { registered } = await client();
    const nearMisses = [
      `${REDIRECT}/`,
      REDIRECT.replace('callback', 'Callback'),
      REDIRECT.replace('app.example.test', 'APP.example.test.evil.test'),
      `${REDIRECT}?next=x`,
      REDIRECT.replace('https://', 'https://user@'),
      REDIRECT.replace('app.example.test', 'app.example.test:8443'),
      REDIRECT.replace('https:', 'http:'),
      'https://evil.example/callback',
    ];
    for (const redirect of [...nearMisses, undefined]) {
      const res = await authorize({
        client_id: registered.clientId,
        response_type: 'code',
        scope: 'openid',
        ...(redirect ? { redirect_uri: redirect } : {}),
        code_challenge: await challenge(),
        code_challenge_method: 'S256',
      });
      expect([redirect, res.status, res.headers.get('location')]).toEqual([redirect, 400, null]);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
    }
    const unknown = await authorize({ client_id: 'nobody', response_type: 'code', scope: 'openid', redirect_uri: REDIRECT });
    expect([unknown.status, unknown.headers.get('location')]).toEqual([400, null]);
    // A native app's loopback redirect matches on any port (RFC 8252 §7.3), and nothing else about it may change.
    const native = (await client({ redirectUris: [LOOPBACK] })).registered;
    const loopback = await authorize({
      client_id: native.clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: 'http://127.0.0.1:49152/callback',
      code_challenge: await challenge(),
      code_challenge_method: 'S256',
    });
    expect(loopback.status).toBe(303);
    expect(loopback.headers.get('location')).toMatch(/\/realms\/default\/interaction\//);
    const otherPath = await authorize({
      client_id: native.clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: 'http://127.0.0.1:49152/other',
      code_challenge: await challenge(),
      code_challenge_method: 'S256',
    });
    expect([otherPath.status, otherPath.headers.get('location')]).toEqual([400, null]);
  });

  it('OP-01 only response_type=code: others → unsupported_response_type', async () => {
    const { registered } = await client();
    const res = await authorize({
      client_id: registered.clientId,
      response_type: 'id_token',
      scope: 'openid',
      redirect_uri: REDIRECT,
      nonce: 'n',
    });
    const location = res.headers.get('location');
    const error = location ? new URL(location.replace('#', '?')).searchParams.get('error') : null;
    expect(error).toBe('unsupported_response_type');
  });

  it('OP-01 a code is single use: a replay → invalid_grant, and what the first redemption issued is refused at userinfo', async () => {
    const { config } = await client({ firstParty: true });
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email' });
    const { page, userId } = await signedIn(browser, request.url);
    const callback = new URL(page.location!);
    expect(callback.searchParams.get('iss')).toBe(issuer);
    const checks = { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce };
    const first = await oidc.authorizationCodeGrant(config, callback, checks);
    expect(await oidc.fetchUserInfo(config, first.access_token, userId)).toMatchObject({ sub: userId });
    await expect(oidc.authorizationCodeGrant(config, callback, checks)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.fetchUserInfo(config, first.access_token, userId)).rejects.toBeDefined();
  });

  it('OP-02 ID tokens name the client as audience; OP access tokens are refused by the service’s own APIs; realm A’s token fails under realm B’s issuer; another resource’s audience fails', async () => {
    await t.app.get(CreateRealmUseCase).execute({ id: 'op-other', name: 'Other', actorId: null, ip: null });
    const resources = [
      { identifier: API, scopes: ['orders:read'], accessTokenTtlSeconds: null },
      { identifier: OTHER_API, scopes: ['billing:read'], accessTokenTtlSeconds: null },
    ];
    const { config, registered } = await client({ firstParty: true, resources });
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid orders:read', resource: API });
    const { page } = await signedIn(browser, request.url);
    const tokens = await oidc.authorizationCodeGrant(
      config,
      new URL(page.location!),
      { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce },
      { resource: API },
    );
    expect(tokens.claims()!.aud).toBe(registered.clientId);
    const jwks = jose.createRemoteJWKSet(new URL(`${issuer}/jwks`));
    const { payload } = await jose.jwtVerify(tokens.access_token, jwks, { issuer, audience: API });
    expect(payload).toMatchObject({ aud: API, client_id: registered.clientId, scope: 'orders:read' });
    await expect(jose.jwtVerify(tokens.access_token, jwks, { issuer, audience: OTHER_API })).rejects.toMatchObject({
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
    });
    const otherDoc = (await (await fetch(`${origin}/realms/op-other/.well-known/openid-configuration`)).json()) as {
      issuer: string;
      jwks_uri: string;
    };
    await expect(
      jose.jwtVerify(tokens.access_token, jose.createRemoteJWKSet(new URL(otherDoc.jwks_uri)), { issuer: otherDoc.issuer, audience: API }),
    ).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' });
    for (const path of ['/api/v1/auth/me', '/v1/admin/users']) {
      const res = await t
        .api()
        .get(path)
        .set('X-Realm-Id', 'default')
        .set(...bearer(tokens.access_token));
      expect([path, res.status, res.body.error?.code]).toEqual([path, 401, 'INVALID_TOKEN']);
    }
    // A resource this client may not use → invalid_target.
    const foreign = await authorizationRequest(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      resource: 'https://api.example.test/admin',
    });
    const refused = await browser.open(foreign.url.href);
    expect(new URL(refused.location!).searchParams.get('error')).toBe('invalid_target');
  });

  it('OP-03 a consent POST without the page’s token, with another form’s token, or from another browser is refused; nothing is granted', async () => {
    const { config } = await client();
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email' });
    const person = await register(t, uniqueEmail('op-csrf'));
    let page = await browser.open(request.url.href);
    const signInForm = page;
    page = await browser.submit(page, { email: person.email, password: PASSWORD });
    expect(page.html).toContain('value="allow"');
    const withoutToken = await browser.submit(page, { decision: 'allow' }, { omitCsrf: true });
    expect([withoutToken.status, withoutToken.location]).toEqual([403, null]);
    const loginToken = /name="csrf" value="([^"]+)"/.exec(signInForm.html)![1];
    const wrongForm = await browser.submit(page, { decision: 'allow', csrf: loginToken });
    expect([wrongForm.status, wrongForm.location]).toEqual([403, null]);
    // A cross-site form post carries no cookie of ours (SameSite=Lax): the interaction is not found.
    const action = /<form method="post" action="([^"]+)">/.exec(page.html)![1];
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1];
    const crossSite = await fetch(new URL(action, origin), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({ decision: 'allow', csrf }).toString(),
    });
    expect([crossSite.status, crossSite.headers.get('location')]).toEqual([400, null]);
    const grants = await t.dataSource.query(`SELECT 1 FROM op_artifacts WHERE model = 'Grant' AND payload->>'accountId' = $1`, [person.id]);
    expect(grants).toEqual([]);
    // The page's own token still works.
    const allowed = await browser.submit(page, { decision: 'allow' });
    expect(allowed.location).toMatch(/[?&]code=/);
  });

  it('OP-03 prompt=none never shows a page: consent_required for a third-party client the user never allowed', async () => {
    const first = await client({ firstParty: true });
    const third = await client();
    const browser = new Browser(origin);
    await signedIn(browser, (await authorizationRequest(first.config, { redirect_uri: REDIRECT, scope: 'openid' })).url);
    const none = await authorizationRequest(third.config, { redirect_uri: REDIRECT, scope: 'openid', prompt: 'none' });
    const page = await browser.open(none.url.href);
    expect(new URL(page.location!).searchParams.get('error')).toBe('consent_required');
  });

  it('OP-03 offline_access is granted only with consent (prompt=consent): without it, the refresh token ends with the session', async () => {
    const { config } = await client({ firstParty: true });
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid offline_access' });
    const { page, userId } = await signedIn(browser, request.url);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.location!), {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    });
    expect(tokens.scope?.split(' ')).not.toContain('offline_access');
    const grants: { scope: string }[] = await t.dataSource.query(
      `SELECT payload->'openid'->>'scope' AS scope FROM op_artifacts WHERE model = 'Grant' AND payload->>'accountId' = $1`,
      [userId],
    );
    expect(grants.map((g) => g.scope.split(' ')).flat()).not.toContain('offline_access');
    // A refresh token it has is the session's: the session ends (its owner signs it out), so does the token.
    const session = tokens.claims()!.sid as string;
    await t.app.get(SessionRepository).revoke('default', session, new Date(), 'logout');
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});

describe('OP — clients, sessions, devices and registration, with the clients of the admin API', () => {
  const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code';
  let t: TestApp;
  let origin: string;
  let issuer: string;
  let root: string;
  let admin: ReturnType<typeof adminApi>;
  let receiver: BackchannelReceiver;

  beforeAll(async () => {
    receiver = await BackchannelReceiver.start();
    t = await createTestApp({
      env: {
        ...ADMIN_ENV,
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        OUTBOX_POLL_INTERVAL_MS: '200',
        RATE_LIMIT_DEVICE_CODE: '5/600',
        RATE_LIMIT_OP_REGISTRATION: '10/3600',
      },
    });
    origin = await listening(t);
    issuer = `${origin}/realms/default`;
    root = (await superAdmin(t)).accessToken;
    admin = adminApi(t, root, 'default');
    expect((await admin.post('/resources').send({ identifier: API, name: 'Orders', scopes: [{ name: 'orders:read' }] })).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  const discover = (clientId: string, auth: oidc.ClientAuth, at = issuer) =>
    oidc.discovery(new URL(at), clientId, undefined, auth, { execute: [oidc.allowInsecureRequests] });

  async function created(body: Record<string, unknown>) {
    const res = await admin.post('/clients').send(body);
    expect(res.status).toBe(201);
    return { clientId: res.body.client.clientId as string, secret: res.body.clientSecret as string | undefined };
  }

  async function signedIn(config: oidc.Configuration, params: Record<string, string> = {}) {
    const person = await register(t, uniqueEmail('op-sec-admin'));
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid', ...params });
    const browser = new Browser(origin);
    let page = await browser.open(request.url.href);
    page = await browser.submit(page, { email: person.email, password: PASSWORD });
    if (!page.location) page = await browser.submit(page, { decision: 'allow' });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.location!), {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    });
    return { person, tokens, sid: tokens.claims()!.sid as string };
  }

  it('OP-04 a wrong or rotated client secret → invalid_client; only a hash of the secret is stored', async () => {
    const { clientId, secret } = await created({
      name: 'Job',
      type: 'confidential',
      grantTypes: ['client_credentials'],
      resources: [API],
      scopes: ['orders:read'],
    });
    expect(Buffer.from(secret!, 'base64url').length).toBeGreaterThanOrEqual(32);
    const grant = async (presented: string) =>
      oidc.clientCredentialsGrant(await discover(clientId, oidc.ClientSecretPost(presented)), { scope: 'orders:read', resource: API });
    await expect(grant(`${secret!.slice(0, -1)}${secret!.endsWith('A') ? 'B' : 'A'}`)).rejects.toMatchObject({
      status: 401,
      error: 'invalid_client',
    });
    expect((await grant(secret!)).access_token).toBeTruthy();
    const rotated = (await admin.post(`/clients/${clientId}/rotate-secret`).send({})).body.clientSecret as string;
    await expect(grant(secret!)).rejects.toMatchObject({ status: 401, error: 'invalid_client' });
    expect((await grant(rotated)).access_token).toBeTruthy();
    const stored = JSON.stringify([
      await t.dataSource.query(`SELECT * FROM oauth_clients WHERE client_id = $1`, [clientId]),
      await t.dataSource.query(`SELECT payload FROM op_artifacts`),
    ]);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(rotated);
  });

  it('OP-04 a private_key_jwt assertion works once: replayed, or for another audience → invalid_client', async () => {
    const pair = await jose.generateKeyPair('ES256');
    const jwk = { ...(await jose.exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' };
    const jwks = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })),
    );
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = jwks.address() as AddressInfo;
      const { clientId } = await created({
        name: 'Signed job',
        type: 'confidential',
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwksUri: `http://127.0.0.1:${port}/jwks`,
        grantTypes: ['client_credentials'],
        resources: [API],
        scopes: ['orders:read'],
      });
      const assertion = (audience: string) =>
        new jose.SignJWT({ jti: `jti-${Math.random()}` })
          .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
          .setIssuer(clientId)
          .setSubject(clientId)
          .setAudience(audience)
          .setIssuedAt()
          .setExpirationTime('60s')
          .sign(pair.privateKey);
      const present = (jwt: string) =>
        t.api().post('/realms/default/token').type('form').send({
          grant_type: 'client_credentials',
          scope: 'orders:read',
          resource: API,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: jwt,
        });
      const once = await assertion(issuer);
      expect((await present(once)).status).toBe(200);
      const replayed = await present(once);
      expect([replayed.status, replayed.body.error]).toEqual([401, 'invalid_client']);
      const elsewhere = await present(await assertion('https://another.example/token'));
      expect([elsewhere.status, elsewhere.body.error]).toEqual([401, 'invalid_client']);
    } finally {
      jwks.close();
    }
  });

  it('OP-04 a public client is never given client credentials', async () => {
    const refused = await admin.post('/clients').send({ name: 'SPA', type: 'public', grantTypes: ['client_credentials'] });
    expect(refused.status).toBe(400);
  });

  it('OP-05 an administrator revokes the session: a verifiable logout+jwt with its sid reaches the app within 10 s, and its refresh → invalid_grant', async () => {
    const { clientId } = await created({
      name: 'Web',
      type: 'public',
      redirectUris: [REDIRECT],
      firstParty: true,
      backchannelLogoutUri: receiver.url,
    });
    const config = await discover(clientId, oidc.None());
    const { person, tokens, sid } = await signedIn(config);
    expect((await admin.delete(`/sessions/${sid}`)).status).toBe(200);
    const logout: ReceivedLogout = await receiver.waitFor((l) => jose.decodeJwt(l.logoutToken).sid === sid, 10_000);
    const { payload } = await jose.jwtVerify(logout.logoutToken, jose.createRemoteJWKSet(new URL(`${issuer}/jwks`)), {
      issuer,
      audience: clientId,
      typ: 'logout+jwt',
    });
    expect(payload).toMatchObject({ sub: person.id, sid, events: { 'http://schemas.openid.net/event/backchannel-logout': {} } });
    expect(payload.nonce).toBeUndefined();
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('OP-05 an offline_access refresh token survives a plain logout but not a password reset', async () => {
    const { clientId } = await created({ name: 'Partner', type: 'public', redirectUris: [REDIRECT] });
    const config = await discover(clientId, oidc.None());
    const { person, tokens, sid } = await signedIn(config, { scope: 'openid offline_access', prompt: 'consent' });
    const signedInAgain = await t.api().post('/api/v1/auth/login').send({ email: person.email, password: PASSWORD });
    const logout = await t
      .api()
      .delete(`/api/v1/auth/sessions/${sid}`)
      .set(...bearer(signedInAgain.body.tokens.accessToken));
    expect(logout.status).toBe(200);
    const kept = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect((await admin.post(`/users/${person.id}/reset-password`).send({ password: 'a brand new password 42' })).status).toBe(200);
    await expect(oidc.refreshTokenGrant(config, kept.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  describe('devices', () => {
    async function started() {
      const { clientId } = await created({ name: 'TV', type: 'public', grantTypes: [DEVICE_CODE], firstParty: true });
      const config = await discover(clientId, oidc.None());
      return { clientId, config, response: await oidc.initiateDeviceAuthorization(config, { scope: 'openid' }) };
    }
    const enter = async (browser: Browser, uri: string, code: string) => browser.submit(await browser.open(uri), { code });

    it('OP-06 user codes are 8 letters of BCDFGHJKLMNPQRSTVWXZ, valid 10 minutes', async () => {
      const codes = await Promise.all([started(), started(), started()]);
      for (const { response } of codes) {
        expect(response.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
        expect(response.expires_in).toBe(600);
      }
      expect(new Set(codes.map((c) => c.response.user_code)).size).toBe(3);
    });

    it('OP-06 the 6th wrong entry in a browser is refused even with the right code', async () => {
      const { response } = await started();
      const browser = new Browser(origin);
      for (let n = 0; n < 5; n++) expect((await enter(browser, response.verification_uri, 'ZZZZ-ZZZZ')).status).toBe(200);
      const sixth = await enter(browser, response.verification_uri, response.user_code);
      expect(sixth.status).toBe(429);
      expect(sixth.html).not.toContain('name="confirm"');
    });

    it('OP-06 an expired device code → expired_token; polling faster than the interval → slow_down', async () => {
      const { clientId, response } = await started();
      const poll = () =>
        t
          .api()
          .post('/realms/default/token')
          .type('form')
          .send({ grant_type: DEVICE_CODE, device_code: response.device_code, client_id: clientId });
      expect((await poll()).body.error).toBe('authorization_pending');
      expect((await poll()).body.error).toBe('slow_down');
      // Ten minutes later (the stored code's own expiry, as the provider signed it).
      await t.dataSource.query(
        `UPDATE op_artifacts SET payload = jsonb_set(payload, '{exp}', to_jsonb(extract(epoch FROM now())::int - 1)) WHERE model = 'DeviceCode' AND payload->>'clientId' = $1`,
        [clientId],
      );
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      expect((await poll()).body.error).toBe('expired_token');
    }, 20_000);
  });

  describe('dynamic registration', () => {
    let counter = 0;
    async function realmWith(mode?: 'token' | 'open') {
      const realm = `op-sec-reg-${++counter}-${Date.now().toString(36)}`;
      await createRealm(t, root, realm);
      const api = adminApi(t, root, realm);
      if (mode) expect((await api.patch('/realm').send({ settings: { clientRegistration: mode } })).status).toBe(200);
      return { realm, api };
    }
    const post = (realm: string, body: Record<string, unknown>, token?: string) => {
      const req = t.api().post(`/realms/${realm}/reg`).set('Content-Type', 'application/json');
      return (token ? req.set('Authorization', `Bearer ${token}`) : req).send(body);
    };
    const app = { client_name: 'Self-registered', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };

    it('OP-07 registration is closed by default', async () => {
      const { realm, api } = await realmWith();
      expect((await api.get('/realm')).body.realm.settings.clientRegistration).toBe('closed');
      expect((await post(realm, app)).status).toBe(404);
    });

    it('OP-07 open registration cannot mint privilege: client_credentials or a secret are refused, firstParty is ignored', async () => {
      const { realm, api } = await realmWith('open');
      const credentials = await post(realm, { ...app, grant_types: ['client_credentials'] });
      expect([credentials.status, credentials.body.error]).toEqual([400, 'invalid_client_metadata']);
      const confidential = await post(realm, { ...app, token_endpoint_auth_method: 'client_secret_basic' });
      expect([confidential.status, confidential.body.error]).toEqual([400, 'invalid_client_metadata']);
      const registered = await post(realm, { ...app, first_party: true, firstParty: true });
      expect(registered.status).toBe(201);
      expect(registered.body.client_secret).toBeUndefined();
      const listed = (await api.get(`/clients/${registered.body.client_id}`)).body.client;
      expect(listed).toMatchObject({ type: 'public', firstParty: false, registeredBy: 'dynamic', grantTypes: ['authorization_code'] });
    });

    it('OP-07 an initial access token works once: its second use → 401', async () => {
      const { realm, api } = await realmWith('token');
      const token = (await api.post('/initial-access-tokens').send({})).body.initialAccessToken as string;
      expect((await post(realm, app)).status).toBe(401);
      expect((await post(realm, app, token)).status).toBe(201);
      const again = await post(realm, app, token);
      expect([again.status, again.body.error]).toEqual([401, 'invalid_token']);
    });
  });
});
