import { createHash, randomBytes } from 'node:crypto';
import { ADMIN_ENV, adminApi, storedEvents, superAdmin } from '../support/admin-flows';
import { bearer, login, PASSWORD, register, uniqueEmail } from '../support/flows';
import { TestOidcProvider } from '../support/oidc-provider';
import { createTestApp, RELAXED_LIMITS, TestApp } from '../support/test-app';

const ENV = { ...ADMIN_ENV, ...RELAXED_LIMITS, IDP_ALLOW_HTTP: 'true', IDP_ALLOW_PRIVATE_NETWORKS: 'true' };
const ALIAS = 'corp';

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

describe('Sign-in with an OpenID Connect provider (oidc-provider, driven through its own pages)', () => {
  let t: TestApp;
  let idp: TestOidcProvider;
  let rootToken: string;
  const accounts: Record<string, { email: string; email_verified: boolean; given_name?: string; family_name?: string }> = {};
  const returnTo = () => `${t.config.apiUrl}/account/callback`;

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    for (const [sub, verified] of [
      ['alice', true],
      ['bob', true],
      ['carol', false],
      ['dave', true],
      ['erin', true],
    ] as const) {
      accounts[sub] = {
        email: uniqueEmail(sub),
        email_verified: verified,
        given_name: sub[0].toUpperCase() + sub.slice(1),
        family_name: 'Tester',
      };
    }
    idp = await TestOidcProvider.start({
      redirectUris: [`${t.config.apiUrl}/api/v1/auth/federation/${ALIAS}/callback`],
      accounts,
      clientSecret: 'idp-client-secret',
    });
    rootToken = (await superAdmin(t)).accessToken;
    const created = await adminApi(t, rootToken, 'default')
      .post('/identity-providers')
      .send({ alias: ALIAS, displayName: 'Corp SSO', issuer: idp.issuer, clientId: 'identity-service', clientSecret: 'idp-client-secret' });
    expect(created.status).toBe(201);
  });
  afterAll(async () => {
    await idp?.stop();
    await t?.close();
  });

  /** start → the provider's pages → callback: the redirect the service answers with. */
  async function throughProvider(
    account: string,
    options: { cancel?: boolean; challenge?: string; headers?: Record<string, string>; body?: object } = {},
  ) {
    const { verifier, challenge } = pkce();
    const start = t.api().post(`/api/v1/auth/federation/${ALIAS}/start`);
    for (const [k, v] of Object.entries(options.headers ?? {})) start.set(k, v);
    const started = await start.send({ returnTo: returnTo(), codeChallenge: options.challenge ?? challenge, ...options.body });
    expect(started.status).toBe(200);
    const back = await idp.signIn(started.body.authorizationUrl, account, { cancel: options.cancel });
    const callback = await t.api().get(back.slice(t.config.apiUrl.length));
    expect(callback.status).toBe(303);
    return { location: new URL(callback.headers.location), verifier, authorizationUrl: started.body.authorizationUrl as string, back };
  }

  async function signIn(account: string) {
    const { location, verifier } = await throughProvider(account);
    const code = location.searchParams.get('code');
    expect(code).toBeTruthy();
    return t.api().post('/api/v1/auth/federation/exchange').send({ code, codeVerifier: verifier });
  }

  it('shows the registered provider with its redirectUri and without its secret', async () => {
    const res = await adminApi(t, rootToken, 'default').get(`/identity-providers/${ALIAS}`);
    expect(res.body.identityProvider).toEqual(
      expect.objectContaining({
        alias: ALIAS,
        issuer: idp.issuer,
        hasClientSecret: true,
        redirectUri: `${t.config.apiUrl}/api/v1/auth/federation/${ALIAS}/callback`,
        scopes: ['openid', 'email', 'profile'],
      }),
    );
    expect(JSON.stringify(res.body)).not.toContain('idp-client-secret');
    const [row] = await t.dataSource.query(`SELECT client_secret FROM identity_providers WHERE alias = $1`, [ALIAS]);
    expect(row.client_secret).not.toContain('idp-client-secret');
    expect((await t.api().get('/api/v1/auth/providers')).body).toEqual({ providers: [{ alias: ALIAS, displayName: 'Corp SSO' }] });
  });

  it('first sign-in creates the user (emailVerified from the provider, no password); the second lands on the same user', async () => {
    const first = await signIn('alice');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ user: { email: accounts.alice.email, emailVerified: true }, requiresMfa: false });
    const claims = JSON.parse(Buffer.from(first.body.tokens.accessToken.split('.')[1], 'base64url').toString());
    expect(claims.amr).toEqual(['fed']);
    const me = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(first.body.tokens.accessToken));
    expect(me.body.user).toMatchObject({ hasPassword: false, emailVerified: true, profile: { firstName: 'Alice', lastName: 'Tester' } });
    expect(me.body.user.identities).toEqual([expect.objectContaining({ provider: ALIAS, email: accounts.alice.email })]);
    const second = await signIn('alice');
    expect(second.body.user.id).toBe(first.body.user.id);
    const events = await storedEvents(t, 'default', { userId: first.body.user.id });
    expect(events.map((e: { type: string }) => e.type)).toEqual(
      expect.arrayContaining(['user.registered', 'identity.linked', 'login.succeeded']),
    );
  });

  it('links to a verified account with the same address', async () => {
    const existing = await register(t, accounts.bob.email);
    await t.dataSource.query(`UPDATE users SET email_verified = true WHERE id = $1`, [existing.id]);
    const res = await signIn('bob');
    expect(res.body.user.id).toBe(existing.id);
    expect((await login(t, accounts.bob.email, PASSWORD)).status).toBe(200);
  });

  it('FED-03: takes over an unverified account — the squatter’s password and sessions stop working', async () => {
    const squatter = await register(t, accounts.dave.email);
    const squatterLogin = await login(t, accounts.dave.email, PASSWORD);
    expect(squatterLogin.status).toBe(200);
    const res = await signIn('dave');
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ id: squatter.id, emailVerified: true });
    expect((await login(t, accounts.dave.email, PASSWORD)).body.error.code).toBe('INVALID_CREDENTIALS');
    const refresh = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: squatterLogin.body.tokens.refreshToken });
    expect(refresh.body.error.code).toBe('INVALID_TOKEN');
    const [linked] = await storedEvents(t, 'default', { userId: squatter.id, type: 'identity.linked' });
    expect(linked.details).toMatchObject({ takeover: true });
  });

  it('FED-03: a provider email that is not verified with an existing account → email_already_registered, nothing linked', async () => {
    const existing = await register(t, accounts.carol.email);
    const { location } = await throughProvider('carol');
    expect(location.searchParams.get('error')).toBe('email_already_registered');
    expect(location.searchParams.get('code')).toBeNull();
    const rows = await t.dataSource.query(`SELECT 1 FROM user_identities WHERE user_id = $1`, [existing.id]);
    expect(rows).toHaveLength(0);
    expect((await login(t, accounts.carol.email, PASSWORD)).status).toBe(200);
  });

  it('the user cancels at the provider → access_denied', async () => {
    const { location } = await throughProvider('erin', { cancel: true });
    expect(location.origin + location.pathname).toBe(returnTo());
    expect(location.searchParams.get('error')).toBe('access_denied');
  });

  it('FED-01: a replayed state → 400 INVALID_VERIFICATION_TOKEN, no redirect', async () => {
    const { back } = await throughProvider('alice');
    const replay = await t.api().get(back.slice(t.config.apiUrl.length));
    expect(replay.status).toBe(400);
    expect(replay.body.error.code).toBe('INVALID_VERIFICATION_TOKEN');
  });

  it('FED-04: a login code used twice → 401; a wrong code verifier → 401 and the code spent', async () => {
    const { location, verifier } = await throughProvider('alice');
    const code = location.searchParams.get('code');
    const wrong = await t.api().post('/api/v1/auth/federation/exchange').send({ code, codeVerifier: pkce().verifier });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const right = await t.api().post('/api/v1/auth/federation/exchange').send({ code, codeVerifier: verifier });
    expect([right.status, right.body.error.code]).toEqual([401, 'INVALID_TOKEN']);

    const again = await throughProvider('alice');
    const code2 = again.location.searchParams.get('code');
    expect((await t.api().post('/api/v1/auth/federation/exchange').send({ code: code2, codeVerifier: again.verifier })).status).toBe(200);
    expect((await t.api().post('/api/v1/auth/federation/exchange').send({ code: code2, codeVerifier: again.verifier })).status).toBe(401);
  });

  it('FED-04: a returnTo of another host → 400 at start', async () => {
    for (const returnTo of [
      'https://evil.example.net/account/x',
      `${t.config.apiUrl}/account/x#frag`,
      `${t.config.apiUrl}@evil.net/account/`,
    ]) {
      const res = await t.api().post(`/api/v1/auth/federation/${ALIAS}/start`).send({ returnTo, codeChallenge: pkce().challenge });
      expect([res.status, res.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    }
  });

  it('FED-02: a callback whose iss names another issuer → provider_error, no session', async () => {
    const { verifier, challenge } = pkce();
    const started = await t.api().post(`/api/v1/auth/federation/${ALIAS}/start`).send({ returnTo: returnTo(), codeChallenge: challenge });
    const back = new URL(await idp.signIn(started.body.authorizationUrl, 'alice'));
    expect(back.searchParams.get('iss')).toBe(idp.issuer);
    back.searchParams.set('iss', 'https://attacker.example');
    const callback = await t.api().get(back.href.slice(t.config.apiUrl.length));
    const location = new URL(callback.headers.location);
    expect(location.searchParams.get('error')).toBe('provider_error');
    expect(location.searchParams.get('code')).toBeNull();
    expect(verifier).toBeTruthy();
  });

  it('FED-01: an ID token with a wrong nonce → provider_error', async () => {
    const { challenge } = pkce();
    const started = await t.api().post(`/api/v1/auth/federation/${ALIAS}/start`).send({ returnTo: returnTo(), codeChallenge: challenge });
    const back = await idp.signIn(started.body.authorizationUrl, 'alice');
    await t.dataSource.query(
      `UPDATE federation_tokens SET payload = jsonb_set(payload, '{nonce}', '"another-nonce"') WHERE kind = 'state' AND used_at IS NULL`,
    );
    const callback = await t.api().get(back.slice(t.config.apiUrl.length));
    expect(new URL(callback.headers.location).searchParams.get('error')).toBe('provider_error');
  });
});
