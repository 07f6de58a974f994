import * as jose from 'jose';
import * as oidc from 'openid-client';
import { ADMIN_ENV, adminApi, superAdmin } from '../support/admin-flows';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { authorizationRequest, Browser, listening } from '../support/op-browser';
import { createTestApp, TestApp } from '../support/test-app';

const REDIRECT = 'https://app.example.test/callback';
const API = 'https://api.example.test/invoices';

/**
 * The realm's OpenID provider serves the clients and resources administrators register over
 * `/v1/admin` (the rest of the protocol: openid-provider.e2e-spec.ts, with clients of its own).
 */
describe('the OpenID provider serves the clients administrators register', () => {
  let t: TestApp;
  let origin: string;
  let issuer: string;
  let admin: ReturnType<typeof adminApi>;

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    origin = await listening(t);
    issuer = `${origin}/realms/default`;
    admin = adminApi(t, (await superAdmin(t)).accessToken, 'default');
    const resource = await admin.post('/resources').send({ identifier: API, name: 'Invoices', scopes: [{ name: 'invoices:read' }] });
    expect(resource.status).toBe(201);
  });
  afterAll(() => t.close());

  const discover = (clientId: string, auth: oidc.ClientAuth) =>
    oidc.discovery(new URL(issuer), clientId, undefined, auth, { execute: [oidc.allowInsecureRequests] });

  it('a confidential client gets a resource token with the secret the admin API answered; rotated, the old secret is refused', async () => {
    const created = await admin
      .post('/clients')
      .send({ name: 'Billing job', type: 'confidential', grantTypes: ['client_credentials'], resources: [API], scopes: ['invoices:read'] });
    expect(created.status).toBe(201);
    const { clientId } = created.body.client;
    const tokens = await oidc.clientCredentialsGrant(await discover(clientId, oidc.ClientSecretBasic(created.body.clientSecret)), {
      scope: 'invoices:read',
      resource: API,
    });
    const jwksUri = (await t.api().get('/realms/default/.well-known/openid-configuration')).body.jwks_uri as string;
    const { payload } = await jose.jwtVerify(tokens.access_token, jose.createRemoteJWKSet(new URL(jwksUri)), { issuer, audience: API });
    expect(payload).toMatchObject({ sub: clientId, client_id: clientId, scope: 'invoices:read' });

    const rotated = await admin.post(`/clients/${clientId}/rotate-secret`).send({});
    expect(rotated.status).toBe(200);
    await expect(
      oidc.clientCredentialsGrant(await discover(clientId, oidc.ClientSecretBasic(created.body.clientSecret)), {
        scope: 'invoices:read',
        resource: API,
      }),
    ).rejects.toMatchObject({
      status: 401,
      cause: [expect.objectContaining({ parameters: expect.objectContaining({ error: 'invalid_client' }) })],
    });
    const again = await oidc.clientCredentialsGrant(await discover(clientId, oidc.ClientSecretBasic(rotated.body.clientSecret)), {
      scope: 'invoices:read',
      resource: API,
    });
    expect(again.access_token).toBeTruthy();
  });

  it('a public first-party client signs a user in through the pages; deleting the client ends its refresh token', async () => {
    const created = await admin
      .post('/clients')
      .send({ name: 'Web app', type: 'public', redirectUris: [REDIRECT], firstParty: true, scopes: ['openid', 'email', 'offline_access'] });
    expect(created.status).toBe(201);
    expect(created.body.clientSecret).toBeUndefined();
    const { clientId } = created.body.client;
    const config = await discover(clientId, oidc.None());
    const person = await register(t, uniqueEmail('op-admin-client'));
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email offline_access', prompt: 'consent' });
    let page = await browser.open(request.url.href);
    page = await browser.submit(page, { email: person.email, password: PASSWORD });
    if (!page.location) page = await browser.submit(page, { decision: 'allow' });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.location!), {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    });
    expect(tokens.claims()).toMatchObject({ iss: issuer, sub: person.id, aud: clientId });
    expect(tokens.refresh_token).toBeTruthy();

    expect((await admin.delete(`/clients/${clientId}`)).status).toBe(200);
    const rows: { n: number }[] = await t.dataSource.query(`SELECT count(*)::int AS n FROM op_artifacts WHERE payload->>'clientId' = $1`, [
      clientId,
    ]);
    expect(rows[0].n).toBe(0);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: expect.stringMatching(/invalid_(grant|client)/),
    });
  });
});
