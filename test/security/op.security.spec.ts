import * as jose from 'jose';
import * as oidc from 'openid-client';
import { OpClient, OpClients } from '../../src/application/ports/op-clients';
import { SessionRepository } from '../../src/application/ports/session.repository';
import { aClient, InMemoryOpClients, TEST_REDIRECT } from '../fakes/in-memory-op-clients';
import { CreateRealmUseCase } from '../../src/application/admin/create-realm.use-case';
import { bearer, PASSWORD, register, uniqueEmail } from '../support/flows';
import { authorizationRequest, Browser, listening, Page } from '../support/op-browser';
import { createTestApp, TestApp } from '../support/test-app';

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
