import { adminApi, createRealm, storedEvents } from '../support/admin-flows';
import { dpopKey } from '../support/dpop';
import { bearer, login, PASSWORD, register } from '../support/flows';
import { EXCHANGE, FEDERATION_ENV, FederationHarness, providerAccount } from '../support/federation';
import { Client } from 'pg';
import { decodeJwt, oathtoolTotp, userWithTotp, verify } from '../support/mfa';
import { ProviderAccount } from '../support/oidc-provider';
import { createTestApp, TestApp } from '../support/test-app';

const ALIAS = 'corp';
/** A realm with registration closed, where the provider is registered under the same alias. */
const CLOSED_REALM = 'fed-closed';

describe('Sign-in with an OpenID Connect provider (oidc-provider, driven through its own pages)', () => {
  let h: FederationHarness;
  let t: TestApp;
  const accounts: Record<string, Required<Omit<ProviderAccount, 'name'>>> = {};

  beforeAll(async () => {
    for (const name of ['alice', 'bob', 'erin', 'frank', 'grace', 'heidi', 'ivan']) accounts[name] = providerAccount(name);
    h = await FederationHarness.start({ accounts });
    t = h.t;
    await createRealm(t, h.rootToken, CLOSED_REALM);
    await adminApi(t, h.rootToken, CLOSED_REALM)
      .patch('/realm')
      .send({ settings: { registration: 'closed' } })
      .expect(200);
    await h.register(ALIAS, CLOSED_REALM);
  });
  afterAll(() => h?.stop());

  it('shows the registered provider with its redirectUri; GET /providers lists it for sign-in buttons', async () => {
    const res = await adminApi(t, h.rootToken, 'default').get(`/identity-providers/${ALIAS}`);
    expect(res.body.identityProvider).toEqual(
      expect.objectContaining({
        alias: ALIAS,
        issuer: h.idp.issuer,
        hasClientSecret: true,
        redirectUri: `${t.config.apiUrl}/api/v1/auth/federation/${ALIAS}/callback`,
        scopes: ['openid', 'email', 'profile'],
      }),
    );
    expect((await t.api().get('/api/v1/auth/providers')).body).toEqual({ providers: [{ alias: ALIAS, displayName: `SSO ${ALIAS}` }] });
  });

  it('first sign-in creates the user (emailVerified from the provider, no password); the second lands on the same user', async () => {
    const first = await h.signIn('alice');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ user: { email: accounts.alice.email, emailVerified: true }, requiresMfa: false });
    expect(decodeJwt(first.body.tokens.accessToken).amr).toEqual(['fed']);
    const me = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(first.body.tokens.accessToken));
    expect(me.body.user).toMatchObject({ hasPassword: false, emailVerified: true, profile: { firstName: 'Alice', lastName: 'Tester' } });
    expect(me.body.user.identities).toEqual([expect.objectContaining({ provider: ALIAS, email: accounts.alice.email })]);
    const second = await h.signIn('alice');
    expect(second.body.user.id).toBe(first.body.user.id);
    const events = await storedEvents(t, 'default', { userId: first.body.user.id });
    expect(events.map((e: { type: string }) => e.type)).toEqual(
      expect.arrayContaining(['user.registered', 'identity.linked', 'login.succeeded']),
    );
  });

  it("the admin users list shows a federated user's identities beside users without any", async () => {
    const federated = await h.signIn('alice');
    const plain = await register(t);
    const admin = adminApi(t, h.rootToken, 'default');
    const listed = await admin.get('/users?limit=100&sort=-createdAt').expect(200);
    const byId = new Map(listed.body.users.map((user: { id: string }) => [user.id, user]));
    expect(byId.get(federated.body.user.id)).toMatchObject({
      identities: [expect.objectContaining({ id: expect.any(String), provider: ALIAS, email: accounts.alice.email })],
    });
    expect(byId.get(plain.id)).toMatchObject({ identities: [] });
    if (!t.config.databaseUrl) return;
    // The page's own read says who has a linked identity: a page without one reads no identities.
    const statements = jest.spyOn(Client.prototype, 'query');
    try {
      const counted = async (search: string) => {
        statements.mockClear();
        expect((await admin.get(`/users?search=${encodeURIComponent(search)}`).expect(200)).body.users).toHaveLength(1);
        return statements.mock.calls.length;
      };
      expect(await counted(accounts.alice.email)).toBe((await counted(plain.email)) + 1);
    } finally {
      statements.mockRestore();
    }
  });

  it("fetches the provider's signing keys once for several sign-ins, not once per sign-in", async () => {
    expect((await h.signIn('alice')).status).toBe(200);
    const fetched = await h.idp.requestsTo('/jwks');
    expect(fetched).toBeGreaterThan(0);
    for (let i = 0; i < 3; i += 1) expect((await h.signIn('alice')).status).toBe(200);
    expect(await h.idp.requestsTo('/jwks')).toBe(fetched);
  });

  it('links to a verified account with the same address', async () => {
    const existing = await register(t, accounts.bob.email);
    await t.dataSource.query(`UPDATE users SET email_verified = true WHERE id = $1`, [existing.id]);
    const res = await h.signIn('bob');
    expect(res.body.user.id).toBe(existing.id);
    expect((await login(t, accounts.bob.email, PASSWORD)).status).toBe(200);
  });

  it('the user cancels at the provider → access_denied', async () => {
    const { location } = await h.throughProvider('erin', { cancel: true });
    expect(location.origin + location.pathname).toBe(h.returnTo());
    expect(location.searchParams.get('error')).toBe('access_denied');
  });

  it('registration closed: a new account at the provider → registration_disabled, nobody created; the same alias in realm default still signs in', async () => {
    const { location } = await h.throughProvider('ivan', { realm: CLOSED_REALM });
    expect(location.searchParams.get('error')).toBe('registration_disabled');
    expect(location.searchParams.get('code')).toBeNull();
    const rows = await t.dataSource.query(`SELECT realm_id FROM users WHERE email = $1`, [accounts.ivan.email]);
    expect(rows).toEqual([]);
    const [failed] = await storedEvents(t, CLOSED_REALM, { type: 'login.failed' });
    expect(failed.details).toMatchObject({ method: 'federated', provider: ALIAS, reason: 'registration_disabled' });
    // The state, not the callback's path, chose the realm: in default, where registration is open, the same alias registers.
    const open = await h.signIn('ivan');
    expect(open.status).toBe(200);
    expect((await t.dataSource.query(`SELECT realm_id FROM users WHERE email = $1`, [accounts.ivan.email]))[0].realm_id).toBe('default');
  });

  it('a user with TOTP: the exchange answers requiresMfa, and /mfa/verify finishes the sign-in (amr fed, otp)', async () => {
    const user = await userWithTotp(t, accounts.frank.email);
    await t.dataSource.query(`UPDATE users SET email_verified = true WHERE id = $1`, [user.id]);
    const res = await h.signIn('frank');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ requiresMfa: true, mfaToken: expect.any(String), user: { id: user.id } });
    expect(res.body.tokens).toBeNull();
    const done = await verify(t, { mfaToken: res.body.mfaToken, type: 'totp', code: oathtoolTotp(user.secret, t.clock.now()) });
    expect(done.status).toBe(200);
    expect(done.body.user.id).toBe(user.id);
    expect(decodeJwt(done.body.tokens.accessToken).amr).toEqual(['fed', 'otp']);
    const [succeeded] = await storedEvents(t, 'default', { userId: user.id, type: 'mfa.succeeded' });
    expect(succeeded).toBeDefined();
  });

  it('a DPoP proof at the exchange binds the session to its key (tokenType DPoP, cnf.jkt); the token is refused as Bearer; a bad proof spends no code', async () => {
    const { proof, jkt } = await dpopKey(t);
    const { location, verifier } = await h.throughProvider('grace');
    const code = location.searchParams.get('code');
    // A proof for another URL is refused before the code is spent.
    const misdirected = await h.exchange(code, verifier, { headers: { DPoP: await proof('POST', '/api/v1/auth/login') } });
    expect([misdirected.status, misdirected.body.error.code]).toEqual([401, 'INVALID_DPOP_PROOF']);
    const res = await h.exchange(code, verifier, { headers: { DPoP: await proof('POST', EXCHANGE) } });
    expect(res.status).toBe(200);
    expect(res.body.tokens.tokenType).toBe('DPoP');
    const accessToken = res.body.tokens.accessToken as string;
    expect(decodeJwt(accessToken).cnf).toEqual({ jkt });
    const asDpop = await t
      .api()
      .get('/api/v1/auth/me')
      .set('Authorization', `DPoP ${accessToken}`)
      .set('DPoP', await proof('GET', '/api/v1/auth/me', accessToken));
    expect(asDpop.status).toBe(200);
    const asBearer = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(accessToken));
    expect([asBearer.status, asBearer.body.error.code]).toEqual([401, 'INVALID_DPOP_PROOF']);
    // A refresh without a proof of the same key is refused.
    const refresh = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: res.body.tokens.refreshToken });
    expect(refresh.status).toBe(401);
  });

  it('the cookie transport at the exchange: the refresh token comes as an HttpOnly cookie, not in the body, and refreshes', async () => {
    const res = await h.signIn('heidi', { exchangeHeaders: { 'X-Refresh-Token-Transport': 'cookie' } });
    expect(res.status).toBe(200);
    expect(res.body.tokens.refreshToken).toBeUndefined();
    expect(res.body.tokens.accessToken).toEqual(expect.any(String));
    const cookies = (res.headers['set-cookie'] as unknown as string[]) ?? [];
    const refreshCookie = cookies.find((c) => c.startsWith('__Host-refresh-default='));
    expect(refreshCookie).toMatch(/; HttpOnly/i);
    expect(refreshCookie).toMatch(/; Secure/i);
    expect(refreshCookie).toMatch(/; SameSite=Strict/i);
    expect(cookies.some((c) => c.startsWith('__Host-session-default=1'))).toBe(true);
    const refreshed = await t
      .api()
      .post('/api/v1/auth/refresh')
      .set('X-Refresh-Token-Transport', 'cookie')
      .set('Cookie', refreshCookie!.split(';')[0])
      .send({});
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.body.tokens.accessToken).sub).toBe(res.body.user.id);
  });

  // Instances share a database only on PostgreSQL (PGlite lives inside one process).
  const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;
  onPostgres('two instances on one database', () => {
    let second: TestApp;
    beforeAll(async () => {
      second = await createTestApp({ database: t.database, env: FEDERATION_ENV });
    });
    afterAll(() => second?.close());

    it('a sign-in started on one instance comes back to and is exchanged on the other', async () => {
      for (const [from, to] of [
        [t, second],
        [second, t],
      ]) {
        const { location, verifier } = await h.throughProvider('alice', { startOn: from, app: to });
        const res = await h.exchange(location.searchParams.get('code'), verifier, { app: to });
        expect(res.status).toBe(200);
        expect(res.body.user.email).toBe(accounts.alice.email);
      }
      // Called back on one, exchanged on the other.
      const { location, verifier } = await h.throughProvider('alice', { startOn: second, app: second });
      expect((await h.exchange(location.searchParams.get('code'), verifier, { app: t })).status).toBe(200);
    });
  });
});
