import http from 'node:http';
import * as oidc from 'openid-client';
import { OpClient, OpClients } from '../../src/application/ports/op-clients';
import { CreateRealmUseCase } from '../../src/application/admin/create-realm.use-case';
import { aClient, clientSecretHash, InMemoryOpClients, TEST_REDIRECT } from '../fakes/in-memory-op-clients';
import { bearer, PASSWORD, register, uniqueEmail } from '../support/flows';
import { authorizationRequest, AuthorizationRequest, Browser, listening, Page } from '../support/op-browser';
import { createTestApp, TestApp } from '../support/test-app';
import { code as totpCode, userWithTotp } from '../support/mfa';
import { ADMIN_ENV, adminApi, createRealm, superAdmin } from '../support/admin-flows';

const REDIRECT = TEST_REDIRECT;
const BYE = 'https://app.example.test/signed-out';
const OTHER_REALM = 'op-review-other';

/** Attacks on the realms' OpenID providers: each one refused. */
describe('OP — attacks on the OpenID provider', () => {
  let t: TestApp;
  let origin: string;
  let issuer: string;
  let clients: InMemoryOpClients;

  beforeAll(async () => {
    t = await createTestApp({
      env: { ...ADMIN_ENV, RATE_LIMIT_DEVICE_CODE: '5/600', RATE_LIMIT_MFA_VERIFY: '5/60', RATE_LIMIT_OP_TOKEN: '20/60' },
      override: (builder) => builder.overrideProvider(OpClients).useValue(new InMemoryOpClients()),
    });
    origin = await listening(t);
    issuer = `${origin}/realms/default`;
    clients = t.app.get(OpClients) as InMemoryOpClients;
    await t.app.get(CreateRealmUseCase).execute({ id: OTHER_REALM, name: 'Other', actorId: null, ip: null });
  });
  afterAll(() => t.close());

  async function client(overrides: Partial<OpClient> = {}, realm = 'default', secret?: string) {
    const registered = aClient({
      postLogoutRedirectUris: [BYE],
      ...(secret ? { clientSecretHash: clientSecretHash(secret), tokenEndpointAuthMethod: 'client_secret_basic' } : {}),
      ...overrides,
    });
    clients.register(realm, registered);
    const auth = secret ? oidc.ClientSecretBasic(secret) : oidc.None();
    const config = await oidc.discovery(new URL(`${origin}/realms/${realm}`), registered.clientId, undefined, auth, {
      execute: [oidc.allowInsecureRequests],
    });
    return { registered, config };
  }

  /** A new user signs in through `url` (consenting when asked); the walk stops at the redirect back to the app. */
  async function signIn(browser: Browser, url: URL, realm?: string): Promise<{ page: Page; userId: string; email: string }> {
    const person = await register(t, uniqueEmail('op-review'), PASSWORD, realm);
    let page = await browser.open(url.href);
    page = await browser.submit(page, { email: person.email, password: PASSWORD });
    if (!page.location) page = await browser.submit(page, { decision: 'allow' });
    return { page, userId: person.id, email: person.email };
  }

  /** A whole code flow for `config`: the tokens, and the browser still signed in. */
  async function tokensFor(config: oidc.Configuration, params: Record<string, string> = {}, realm?: string) {
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid', ...params });
    const { page, userId } = await signIn(browser, request.url, realm);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.location!), checks(request));
    return { browser, tokens, userId };
  }

  const checks = (request: AuthorizationRequest) => ({
    pkceCodeVerifier: request.verifier,
    expectedState: request.state,
    expectedNonce: request.nonce,
  });

  /** The code the authorization endpoint sent back, from the redirect's address. */
  const codeOf = (page: Page) => new URL(page.location!).searchParams.get('code')!;

  const token = (body: Record<string, string>, auth?: string) =>
    fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: auth } : {}) },
      body: new URLSearchParams(body),
    });

  const basic = (clientId: string, secret: string) => `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;

  const userinfo = (accessToken: string, realm = 'default') =>
    fetch(`${origin}/realms/${realm}/me`, { headers: { authorization: `Bearer ${accessToken}` } });

  const errorOf = (page: Page) => (page.location ? new URL(page.location.replace('#', '?')).searchParams.get('error') : null);

  it('OP-01 a code is bound to its client and its PKCE verifier: another client, a wrong verifier or another redirect URI → invalid_grant', async () => {
    const a = await client({ firstParty: true });
    const b = await client({ firstParty: true });
    const browser = new Browser(origin);
    const request = await authorizationRequest(a.config, { redirect_uri: REDIRECT, scope: 'openid' });
    const { page } = await signIn(browser, request.url);
    const code = codeOf(page);
    const attempts: Record<string, string>[] = [
      { client_id: b.registered.clientId, code_verifier: request.verifier, redirect_uri: REDIRECT },
      { client_id: a.registered.clientId, code_verifier: oidc.randomPKCECodeVerifier(), redirect_uri: REDIRECT },
      { client_id: a.registered.clientId, code_verifier: request.verifier, redirect_uri: `${REDIRECT}/other` },
      { client_id: a.registered.clientId, redirect_uri: REDIRECT },
    ];
    for (const attempt of attempts) {
      const res = await token({ grant_type: 'authorization_code', code, ...attempt });
      expect([attempt, res.status, ((await res.json()) as { error: string }).error]).toEqual([
        attempt,
        400,
        expect.stringMatching(/^invalid_(grant|request)$/),
      ]);
    }
  });

  it('OP-01 post_logout_redirect_uri must be one the client registered exactly: an error page, never a redirect; without a client it is dropped', async () => {
    const { registered, config } = await client({ firstParty: true });
    const cases = [
      { client_id: registered.clientId, post_logout_redirect_uri: 'https://evil.example/' },
      { client_id: registered.clientId, post_logout_redirect_uri: `${BYE}/` },
      { client_id: registered.clientId, post_logout_redirect_uri: `${BYE}?next=https://evil.example/` },
      { client_id: registered.clientId, post_logout_redirect_uri: REDIRECT },
      { client_id: 'nobody', post_logout_redirect_uri: BYE },
    ];
    for (const params of cases) {
      const res = await fetch(`${issuer}/session/end?${new URLSearchParams(params)}`, { redirect: 'manual' });
      expect([params, res.status, res.headers.get('location')]).toEqual([params, 400, null]);
    }
    // Without a client (or an ID token naming one) the address is ignored: the user ends on the service's own page.
    const { browser } = await tokensFor(config);
    const page = await browser.open(`${issuer}/session/end?${new URLSearchParams({ post_logout_redirect_uri: 'https://evil.example/' })}`);
    expect(page.headers.get('content-security-policy')).not.toContain('evil.example');
    const done = await browser.submit(page, { logout: 'yes' });
    expect([done.location, done.status]).toEqual([null, 200]);
    expect(done.html).toContain('You are signed out');
  });

  it('OP-01 implicit and hybrid flows, web_message, request objects and request_uri are off; PAR takes no request object', async () => {
    const { registered, config } = await client({ firstParty: true });
    const browser = new Browser(origin);
    await signIn(browser, (await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' })).url);
    const base = async () => ({
      client_id: registered.clientId,
      redirect_uri: REDIRECT,
      scope: 'openid',
      nonce: 'n',
      state: 's',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const refused = async (params: Record<string, string>) => {
      const page = await browser.open(`${issuer}/auth?${new URLSearchParams(params)}`);
      if (page.location) {
        const answer = new URL(page.location.replace('#', '?'));
        expect([params, answer.searchParams.get('code'), answer.searchParams.get('error')]).toEqual([params, null, expect.any(String)]);
      } else {
        expect([params, page.status]).toEqual([params, 400]);
      }
    };
    for (const responseType of ['token', 'id_token', 'id_token token', 'code id_token', 'code token', 'code id_token token', 'none']) {
      await refused({ ...(await base()), response_type: responseType });
    }
    await refused({ ...(await base()), response_type: 'code', response_mode: 'web_message' });
    await refused({ ...(await base()), response_type: 'code', response_mode: 'jwt' });
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(
      JSON.stringify({ ...(await base()), response_type: 'code', redirect_uri: 'https://evil.example/cb' }),
    ).toString('base64url')}.`;
    await refused({ ...(await base()), response_type: 'code', request: unsigned });
    await refused({ ...(await base()), response_type: 'code', request_uri: 'https://evil.example/request.jwt' });
    const par = await fetch(`${issuer}/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...(await base()), response_type: 'code', request: unsigned }),
    });
    expect(par.status).toBe(400);
    // A pushed request is checked like any other: an unregistered redirect URI is refused at once.
    const pushed = await fetch(`${issuer}/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...(await base()), response_type: 'code', redirect_uri: 'https://evil.example/cb' }),
    });
    expect(pushed.status).toBe(400);
  });

  it('OP-02 realm A’s access token is refused at realm B’s userinfo; an ID token is no access token (userinfo, /me)', async () => {
    const { config, registered } = await client({ firstParty: true });
    clients.register(OTHER_REALM, registered);
    const { tokens, userId } = await tokensFor(config, { scope: 'openid email' });
    expect((await userinfo(tokens.access_token)).status).toBe(200);
    expect((await userinfo(tokens.access_token, OTHER_REALM)).status).toBe(401);
    const idToken = tokens.id_token!;
    expect((await userinfo(idToken)).status).toBe(401);
    const me = await t
      .api()
      .get('/api/v1/auth/me')
      .set('X-Realm-Id', 'default')
      .set(...bearer(idToken));
    expect([me.status, me.body.error?.code]).toEqual([401, 'INVALID_TOKEN']);
    expect(userId).toBeDefined();
  });

  it('OP-03 prompt=login and max_age=0 ask for the password again; prompt=none without a session → login_required', async () => {
    const { config } = await client({ firstParty: true });
    const browser = new Browser(origin);
    const first = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' });
    const { page, email } = await signIn(browser, first.url);
    const firstTokens = await oidc.authorizationCodeGrant(config, new URL(page.location!), checks(first));
    const firstAuthTime = firstTokens.claims()!.auth_time as number;
    // Signed in, a plain request goes straight back with a code.
    const plain = await browser.open((await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' })).url.href);
    expect(codeOf(plain)).toBeTruthy();
    for (const extra of [{ prompt: 'login' }, { max_age: '0' }] as Record<string, string>[]) {
      const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid', ...extra });
      const asked = await browser.open(request.url.href);
      expect([extra, asked.location, asked.status]).toEqual([extra, null, 200]);
      expect(asked.html).toContain('name="password"');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const back = await browser.submit(asked, { email, password: PASSWORD });
      const tokens = await oidc.authorizationCodeGrant(config, new URL(back.location!), { ...checks(request), maxAge: 0 });
      expect(tokens.claims()!.auth_time as number).toBeGreaterThan(firstAuthTime);
    }
    const stranger = new Browser(origin);
    const none = await stranger.open(
      (await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid', prompt: 'none' })).url.href,
    );
    expect([errorOf(none), none.location && new URL(none.location).searchParams.get('code')]).toEqual(['login_required', null]);
  });

  it('OP-03 a third-party client allowed some scopes asks again for more; prompt=none then → consent_required', async () => {
    const { config } = await client();
    const browser = new Browser(origin);
    await signIn(browser, (await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' })).url);
    const more = await browser.open((await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email' })).url.href);
    expect(more.location).toBeNull();
    expect(more.html).toContain('See your email address');
    const silent = await browser.open(
      (await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email', prompt: 'none' })).url.href,
    );
    expect(errorOf(silent)).toBe('consent_required');
  });

  it('OP-03 the pages escape the client’s name and login_hint, and no site may frame them', async () => {
    const hostile = '<img src=x onerror=alert(1)>"\'';
    const { config } = await client({ name: hostile });
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      login_hint: '"><script>alert(1)</script>',
    });
    let page = await browser.open(request.url.href);
    const pages = [page];
    const person = await register(t, uniqueEmail('op-review-xss'));
    page = await browser.submit(page, { email: person.email, password: PASSWORD });
    pages.push(page);
    for (const shown of pages) {
      expect(shown.status).toBe(200);
      expect(shown.html).not.toContain('<img src=x');
      expect(shown.html).not.toContain('<script>alert');
      expect(shown.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(shown.headers.get('x-frame-options')).toBe('DENY');
    }
    expect(pages[1].html).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;&#39;');
  });

  it('OP-03 error pages and the device confirmation escape what the request and the client name carry', async () => {
    const hostile = '<script>alert(1)</script>';
    const error = await fetch(
      `${issuer}/auth?${new URLSearchParams({ client_id: hostile, redirect_uri: `https://x.example/${hostile}`, state: hostile, response_type: 'code' })}`,
      { redirect: 'manual' },
    );
    expect([error.status, error.headers.get('location')]).toEqual([400, null]);
    const html = await error.text();
    expect(html).not.toContain('<script>');
    expect(error.headers.get('content-security-policy')).toContain("default-src 'none'");
    const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
    const { registered } = await client({ grantTypes: [DEVICE], redirectUris: [], name: hostile });
    const started = await fetch(`${issuer}/device/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: registered.clientId, scope: 'openid' }),
    });
    const { user_code: userCode } = (await started.json()) as { user_code: string };
    const browser = new Browser(origin);
    const confirm = await browser.submit(await browser.open(`${issuer}/device`), { code: userCode });
    expect(confirm.html).toContain('name="confirm"');
    expect(confirm.html).not.toContain('<script>');
    expect(confirm.html).toContain('&lt;script&gt;');
    expect(confirm.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('OP-04 a client can neither introspect nor revoke another client’s tokens', async () => {
    const secretA = 'a'.repeat(43);
    const secretB = 'b'.repeat(43);
    const a = await client({ firstParty: true }, 'default', secretA);
    const b = await client({ firstParty: true }, 'default', secretB);
    const { tokens } = await tokensFor(a.config);
    const introspect = async (clientId: string, secret: string, value: string) => {
      const res = await fetch(`${issuer}/token/introspection`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(clientId, secret) },
        body: new URLSearchParams({ token: value }),
      });
      return (await res.json()) as { active: boolean };
    };
    for (const value of [tokens.access_token, tokens.refresh_token!]) {
      expect((await introspect(b.registered.clientId, secretB, value)).active).toBe(false);
      expect((await introspect(a.registered.clientId, secretA, value)).active).toBe(true);
      await fetch(`${issuer}/token/revocation`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(b.registered.clientId, secretB) },
        body: new URLSearchParams({ token: value }),
      });
      expect((await introspect(a.registered.clientId, secretA, value)).active).toBe(true);
    }
    expect((await userinfo(tokens.access_token)).status).toBe(200);
  });

  it('OP-04 token requests naming an app’s client id from one address cannot use up the token limit of its users elsewhere', async () => {
    const { config, registered } = await client({ firstParty: true });
    /** A form post to the token endpoint from another source address (Linux routes all of 127/8 to loopback). */
    const fromElsewhere = (body: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const { hostname, port } = new URL(origin);
        const payload = new URLSearchParams(body).toString();
        const req = http.request(
          {
            hostname,
            port,
            path: '/realms/default/token',
            method: 'POST',
            localAddress: '127.0.0.9',
            agent: false,
            headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(payload)) },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    let status = 0;
    for (let n = 0; n < 21; n++) {
      status = await fromElsewhere({ grant_type: 'refresh_token', refresh_token: 'guess', client_id: registered.clientId });
    }
    expect(status).toBe(429);
    const { tokens } = await tokensFor(config);
    expect(tokens.access_token).toBeTruthy();
  });

  it('OP-04 a refresh token is rotated for a public client; the old one replayed → invalid_grant, and the whole grant ends', async () => {
    const { config } = await client({ firstParty: true });
    const { tokens } = await tokensFor(config);
    const rotated = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.refreshTokenGrant(config, rotated.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await userinfo(rotated.access_token)).status).toBe(401);
  });

  it('OP-05 the logout page’s form needs its own xsrf value: a forged post signs no one out', async () => {
    const { config } = await client({ firstParty: true });
    const { browser } = await tokensFor(config);
    const page = await browser.open(`${issuer}/session/end`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const forged = await browser.submit(page, { logout: 'yes', xsrf: 'forged' });
    expect(forged.status).toBe(400);
    const still = await browser.open(
      (await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid', prompt: 'none' })).url.href,
    );
    expect(codeOf(still)).toBeTruthy();
  });

  it('OP-05 an ID token of another realm is no id_token_hint here: an error page, no redirect', async () => {
    const { config, registered } = await client({ firstParty: true });
    clients.register(OTHER_REALM, registered);
    const { tokens } = await tokensFor(config);
    const res = await fetch(
      `${origin}/realms/${OTHER_REALM}/session/end?${new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: BYE })}`,
      { redirect: 'manual' },
    );
    expect([res.status, res.headers.get('location')]).toEqual([400, null]);
  });

  it('OP-06 the device page’s code form needs its xsrf value', async () => {
    const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
    const { registered } = await client({ grantTypes: [DEVICE], redirectUris: [] });
    const started = await fetch(`${issuer}/device/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: registered.clientId, scope: 'openid' }),
    });
    const { user_code: userCode } = (await started.json()) as { user_code: string };
    const browser = new Browser(origin);
    const page = await browser.open(`${issuer}/device`);
    const forged = await browser.submit(page, { code: userCode, xsrf: 'forged' });
    expect(forged.status).toBe(400);
    expect(forged.html).not.toContain('name="confirm"');
  });

  it('OP-06 wrong codes posted straight to the confirmation (confirm or abort) count too: the 6th entry is refused even with the right code', async () => {
    const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
    const { registered } = await client({ grantTypes: [DEVICE], redirectUris: [] });
    const started = await fetch(`${issuer}/device/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: registered.clientId, scope: 'openid' }),
    });
    const { user_code: userCode } = (await started.json()) as { user_code: string };
    const browser = new Browser(origin);
    const enter = async (fields: Record<string, string>) => browser.submit(await browser.open(`${issuer}/device`), fields);
    for (let n = 0; n < 5; n++) {
      const wrong = await enter({ code: 'ZZZZ-ZZZZ', ...(n % 2 ? { abort: 'yes' } : { confirm: 'yes' }) });
      expect(wrong.status).toBe(200);
    }
    const sixth = await enter({ code: userCode, confirm: 'yes' });
    expect(sixth.status).toBe(429);
    expect(sixth.html).not.toContain('name="password"');
  });

  it('OP-06 a device code is its client’s: polled by another client → invalid_grant; a third-party device app still asks for consent', async () => {
    const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
    const a = await client({ grantTypes: [DEVICE], redirectUris: [] });
    const b = await client({ grantTypes: [DEVICE], redirectUris: [] });
    const started = await fetch(`${issuer}/device/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: a.registered.clientId, scope: 'openid' }),
    });
    const { user_code: userCode, device_code: deviceCode } = (await started.json()) as { user_code: string; device_code: string };
    const polled = await token({ grant_type: DEVICE, device_code: deviceCode, client_id: b.registered.clientId });
    expect([polled.status, ((await polled.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);
    const browser = new Browser(origin);
    let page = await browser.submit(await browser.open(`${issuer}/device`), { code: userCode });
    page = await browser.submit(page, { confirm: 'yes' });
    const person = await register(t, uniqueEmail('op-review-device'));
    page = await browser.submit(page, { email: person.email, password: PASSWORD });
    expect([page.status, page.html.includes('name="decision"')]).toEqual([200, true]);
  });

  it('OP-03 a third-party native app (loopback redirect) is asked for consent every time: prompt=none → never a code', async () => {
    const loopback = 'http://127.0.0.1:8123/callback';
    const { config } = await client({ redirectUris: [loopback] });
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: loopback, scope: 'openid' });
    const { page } = await signIn(browser, request.url);
    expect(new URL(page.location!).searchParams.get('code')).toBeTruthy();
    const again = await browser.open(
      (await authorizationRequest(config, { redirect_uri: 'http://127.0.0.1:9999/callback', scope: 'openid', prompt: 'none' })).url.href,
    );
    expect(new URL(again.location!).origin).toBe('http://127.0.0.1:9999');
    expect([errorOf(again), new URL(again.location!).searchParams.get('code')]).toEqual([expect.stringMatching(/_required$/), null]);
    const asked = await browser.open((await authorizationRequest(config, { redirect_uri: loopback, scope: 'openid' })).url.href);
    expect([asked.location, asked.html.includes('name="decision"')]).toEqual([null, true]);
  });

  it('OP-01 a pushed authorization request belongs to its client: its request_uri under another client_id is refused', async () => {
    const a = await client({ firstParty: true });
    const b = await client({ firstParty: true });
    const pushed = await fetch(`${issuer}/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: a.registered.clientId,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      }),
    });
    expect(pushed.status).toBe(201);
    const { request_uri: requestUri } = (await pushed.json()) as { request_uri: string };
    const browser = new Browser(origin);
    const page = await browser.open(`${issuer}/auth?${new URLSearchParams({ client_id: b.registered.clientId, request_uri: requestUri })}`);
    if (page.location) expect(new URL(page.location).searchParams.get('code')).toBeNull();
    expect(page.html).not.toContain('name="password"');
  });

  it('OP-02 an access token for an API is refused at userinfo; a refresh token works only for its own client', async () => {
    const API = 'https://api.example.test/orders';
    const resources = [{ identifier: API, scopes: ['orders:read'], accessTokenTtlSeconds: null }];
    const a = await client({ firstParty: true, resources });
    const b = await client({ firstParty: true, resources });
    const browser = new Browser(origin);
    const request = await authorizationRequest(a.config, { redirect_uri: REDIRECT, scope: 'openid orders:read', resource: API });
    const { page } = await signIn(browser, request.url);
    const tokens = await oidc.authorizationCodeGrant(a.config, new URL(page.location!), checks(request), { resource: API });
    expect((await userinfo(tokens.access_token)).status).toBe(401);
    const stolen = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: b.registered.clientId });
    expect([stolen.status, ((await stolen.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);
    // Still the client's own.
    expect((await oidc.refreshTokenGrant(a.config, tokens.refresh_token!)).access_token).toBeTruthy();
  });

  it('OP-02 a third-party client the user allowed one API cannot get a token for its other API at the code exchange or a refresh', async () => {
    const API = 'https://api.example.test/orders';
    const OTHER = 'https://api.example.test/billing';
    const resources = [
      { identifier: API, scopes: ['orders:read'], accessTokenTtlSeconds: null },
      { identifier: OTHER, scopes: ['billing:read'], accessTokenTtlSeconds: null },
    ];
    const { config } = await client({ resources, scopes: ['openid', 'orders:read', 'billing:read'] });
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid orders:read', resource: API });
    const { page } = await signIn(browser, request.url);
    const callback = new URL(page.location!);
    const forOther = async (use: () => Promise<oidc.TokenEndpointResponse>) => {
      const answer = await use().then(
        (tokens) => tokens,
        (error: { error?: string }) => error.error ?? String(error),
      );
      if (typeof answer === 'string') return expect(answer).toMatch(/^invalid_(target|grant|scope)$/);
      const claims = JSON.parse(Buffer.from(answer.access_token.split('.')[1] ?? '', 'base64url').toString() || '{}') as {
        aud?: string;
        scope?: string;
      };
      expect([claims.aud, claims.scope ?? '']).not.toEqual([OTHER, expect.stringContaining('billing:read')]);
    };
    await forOther(() => oidc.authorizationCodeGrant(config, callback, checks(request), { resource: OTHER, scope: 'billing:read' }));
    const again = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid orders:read', resource: API });
    const next = await browser.open(again.url.href);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(next.location!), checks(again), { resource: API });
    await forOther(() => oidc.refreshTokenGrant(config, tokens.refresh_token!, { resource: OTHER, scope: 'billing:read' }));
  });

  it('OP-02 the published keys are public only, and discovery offers only code, S256 PKCE and no request objects', async () => {
    const { keys } = (await (await fetch(`${issuer}/jwks`)).json()) as { keys: Record<string, unknown>[] };
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(key[secret]).toBeUndefined();
    const doc = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc.response_types_supported).toEqual(['code']);
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
    expect(doc.grant_types_supported).not.toContain('implicit');
    expect(doc.request_parameter_supported ?? false).toBe(false);
    expect(doc.request_uri_parameter_supported ?? false).toBe(false);
    expect(doc.response_modes_supported).not.toContain('web_message');
    expect(doc.id_token_signing_alg_values_supported).not.toContain('none');
    expect(doc.authorization_response_iss_parameter_supported).toBe(true);
  });

  it('OP-02 the provider names its endpoints at its own address, whatever Host or X-Forwarded-Host a request carries', async () => {
    const res = await t
      .api()
      .get('/realms/default/.well-known/openid-configuration')
      .set('Host', 'evil.example')
      .set('X-Forwarded-Host', 'evil.example')
      .set('X-Forwarded-Proto', 'https')
      .set('Forwarded', 'host=evil.example;proto=https');
    expect(res.status).toBe(200);
    expect(res.body.issuer).toBe(issuer);
    expect(JSON.stringify(res.body)).not.toContain('evil.example');
  });

  it('OP-02 a realm path that is no realm id (malformed escapes, slashes, dots) → the error envelope, never a server error', async () => {
    for (const realm of ['%E0%A4%A', '%', 'a%2Fb', '..', '%2e%2e']) {
      const res = await t.api().get(`/realms/${realm}/.well-known/openid-configuration`);
      expect([realm, res.status, res.body.error?.code]).toEqual([realm, 404, 'REALM_NOT_FOUND']);
    }
  });

  it('TOTP-05 second-factor codes on the provider’s sign-in pages count against the user’s limit, across sign-ins: the 6th in a minute is refused even when right', async () => {
    const { config } = await client({ firstParty: true });
    const person = await userWithTotp(t);
    const secondStep = async () => {
      const browser = new Browser(origin);
      const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' });
      const page = await browser.submit(await browser.open(request.url.href), { email: person.email, password: PASSWORD });
      expect(page.html).toMatch(/name="code"/);
      return { browser, page };
    };
    // Each sign-in brings a fresh challenge, with its own few tries: three wrong codes in one, two in the next.
    for (const tries of [3, 2]) {
      const { browser, page } = await secondStep();
      let current = page;
      for (let n = 0; n < tries; n++) {
        current = await browser.submit(current, { code: '000000' });
        expect(current.status).toBe(401);
      }
    }
    const { browser, page } = await secondStep();
    const right = await browser.submit(page, { code: totpCode(t, person.secret) });
    expect([right.status, right.location]).toEqual([429, null]);
    expect(right.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  describe('registration', () => {
    let realm: string;
    beforeAll(async () => {
      const root = (await superAdmin(t)).accessToken;
      realm = `op-review-reg-${Date.now().toString(36)}`;
      await createRealm(t, root, realm);
      expect(
        (
          await adminApi(t, root, realm)
            .patch('/realm')
            .send({ settings: { clientRegistration: 'open' } })
        ).status,
      ).toBe(200);
    });
    const post = (body: Record<string, unknown>) => t.api().post(`/realms/${realm}/reg`).set('Content-Type', 'application/json').send(body);
    const app = { client_name: 'Self-registered', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };

    it('OP-07 open registration refuses redirect URIs with script, data or plain-http schemes, fragments and credentials', async () => {
      const bad = [
        'javascript:alert(1)',
        'javascript://app.example.test/%0aalert(1)',
        'data:text/html,<script>alert(1)</script>',
        'http://app.example.test/callback',
        'https://app.example.test/callback#x',
        'https://user:pw@app.example.test/callback',
        'file:///etc/passwd',
        '/relative/callback',
      ];
      for (const uri of bad) {
        for (const field of ['redirect_uris', 'post_logout_redirect_uris']) {
          const res = await post({ ...app, [field]: field === 'redirect_uris' ? [uri] : [uri] });
          expect([uri, field, res.status, res.body.error]).toEqual([uri, field, 400, 'invalid_redirect_uri']);
        }
      }
      const native = await post({ ...app, redirect_uris: ['http://127.0.0.1:8123/callback', 'com.example.app:/callback'] });
      expect(native.status).toBe(201);
    });

    it('OP-07 open registration refuses a back-channel logout or jwks address inside the network', async () => {
      for (const field of ['backchannel_logout_uri', 'jwks_uri']) {
        for (const uri of [
          'http://169.254.169.254/latest/meta-data',
          'https://127.0.0.1/keys',
          'https://10.0.0.1/x',
          'http://localhost/x',
        ]) {
          const res = await post({ ...app, [field]: uri });
          expect([field, uri, res.status, res.body.error]).toEqual([field, uri, 400, 'invalid_client_metadata']);
        }
      }
    });

    it('OP-07 open registration cannot give a client private_key_jwt, another grant or response type', async () => {
      const cases: Record<string, unknown>[] = [
        { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'http://169.254.169.254/latest/meta-data' },
        { grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code', 'client_credentials'] },
        { grant_types: ['implicit'] },
        { response_types: ['code id_token'] },
      ];
      for (const extra of cases) {
        const res = await post({ ...app, ...extra });
        expect([extra, res.status, res.body.error]).toEqual([extra, 400, 'invalid_client_metadata']);
      }
    });
  });
});
