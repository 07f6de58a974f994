import * as oidc from 'openid-client';
import { OpClients } from '../../src/application/ports/op-clients';
import { aClient, InMemoryOpClients, TEST_REDIRECT } from '../fakes/in-memory-op-clients';
import { FEDERATION_ENV, FederationHarness, pkce, providerAccount } from '../support/federation';
import { authorizationRequest, AuthorizationRequest, Browser, listening, Page } from '../support/op-browser';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(120_000);

/**
 * The OpenID provider's sign-in page with the realm's identity providers (panva's oidc-provider as
 * the real upstream): the service's own federation flow, coming back to the interaction.
 */
describe('the OpenID provider’s sign-in page: identity providers', () => {
  let t: TestApp;
  let h: FederationHarness;
  let origin: string;
  let config: oidc.Configuration;
  const ann = providerAccount('ann');
  const bob = providerAccount('bob');

  beforeAll(async () => {
    t = await createTestApp({
      env: FEDERATION_ENV,
      override: (builder) => builder.overrideProvider(OpClients).useValue(new InMemoryOpClients()),
    });
    origin = await listening(t);
    h = await FederationHarness.attach(t, { accounts: { ann, bob } });
    const registered = aClient({ firstParty: true });
    (t.app.get(OpClients) as InMemoryOpClients).register('default', registered);
    config = await oidc.discovery(new URL(`${origin}/realms/default`), registered.clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
  });
  afterAll(async () => {
    await h?.stop();
    await t?.close();
  });

  async function start(): Promise<{ browser: Browser; request: AuthorizationRequest; page: Page }> {
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: TEST_REDIRECT, scope: 'openid email' });
    return { browser, request, page: await browser.open(request.url.href) };
  }

  it('lists the realm’s providers as buttons; one signs in through the provider and finishes the interaction (amr ["fed"])', async () => {
    const { browser, request, page } = await start();
    expect(page.html).toContain('<button type="submit" name="alias" value="corp">SSO corp</button>');
    // The button's answer leaves for the provider: the page's CSP lets the form go there.
    expect(page.headers.get('content-security-policy')).toContain(new URL(h.idp.issuer).origin);
    const toProvider = await browser.submit(page, { alias: 'corp' }, { action: /\/federation$/ });
    expect(toProvider.status).toBe(303);
    expect(toProvider.location!.startsWith(h.idp.issuer)).toBe(true);
    const back = await h.idp.signIn(toProvider.location!, 'ann');
    const done = await browser.open(back);
    expect(done.location).toMatch(/^https:\/\/app\.example\.test\/callback\?/);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location!), {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    });
    const [user] = await t.dataSource.query('SELECT id FROM users WHERE email = $1', [ann.email.toLowerCase()]);
    expect(tokens.claims()).toMatchObject({ sub: user.id, amr: ['fed'] });
  });

  it('signs nobody in with a login code from a start that was not this interaction’s (another verifier), nor in another browser', async () => {
    const victim = await start();
    const interaction = new URL(victim.page.url).pathname.replace(/\/$/, '');
    expect(interaction).toMatch(/^\/realms\/default\/interaction\/[A-Za-z0-9_-]+$/);
    const returnTo = `${origin}${interaction}/federation`;
    // Someone else's start, sent back to the victim's interaction: their own challenge.
    const { challenge } = pkce();
    const started = await t.api().post('/api/v1/auth/federation/corp/start').send({ returnTo, codeChallenge: challenge });
    expect(started.status).toBe(200);
    const back = await h.idp.signIn(started.body.authorizationUrl, 'bob');
    const callback = await h.callback(back);
    expect(callback.status).toBe(303);
    const planted = callback.headers.location as string;
    expect(planted.startsWith(returnTo + '?code=')).toBe(true);
    // The victim's page, before and after starting a provider sign-in of its own: refused, shown on the page.
    const before = await victim.browser.open(planted);
    expect([before.status, before.location]).toEqual([400, null]);
    expect(before.html).toContain('did not work');
    const toProvider = await victim.browser.submit(victim.page, { alias: 'corp' }, { action: /\/federation$/ });
    expect(toProvider.status).toBe(303);
    const after = await victim.browser.open(planted);
    expect([after.status, after.location]).toEqual([400, null]);
    // A browser without the interaction's cookie does not reach the interaction at all.
    const stranger = await new Browser(origin).open(planted);
    expect(stranger.status).toBe(400);
    expect(stranger.location).toBeNull();
  });

  it('refuses an unknown provider on the page', async () => {
    const { browser, page } = await start();
    const refused = await browser.submit(page, { alias: 'nowhere' }, { action: /\/federation$/ });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('not available');
  });
});
