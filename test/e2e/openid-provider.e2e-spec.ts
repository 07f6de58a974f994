import { randomBytes } from 'node:crypto';
import * as jose from 'jose';
import * as oidc from 'openid-client';
import { HousekeepingUseCase } from '../../src/application/housekeeping/housekeeping.use-case';
import { OpClient, OpClients } from '../../src/application/ports/op-clients';
import { aClient, clientSecretHash, InMemoryOpClients, TEST_REDIRECT } from '../fakes/in-memory-op-clients';
import { bearer, PASSWORD, register, uniqueEmail } from '../support/flows';
import { code, userWithTotp } from '../support/mfa';
import { authorizationRequest, Browser, listening, Page } from '../support/op-browser';
import { createTestApp, TestApp } from '../support/test-app';

const REDIRECT = TEST_REDIRECT;
const API = 'https://api.example.test/orders';

describe('Every realm an OpenID provider', () => {
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

  /** A client registered in the default realm, and openid-client configured from the discovery. */
  async function client(overrides: Partial<OpClient> = {}, secret?: string) {
    const registered = aClient({ ...overrides, ...(secret ? { clientSecretHash: clientSecretHash(secret) } : {}) });
    clients.register('default', registered);
    const auth = secret ? oidc.ClientSecretBasic(secret) : oidc.None();
    const config = await oidc.discovery(new URL(issuer), registered.clientId, undefined, auth, { execute: [oidc.allowInsecureRequests] });
    return { registered, config };
  }

  async function user() {
    return register(t, uniqueEmail('op'));
  }

  /** GET authorize → the sign-in page → email and password → (consent → allow) → the redirect to the app. */
  async function signIn(browser: Browser, url: URL, email: string, options: { consent?: boolean } = {}): Promise<Page> {
    let page = await browser.open(url.href);
    if (page.location) return page;
    expect(page.html).toMatch(/name="email" type="email"/);
    page = await browser.submit(page, { email, password: PASSWORD });
    if (page.location) return page;
    if (options.consent === false) throw new Error(`expected no consent page:\n${page.html}`);
    expect(page.html).toContain('<button type="submit" name="decision" value="allow">');
    return browser.submit(page, { decision: 'allow' });
  }

  async function tokensFor(config: oidc.Configuration, page: Page, request: { verifier: string; state: string; nonce: string }) {
    expect(page.location).toMatch(/^https:\/\/app\.example\.test\/callback\?/);
    return oidc.authorizationCodeGrant(config, new URL(page.location!), {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    });
  }

  it('publishes the realm’s discovery document with the metadata clients need, at both addresses', async () => {
    const res = await t.api().get('/realms/default/.well-known/openid-configuration');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.issuer).toBe(issuer);
    expect(doc.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'offline_access', 'roles']));
    expect(doc.response_types_supported).toEqual(['code']);
    expect(doc.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']));
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
    expect(doc.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt']),
    );
    expect(doc.id_token_signing_alg_values_supported).toEqual(expect.arrayContaining(['RS256', 'ES256']));
    expect(doc.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256']));
    expect(doc.authorization_response_iss_parameter_supported).toBe(true);
    for (const endpoint of ['userinfo_endpoint', 'end_session_endpoint', 'revocation_endpoint', 'introspection_endpoint', 'jwks_uri']) {
      expect(doc[endpoint]).toMatch(new RegExp(`^${issuer}/`));
    }
    expect(doc.registration_endpoint).toBeUndefined();
    const rfc8414 = await t.api().get('/.well-known/oauth-authorization-server/realms/default');
    expect(rfc8414.status).toBe(200);
    expect(rfc8414.body).toEqual(doc);
    const unknown = await t.api().get('/realms/nowhere/.well-known/openid-configuration');
    expect([unknown.status, unknown.body.error?.code]).toEqual([404, 'REALM_NOT_FOUND']);
  });

  it('serves a JWKS that verifies the realm’s first-party access tokens too, beside an RSA key for ID tokens', async () => {
    const jwksUri = (await t.api().get('/realms/default/.well-known/openid-configuration')).body.jwks_uri as string;
    const jwks = (await (await fetch(jwksUri)).json()) as { keys: { kty: string; alg: string; d?: string }[] };
    expect(jwks.keys.map((k) => k.alg)).toEqual(expect.arrayContaining(['RS256', 'ES256']));
    expect(jwks.keys.every((k) => k.d === undefined)).toBe(true);
    const signedIn = await t
      .api()
      .post('/api/v1/auth/login')
      .send({ email: (await user()).email, password: PASSWORD });
    const { payload } = await jose.jwtVerify(signedIn.body.tokens.accessToken, jose.createRemoteJWKSet(new URL(jwksUri)), { issuer });
    expect(payload.iss).toBe(issuer);
  });

  it('signs a user in through its own pages, asks a third-party client for consent, and issues tokens (code + PKCE, iss in the response)', async () => {
    const { config, registered } = await client();
    const person = await user();
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid profile email' });
    const page = await signIn(browser, request.url, person.email);
    expect(new URL(page.location!).searchParams.get('iss')).toBe(issuer);
    const tokens = await tokensFor(config, page, request);
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: issuer, sub: person.id, aud: registered.clientId, nonce: request.nonce, amr: ['pwd'] });
    expect(typeof claims.auth_time).toBe('number');
    expect(typeof claims.sid).toBe('string');
    // The sign-in is one of the service's sessions: listed, with the ID token's sid.
    const me = await t.api().post('/api/v1/auth/login').send({ email: person.email, password: PASSWORD });
    const sessions = await t
      .api()
      .get('/api/v1/auth/sessions')
      .set(...bearer(me.body.tokens.accessToken));
    expect(sessions.body.sessions.map((s: { id: string }) => s.id)).toContain(claims.sid);
    const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, person.id);
    expect(userinfo).toMatchObject({ sub: person.id, email: person.email, email_verified: false, given_name: 'Test', family_name: 'User' });
  });

  it('never asks consent for a first-party client, and signs a second client in by single sign-on', async () => {
    const first = await client({ firstParty: true });
    const second = await client({ firstParty: true });
    const person = await user();
    const browser = new Browser(origin);
    const one = await authorizationRequest(first.config, { redirect_uri: REDIRECT, scope: 'openid email' });
    const page = await signIn(browser, one.url, person.email, { consent: false });
    expect((await tokensFor(first.config, page, one)).claims()!.sub).toBe(person.id);
    const two = await authorizationRequest(second.config, { redirect_uri: REDIRECT, scope: 'openid email' });
    const sso = await browser.open(two.url.href);
    expect(sso.location).toMatch(/[?&]code=/);
    const tokens = await tokensFor(second.config, sso, two);
    expect(tokens.claims()).toMatchObject({ sub: person.id, aud: second.registered.clientId });
  });

  it('remembers a third-party consent, and asks again for more scopes; deny → access_denied', async () => {
    const { config } = await client();
    const person = await user();
    const browser = new Browser(origin);
    const first = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email' });
    await tokensFor(config, await signIn(browser, first.url, person.email), first);
    const again = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email' });
    expect((await browser.open(again.url.href)).location).toMatch(/[?&]code=/);
    const more = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email profile' });
    const consent = await browser.open(more.url.href);
    expect(consent.location).toBeNull();
    expect(consent.html).toContain('See your name and picture');
    const denied = await browser.submit(consent, { decision: 'deny' });
    expect(new URL(denied.location!).searchParams.get('error')).toBe('access_denied');
  });

  it('answers prompt=none without a page: login_required, then consent_required', async () => {
    const { config } = await client();
    const browser = new Browser(origin);
    const none = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid', prompt: 'none' });
    const page = await browser.open(none.url.href);
    expect(new URL(page.location!).searchParams.get('error')).toBe('login_required');
    // Signed in for another client, never asked for this one.
    const other = await client({ firstParty: true });
    const person = await user();
    const sign = await authorizationRequest(other.config, { redirect_uri: REDIRECT, scope: 'openid' });
    await signIn(browser, sign.url, person.email, { consent: false });
    const again = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid', prompt: 'none' });
    expect(new URL((await browser.open(again.url.href)).location!).searchParams.get('error')).toBe('consent_required');
  });

  it('asks for a sign-in again with prompt=login, with a max_age shorter than the sign-in’s age, and when our session was revoked', async () => {
    const { config } = await client({ firstParty: true });
    const person = await user();
    const browser = new Browser(origin);
    const first = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' });
    const tokens = await tokensFor(config, await signIn(browser, first.url, person.email, { consent: false }), first);
    const login = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid', prompt: 'login' });
    expect((await browser.open(login.url.href)).html).toMatch(/name="password" type="password"/);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const aged = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid', max_age: '1' });
    expect((await browser.open(aged.url.href)).html).toMatch(/name="password" type="password"/);
    const fresh = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid', max_age: '3600' });
    expect((await browser.open(fresh.url.href)).location).toMatch(/[?&]code=/);
    // Our session ends (signed out everywhere): the provider's cookie alone signs nobody in.
    const me = await t.api().post('/api/v1/auth/login').send({ email: person.email, password: PASSWORD });
    const revoke = await t
      .api()
      .delete(`/api/v1/auth/sessions/${tokens.claims()!.sid as string}`)
      .set(...bearer(me.body.tokens.accessToken));
    expect(revoke.status).toBe(200);
    const after = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' });
    expect((await browser.open(after.url.href)).html).toMatch(/name="password" type="password"/);
  });

  it('signs no app in from a session flagged as used from another device: single sign-on asks for a sign-in again', async () => {
    const { config } = await client({ firstParty: true });
    const person = await user();
    const browser = new Browser(origin);
    const first = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' });
    const tokens = await tokensFor(config, await signIn(browser, first.url, person.email, { consent: false }), first);
    const sso = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' });
    expect((await browser.open(sso.url.href)).location).toMatch(/[?&]code=/);
    // The session is flagged (its refresh token was used from another device).
    await t.dataSource.query(
      `UPDATE sessions SET status = 'flagged', flag_reason = 'fingerprint_mismatch', flag_score = 0.1, flagged_at = now() WHERE id = $1`,
      [tokens.claims()!.sid],
    );
    const after = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' });
    const page = await browser.open(after.url.href);
    expect(page.location).toBeNull();
    expect(page.html).toMatch(/name="password" type="password"/);
  });

  it('asks for the TOTP code after the password of a user with MFA, and the ID token says so (amr)', async () => {
    const { config } = await client({ firstParty: true });
    const person = await userWithTotp(t);
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' });
    let page = await browser.open(request.url.href);
    page = await browser.submit(page, { email: person.email, password: PASSWORD });
    expect(page.location).toBeNull();
    expect(page.html).toMatch(/name="code"/);
    expect(page.html).not.toMatch(/mfaToken/i);
    const wrong = await browser.submit(page, { code: '000000' });
    expect(wrong.html).toMatch(/not valid/);
    page = await browser.submit(wrong, { code: code(t, person.secret) });
    const tokens = await tokensFor(config, page, request);
    expect(tokens.claims()!.amr).toEqual(['pwd', 'otp']);
  });

  it('shows a refused sign-in on the page, never as JSON', async () => {
    const { config } = await client();
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' });
    const page = await browser.open(request.url.href);
    const refused = await browser.submit(page, { email: 'nobody@example.com', password: 'wrong password here' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toMatch(/text\/html/);
    expect(refused.html).toContain('Invalid email or password.');
    expect(refused.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it('rotates a public client’s refresh token, and a replayed one revokes the grant', async () => {
    const { config } = await client({ firstParty: true });
    const person = await user();
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid offline_access', prompt: 'consent' });
    const tokens = await tokensFor(config, await signIn(browser, request.url, person.email), request);
    expect(tokens.refresh_token).toBeDefined();
    const rotated = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(rotated.refresh_token).toBeDefined();
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.refreshTokenGrant(config, rotated.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('answers userinfo per granted scope', async () => {
    const { config } = await client({ firstParty: true });
    const person = await user();
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email' });
    const tokens = await tokensFor(config, await signIn(browser, request.url, person.email, { consent: false }), request);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, person.id);
    expect(Object.keys(info).sort()).toEqual(['email', 'email_verified', 'sub']);
    const roles = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid profile roles' });
    const more = await tokensFor(config, await browser.open(roles.url.href), roles);
    const full = await oidc.fetchUserInfo(config, more.access_token, person.id);
    expect(full).toMatchObject({ sub: person.id, name: 'Test User', given_name: 'Test', family_name: 'User', roles: [] });
    expect(full.email).toBeUndefined();
  });

  it('answers a page on a public client’s redirect origin across origins: preflights, userinfo, refresh; another origin is refused', async () => {
    const { config } = await client({ firstParty: true });
    const person = await user();
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email' });
    const tokens = await tokensFor(config, await signIn(new Browser(origin), request.url, person.email, { consent: false }), request);
    const { userinfo_endpoint: userinfo, token_endpoint: token } = config.serverMetadata();
    const app = new URL(REDIRECT).origin;
    const evil = 'https://evil.example.test';

    // A bearer token (userinfo) or a DPoP proof (token) makes the browser ask first.
    const preflight = (url: string, method: string, headers: string) =>
      fetch(url, {
        method: 'OPTIONS',
        headers: { origin: app, 'access-control-request-method': method, 'access-control-request-headers': headers },
      });
    for (const answer of [await preflight(userinfo!, 'GET', 'authorization'), await preflight(token!, 'POST', 'content-type,dpop')]) {
      expect(answer.status).toBe(204);
      expect(answer.headers.get('access-control-allow-origin')).toBe(app);
      expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
    }
    expect((await preflight(userinfo!, 'GET', 'authorization')).headers.get('access-control-allow-headers')).toBe('authorization');

    const me = (from: string) => fetch(userinfo!, { headers: { origin: from, authorization: `Bearer ${tokens.access_token}` } });
    const mine = await me(app);
    expect(mine.status).toBe(200);
    expect(mine.headers.get('access-control-allow-origin')).toBe(app);
    expect(await mine.json()).toMatchObject({ sub: person.id, email: person.email });
    const theirs = await me(evil);
    expect(theirs.status).toBe(400);
    expect(theirs.headers.get('access-control-allow-origin')).toBeNull();

    const refresh = (from: string, refreshToken: string) =>
      fetch(token!, {
        method: 'POST',
        headers: { origin: from, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: config.clientMetadata().client_id,
        }),
      });
    const refused = await refresh(evil, tokens.refresh_token!);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const refreshed = await refresh(app, tokens.refresh_token!);
    expect(refreshed.status).toBe(200);
    expect(refreshed.headers.get('access-control-allow-origin')).toBe(app);
  });

  it('revokes a token (RFC 7009) and introspects for confidential clients only (RFC 7662)', async () => {
    const secret = randomBytes(32).toString('base64url');
    const { config } = await client({ firstParty: true, tokenEndpointAuthMethod: 'client_secret_basic' }, secret);
    const person = await user();
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid offline_access', prompt: 'consent' });
    const tokens = await tokensFor(config, await signIn(browser, request.url, person.email), request);
    const active = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(active).toMatchObject({ active: true, sub: person.id });
    await oidc.tokenRevocation(config, tokens.refresh_token!);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // Another client — a public one — learns nothing.
    const pub = await client({ firstParty: true });
    expect(await oidc.tokenIntrospection(pub.config, tokens.access_token)).toEqual({ active: false });
  });

  it('gives a confidential client a token of its own by client credentials (client_secret_basic); a wrong secret → invalid_client', async () => {
    const secret = randomBytes(32).toString('base64url');
    const resource = { identifier: API, scopes: ['orders:read'], accessTokenTtlSeconds: 300 };
    const { config, registered } = await client(
      {
        grantTypes: ['client_credentials'],
        redirectUris: [],
        tokenEndpointAuthMethod: 'client_secret_basic',
        resources: [resource],
        scopes: ['orders:read'],
      },
      secret,
    );
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'orders:read', resource: API });
    const jwksUri = (await t.api().get('/realms/default/.well-known/openid-configuration')).body.jwks_uri as string;
    const { payload, protectedHeader } = await jose.jwtVerify(tokens.access_token, jose.createRemoteJWKSet(new URL(jwksUri)), {
      issuer,
      audience: API,
    });
    expect(protectedHeader.typ).toBe('at+jwt');
    expect(payload).toMatchObject({ sub: registered.clientId, client_id: registered.clientId, scope: 'orders:read', realm: 'default' });
    expect(payload.sid).toBeUndefined();
    expect(payload.exp! - payload.iat!).toBe(300);
    const wrong = await oidc.discovery(new URL(issuer), registered.clientId, undefined, oidc.ClientSecretBasic('not-the-secret'), {
      execute: [oidc.allowInsecureRequests],
    });
    // 401 with a Basic challenge naming invalid_client (RFC 6749 §5.2).
    await expect(oidc.clientCredentialsGrant(wrong, { scope: 'orders:read', resource: API })).rejects.toMatchObject({
      status: 401,
      cause: [expect.objectContaining({ parameters: expect.objectContaining({ error: 'invalid_client' }) })],
    });
  });

  it('issues a resource’s access token that jose verifies with the realm’s issuer alone (discovery → jwks_uri) and the resource as audience', async () => {
    const resource = { identifier: API, scopes: ['orders:read', 'orders:write'], accessTokenTtlSeconds: null };
    const { config, registered } = await client({ firstParty: true, resources: [resource], scopes: ['openid', 'roles', 'orders:read'] });
    const person = await user();
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid roles orders:read', resource: API });
    const page = await signIn(browser, request.url, person.email, { consent: false });
    const tokens = await oidc.authorizationCodeGrant(
      config,
      new URL(page.location!),
      { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce },
      { resource: API },
    );
    const discovered = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as { jwks_uri: string };
    const { payload } = await jose.jwtVerify(tokens.access_token, jose.createRemoteJWKSet(new URL(discovered.jwks_uri)), {
      issuer,
      audience: API,
      typ: 'at+jwt',
    });
    expect(payload).toMatchObject({ sub: person.id, client_id: registered.clientId, scope: 'orders:read', realm: 'default', roles: [] });
    // Not a token for the service's own APIs.
    for (const path of ['/api/v1/auth/me', '/v1/admin/users']) {
      const res = await t
        .api()
        .get(path)
        .set('X-Realm-Id', 'default')
        .set(...bearer(tokens.access_token));
      expect([path, res.status, res.body.error?.code]).toEqual([path, 401, 'INVALID_TOKEN']);
    }
    // Realm A's token never verifies under realm B's issuer.
    await expect(
      jose.jwtVerify(tokens.access_token, jose.createRemoteJWKSet(new URL(discovered.jwks_uri)), {
        issuer: `${origin}/realms/other`,
        audience: API,
      }),
    ).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' });
  });

  it('keeps the provider’s artifacts in op_artifacts, and housekeeping deletes the expired ones', async () => {
    const { config } = await client({ firstParty: true });
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' });
    await tokensFor(config, await signIn(browser, request.url, (await user()).email, { consent: false }), request);
    const models = (await t.dataSource.query(`SELECT DISTINCT model FROM op_artifacts WHERE realm_id = 'default'`)).map(
      (row: { model: string }) => row.model,
    );
    expect(models).toEqual(expect.arrayContaining(['Session', 'Grant', 'AuthorizationCode', 'AccessToken']));
    await t.dataSource.query(
      `INSERT INTO op_artifacts (realm_id, model, id, payload, expires_at) VALUES
         ('default', 'AccessToken', 'expired-one', '{}', now() - interval '1 minute'),
         ('default', 'AccessToken', 'live-one', '{}', now() + interval '1 hour')`,
    );
    const report = await t.app.get(HousekeepingUseCase).execute();
    expect(report.opArtifacts).toBeGreaterThanOrEqual(1);
    const left = await t.dataSource.query(`SELECT id FROM op_artifacts WHERE id IN ('expired-one', 'live-one')`);
    expect(left).toEqual([{ id: 'live-one' }]);
  });

  it('lists the apps a user allowed and revokes one: its refresh token stops working; unknown → 404 CLIENT_NOT_FOUND', async () => {
    const { config, registered } = await client();
    const person = await user();
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email offline_access', prompt: 'consent' });
    const tokens = await tokensFor(config, await signIn(browser, request.url, person.email), request);
    const me = await t.api().post('/api/v1/auth/login').send({ email: person.email, password: PASSWORD });
    const token = me.body.tokens.accessToken as string;
    const apps = await t
      .api()
      .get('/api/v1/auth/apps')
      .set(...bearer(token));
    expect(apps.status).toBe(200);
    expect(apps.body.apps).toEqual([
      expect.objectContaining({
        clientId: registered.clientId,
        name: 'Test App',
        scopes: expect.arrayContaining(['openid', 'email', 'offline_access']),
      }),
    ]);
    const revoked = await t
      .api()
      .delete(`/api/v1/auth/apps/${registered.clientId}`)
      .set(...bearer(token));
    expect([revoked.status, revoked.body]).toEqual([200, { success: true }]);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    const again = await t
      .api()
      .delete(`/api/v1/auth/apps/${registered.clientId}`)
      .set(...bearer(token));
    expect([again.status, again.body.error?.code]).toEqual([404, 'CLIENT_NOT_FOUND']);
  });
});

describe('the provider’s sign-in page and the login limit', () => {
  let t: TestApp;
  let origin: string;

  beforeAll(async () => {
    t = await createTestApp({
      env: { RATE_LIMIT_LOGIN: '2/900' },
      override: (builder) => builder.overrideProvider(OpClients).useValue(new InMemoryOpClients()),
    });
    origin = await listening(t);
  });
  afterAll(() => t.close());

  it('counts against POST /login’s limit, the same counter per client IP, and says so on the page', async () => {
    const registered = aClient();
    (t.app.get(OpClients) as InMemoryOpClients).register('default', registered);
    const config = await oidc.discovery(new URL(`${origin}/realms/default`), registered.clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' });
    const page = await browser.open(request.url.href);
    expect((await browser.submit(page, { email: 'a@example.com', password: 'wrong password 1' })).status).toBe(401);
    expect((await t.api().post('/api/v1/auth/login').send({ email: 'a@example.com', password: 'wrong password 2' })).status).toBe(401);
    const limited = await browser.submit(page, { email: 'a@example.com', password: 'wrong password 3' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.html).toContain('Too many attempts');
  });
});
