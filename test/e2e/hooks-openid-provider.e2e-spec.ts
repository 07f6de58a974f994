import * as oidc from 'openid-client';
import { OpClients } from '../../src/application/ports/op-clients';
import { aClient, InMemoryOpClients, TEST_REDIRECT } from '../fakes/in-memory-op-clients';
import { ADMIN_ENV, adminApi, superAdmin } from '../support/admin-flows';
import { mailCount } from '../support/email-codes';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { HookServer } from '../support/hook-server';
import { decodeJwt } from '../support/mfa';
import { authorizationRequest, Browser, listening } from '../support/op-browser';
import { createTestApp, TestApp } from '../support/test-app';

const API = 'https://api.example.test/orders';

/** The realm's hooks at its OpenID provider: its sign-in page asks before-sign-in, its access tokens token-claims. */
describe('hooks at the OpenID provider', () => {
  let t: TestApp;
  let origin: string;
  let root: string;
  let server: HookServer;
  let clients: InMemoryOpClients;

  beforeAll(async () => {
    t = await createTestApp({
      env: { ...ADMIN_ENV, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
      override: (builder) => builder.overrideProvider(OpClients).useValue(new InMemoryOpClients()),
    });
    origin = await listening(t);
    clients = t.app.get(OpClients) as InMemoryOpClients;
    root = (await superAdmin(t)).accessToken;
    server = await HookServer.start();
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });
  afterEach(async () => {
    for (const name of ['before-sign-in', 'token-claims']) await adminApi(t, root, 'default').delete(`/hooks/${name}`);
    server.calls.length = 0;
  });

  async function client() {
    const resource = { identifier: API, scopes: ['orders:read'], accessTokenTtlSeconds: null };
    const registered = aClient({ firstParty: true, resources: [resource], scopes: ['openid', 'orders:read'] });
    clients.register('default', registered);
    const config = await oidc.discovery(new URL(`${origin}/realms/default`), registered.clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
    return { registered, config };
  }

  async function hook(name: string) {
    const res = await adminApi(t, root, 'default').put(`/hooks/${name}`).send({ url: server.url });
    expect(res.status).toBe(200);
    server.secret = res.body.secret;
  }

  it('adds the token-claims hook’s claims to the access tokens for an API, not to the ID token', async () => {
    await hook('token-claims');
    server.reply = () => ({ body: { claims: { plan: 'gold', client_id: 'forged' } } });
    const { config, registered } = await client();
    const person = await register(t, uniqueEmail('op-hook'));
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: TEST_REDIRECT, scope: 'openid orders:read', resource: API });
    let page = await browser.open(request.url.href);
    page = await browser.submit(page, { email: person.email, password: PASSWORD });
    expect(page.location).toMatch(/^https:\/\/app\.example\.test\/callback\?/);

    // A reserved name is a failure (token-claims allows by default): the token without the claims.
    let tokens = await oidc.authorizationCodeGrant(
      config,
      new URL(page.location!),
      { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce },
      { resource: API },
    );
    expect(decodeJwt(tokens.access_token)).toMatchObject({ client_id: registered.clientId, realm: 'default' });
    expect(decodeJwt(tokens.access_token).plan).toBeUndefined();

    server.reply = () => ({ body: { claims: { plan: 'gold' } } });
    const again = await authorizationRequest(config, { redirect_uri: TEST_REDIRECT, scope: 'openid orders:read', resource: API });
    page = await browser.open(again.url.href); // single sign-on: straight back to the app
    tokens = await oidc.authorizationCodeGrant(
      config,
      new URL(page.location!),
      { pkceCodeVerifier: again.verifier, expectedState: again.state, expectedNonce: again.nonce },
      { resource: API },
    );
    expect(decodeJwt(tokens.access_token)).toMatchObject({
      plan: 'gold',
      sub: person.id,
      client_id: registered.clientId,
      scope: 'orders:read',
    });
    expect(decodeJwt(tokens.id_token!).plan).toBeUndefined();
    const asked = server.ofType('token-claims').at(-1)!;
    expect(asked.verified).toBe(true);
    expect(asked.payload.data).toMatchObject({ user: { id: person.id }, clientId: registered.clientId, scope: 'orders:read' });
  });

  it('its sign-in page asks before-sign-in and shows the refusal’s message', async () => {
    await hook('before-sign-in');
    server.reply = () => ({ body: { decision: 'deny', message: 'Your company’s plan has ended' } });
    const { config, registered } = await client();
    const person = await register(t, uniqueEmail('op-refused'));
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: TEST_REDIRECT, scope: 'openid' });
    const page = await browser.open(request.url.href);
    const refused = await browser.submit(page, { email: person.email, password: PASSWORD });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toMatch(/text\/html/);
    expect(refused.html).toContain('Your company’s plan has ended');
    expect(refused.location).toBeFalsy();
    expect(server.ofType('before-sign-in')[0].payload.data).toMatchObject({ method: 'password', clientId: registered.clientId });
  });

  it('its sign-in page asks before-sign-in for an email code too, and shows the refusal’s message', async () => {
    await hook('before-sign-in');
    server.reply = () => ({ body: { decision: 'deny', message: 'Codes are off for your plan' } });
    const { config } = await client();
    const person = await register(t, uniqueEmail('op-code-refused'));
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: TEST_REDIRECT, scope: 'openid' });
    const page = await browser.open(request.url.href);
    const sent = await browser.submit(page, { email: person.email }, { action: /\/email-code$/ });
    const [mail] = await mailCount(t, person.email, 1);
    const refused = await browser.submit(sent, { code: mail.code }, { action: /email-code-verify$/ });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toMatch(/text\/html/);
    expect(refused.html).toContain('Codes are off for your plan');
    expect(refused.location).toBeFalsy();
    expect(server.ofType('before-sign-in')[0].payload.data).toMatchObject({ method: 'email-code' });
  });
});
