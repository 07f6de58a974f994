import * as oidc from 'openid-client';
import { ADMIN_ENV, adminApi, createRealm, superAdmin } from '../support/admin-flows';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { authorizationRequest, Browser, listening } from '../support/op-browser';
import { createTestApp, TestApp } from '../support/test-app';

const REDIRECT = 'https://partner.example.test/callback';
const OPEN_LIMIT = 6;

/**
 * Dynamic client registration (RFC 7591) with openid-client's dynamicClientRegistration, by the
 * realm's clientRegistration setting: closed (the default), token, open. A registered client is
 * one of the realm's clients (`registeredBy: "dynamic"`, never first-party).
 */
describe('the OpenID provider’s dynamic client registration', () => {
  let t: TestApp;
  let origin: string;
  let root: string;
  let realmCounter = 0;

  beforeAll(async () => {
    t = await createTestApp({ env: { ...ADMIN_ENV, RATE_LIMIT_OP_REGISTRATION: `${OPEN_LIMIT}/3600` } });
    origin = await listening(t);
    root = (await superAdmin(t)).accessToken;
  });
  afterAll(() => t.close());

  /** A realm of its own with `clientRegistration` set to `mode`. */
  async function realmWith(mode?: 'closed' | 'token' | 'open') {
    const realm = `reg-${++realmCounter}-${Date.now().toString(36)}`;
    await createRealm(t, root, realm);
    const admin = adminApi(t, root, realm);
    if (mode) expect((await admin.patch('/realm').send({ settings: { clientRegistration: mode } })).status).toBe(200);
    return { realm, admin, issuer: new URL(`${origin}/realms/${realm}`) };
  }

  const registration = (issuer: URL, metadata: Partial<oidc.ClientMetadata>, initialAccessToken?: string) =>
    oidc.dynamicClientRegistration(issuer, metadata, undefined, {
      execute: [oidc.allowInsecureRequests],
      ...(initialAccessToken ? { initialAccessToken } : {}),
    });

  const web = { client_name: 'Partner app', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };

  it('closed (the default): no registration endpoint, and a POST there is not found', async () => {
    const { realm, issuer } = await realmWith();
    const doc = (await t.api().get(`/realms/${realm}/.well-known/openid-configuration`)).body;
    expect(doc.registration_endpoint).toBeUndefined();
    await expect(registration(issuer, web)).rejects.toThrow(/registration_endpoint/);
    const posted = await t.api().post(`/realms/${realm}/reg`).send(web);
    expect(posted.status).toBe(404);
  });

  it('token: an initial access token registers one client, listed by the admin API as dynamic and third-party; spent, it is refused', async () => {
    const { realm, admin, issuer } = await realmWith('token');
    const doc = (await t.api().get(`/realms/${realm}/.well-known/openid-configuration`)).body;
    expect(doc.registration_endpoint).toBe(`${issuer.href}/reg`);
    await expect(registration(issuer, web)).rejects.toMatchObject({ status: 401 });
    const bare = await t.api().post(`/realms/${realm}/reg`).set('Content-Type', 'application/json').send(web);
    expect([bare.status, bare.body.error, bare.headers['www-authenticate']]).toEqual([
      401,
      'invalid_token',
      'Bearer error="invalid_token"',
    ]);
    const token = (await admin.post('/initial-access-tokens').send({})).body.initialAccessToken as string;

    const config = await registration(
      issuer,
      {
        ...web,
        client_name: 'Nightly job',
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['client_credentials'],
        redirect_uris: [],
        scope: 'openid',
        first_party: true,
      },
      token,
    );
    const { client_id: clientId, client_secret: secret } = config.clientMetadata();
    expect(typeof secret).toBe('string');
    const listed = await admin.get(`/clients/${clientId}`);
    expect(listed.body.client).toMatchObject({ name: 'Nightly job', type: 'confidential', registeredBy: 'dynamic', firstParty: false });
    // The secret it was answered works at the token endpoint.
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'openid' });
    expect(tokens.access_token).toBeTruthy();

    await expect(registration(issuer, web, token)).rejects.toMatchObject({ status: 401 });
    const clients = (await admin.get('/clients')).body.clients as unknown[];
    expect(clients).toHaveLength(1);
  });

  describe('open', () => {
    let attempts = 0;
    const counted = <T>(work: Promise<T>) => {
      attempts += 1;
      return work;
    };

    it('registers a public client anyone asks for; its users are asked for consent and it signs them in with PKCE', async () => {
      const { realm, admin, issuer } = await realmWith('open');
      const config = await counted(registration(issuer, { ...web, first_party: true }));
      const clientId = config.clientMetadata().client_id;
      expect(config.clientMetadata().client_secret).toBeUndefined();
      expect((await admin.get(`/clients/${clientId}`)).body.client).toMatchObject({
        type: 'public',
        registeredBy: 'dynamic',
        firstParty: false,
      });

      const person = await register(t, uniqueEmail('op-reg'), PASSWORD, realm);
      const browser = new Browser(origin);
      const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email' });
      let page = await browser.open(request.url.href);
      page = await browser.submit(page, { email: person.email, password: PASSWORD });
      expect(page.html).toContain('<button type="submit" name="decision" value="allow">');
      page = await browser.submit(page, { decision: 'allow' });
      const tokens = await oidc.authorizationCodeGrant(config, new URL(page.location!), {
        pkceCodeVerifier: request.verifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
      });
      expect(tokens.claims()).toMatchObject({ sub: person.id, aud: clientId });
    });

    it('refuses what would mint privilege: a confidential client, client_credentials, another response type', async () => {
      const { admin, issuer } = await realmWith('open');
      for (const metadata of [
        { ...web, token_endpoint_auth_method: 'client_secret_basic' },
        { ...web, grant_types: ['authorization_code', 'client_credentials'] },
        { ...web, response_types: ['code id_token'] },
      ]) {
        await expect(counted(registration(issuer, metadata))).rejects.toMatchObject({ status: 400, error: 'invalid_client_metadata' });
      }
      await expect(
        counted(registration(issuer, { ...web, redirect_uris: ['http://partner.example.test/callback'] })),
      ).rejects.toMatchObject({
        status: 400,
        error: 'invalid_redirect_uri',
      });
      expect((await admin.get('/clients')).body.clients).toEqual([]);
    });

    it(`is limited to ${OPEN_LIMIT} registrations per client IP (per hour by default), then 429 with Retry-After`, async () => {
      const { issuer } = await realmWith('open');
      while (attempts < OPEN_LIMIT) await counted(registration(issuer, web));
      const refused = await t.api().post(`${issuer.pathname}/reg`).set('Content-Type', 'application/json').send(web);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMITED');
      expect([refused.headers['ratelimit-limit'], refused.headers['ratelimit-remaining']]).toEqual([String(OPEN_LIMIT), '0']);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    });
  });
});
