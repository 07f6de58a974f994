import * as jose from 'jose';
import * as oidc from 'openid-client';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { ADMIN_ENV, adminApi, superAdmin } from '../support/admin-flows';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { startSpa, SpaServer } from '../support/op-spa-page';
import { freePort } from '../support/sdk-app-page';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(180_000);

type Outcome<T> = { value?: T; error?: string };
/** What the app's `UserManager` holds after a sign-in or a refresh. */
type SignedIn = { profile: Record<string, unknown>; idToken: string; scope: string; refreshToken: string };

/**
 * The OpenID provider in Chromium. Two single-page apps on origins of their own, each a public
 * client of the realm signing in with oidc-client-ts: the first signs the user in through the
 * service's pages, the second is signed in by single sign-on without a page, and logging out of
 * the first (the end-session endpoint) ends the second's refresh token. And the device page on a
 * phone-sized screen without JavaScript, with openid-client polling as the device.
 */
describe('the OpenID provider in a browser', () => {
  let t: TestApp;
  let api: string;
  let issuer: string;
  let browser: Browser;
  let context: BrowserContext;
  const apps: SpaServer[] = [];

  beforeAll(async () => {
    const port = await freePort();
    api = `http://localhost:${port}`;
    issuer = `${api}/realms/default`;
    t = await createTestApp({ env: { ...ADMIN_ENV, API_URL: api } });
    await t.app.listen(port, '127.0.0.1');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    for (const app of apps) await app.close();
    await t?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext();
  });
  afterEach(() => context.close());

  /** An app on its own port, registered over the admin API as a first-party public client. */
  async function spa(): Promise<SpaServer> {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const admin = adminApi(t, (await superAdmin(t)).accessToken, 'default');
    const created = await admin.post('/clients').send({
      name: `App ${port}`,
      type: 'public',
      redirectUris: [`${origin}/callback`],
      postLogoutRedirectUris: [`${origin}/signed-out`],
      firstParty: true,
      scopes: ['openid', 'email'],
    });
    expect(created.status).toBe(201);
    const server = await startSpa(port, issuer, created.body.client.clientId);
    apps.push(server);
    return server;
  }

  const inApp = <T>(tab: Page, body: string) => tab.evaluate(`(async () => { ${body} })()`) as Promise<T>;

  async function open(tab: Page, app: SpaServer): Promise<void> {
    await tab.goto(`${app.origin}/`);
    await tab.waitForFunction('window.app !== undefined');
  }

  /**
   * Starts the app's sign-in and completes it at the app's callback. `iss` is the authorization
   * response's issuer (RFC 9207), which oidc-client-ts does not read.
   */
  async function login(
    tab: Page,
    app: SpaServer,
    signIn?: { email: string },
  ): Promise<Outcome<SignedIn & { state: unknown; nonce: string }> & { iss: string | null }> {
    await inApp(tab, 'window.app.login()');
    if (signIn) {
      await tab.waitForURL(`${issuer}/interaction/**`);
      await tab.fill('input[name=email]', signIn.email);
      await tab.fill('input[name=password]', PASSWORD);
      await tab.click('button[type=submit]');
    }
    await tab.waitForURL(`${app.origin}/callback?**`);
    const iss = new URL(tab.url()).searchParams.get('iss');
    await tab.waitForFunction('window.app !== undefined');
    return { ...(await inApp<Outcome<SignedIn & { state: unknown; nonce: string }>>(tab, 'return window.app.callback()')), iss };
  }

  /**
   * The ID token as a relying party must check it: signed with a key of the realm's JWKS, for this
   * app, with its nonce. oidc-client-ts decodes it and compares the nonce (and, on refresh, sub,
   * auth_time and azp) but checks neither signature, issuer nor audience: the test does.
   */
  async function verifiedIdToken(app: SpaServer, signedIn: SignedIn & { nonce: string }) {
    const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as { jwks_uri: string };
    const { payload } = await jose.jwtVerify(signedIn.idToken, jose.createRemoteJWKSet(new URL(discovery.jwks_uri)), {
      issuer,
      audience: app.clientId,
    });
    expect(payload.nonce).toBe(signedIn.nonce);
    return payload;
  }

  it('the second app needs no sign-in; logging out of the first ends the second’s refresh token', async () => {
    const [first, second] = [await spa(), await spa()];
    const person = await register(t, uniqueEmail('op-spa'));
    const tabA = await context.newPage();
    const tabB = await context.newPage();
    const signInPages: string[] = [];
    for (const tab of [tabA, tabB])
      tab.on('framenavigated', (frame) => frame.url().includes('/interaction/') && signInPages.push(frame.url()));

    await open(tabA, first);
    const a = await login(tabA, first, { email: person.email });
    expect(a.error).toBeUndefined();
    expect(a.iss).toBe(issuer);
    expect(signInPages).toHaveLength(1);
    const idTokenA = await verifiedIdToken(first, a.value!);
    expect(idTokenA).toMatchObject({ sub: person.id, amr: ['pwd'] });
    // The profile: the ID token's claims, and the email from userinfo (called from the app's origin).
    expect(idTokenA.email).toBeUndefined();
    expect(a.value).toMatchObject({
      profile: { sub: person.id, sid: idTokenA.sid, email: person.email },
      scope: 'openid email',
      state: { from: 'login' },
    });
    expect(a.value!.refreshToken).toEqual(expect.any(String));

    await open(tabB, second);
    const b = await login(tabB, second);
    expect(b.error).toBeUndefined();
    expect(b.iss).toBe(issuer);
    // Single sign-on: the same user and session, and no sign-in page on the way.
    expect(signInPages).toHaveLength(1);
    const idTokenB = await verifiedIdToken(second, b.value!);
    expect(idTokenB).toMatchObject({ sub: person.id, sid: idTokenA.sid, auth_time: idTokenA.auth_time });
    expect(b.value!.profile).toMatchObject({ sub: person.id, email: person.email });

    // signinSilent with a refresh token: a new, rotated one, the same user (checked against the ID token).
    const refreshed = await inApp<Outcome<SignedIn>>(tabB, 'return window.app.refresh()');
    expect(refreshed.error).toBeUndefined();
    expect(refreshed.value!.profile).toMatchObject({ sub: person.id, sid: idTokenA.sid, email: person.email });
    expect(refreshed.value!.refreshToken).toEqual(expect.any(String));
    expect(refreshed.value!.refreshToken).not.toBe(b.value!.refreshToken);

    // Logging out of the first app: its ID token names the session, so nothing to confirm; the
    // provider sends the browser back with the app's state, and the app has forgotten its user.
    await inApp(tabA, 'window.app.logout()');
    await tabA.waitForURL(`${first.origin}/signed-out?**`);
    await tabA.waitForFunction('window.app !== undefined');
    expect(await inApp(tabA, 'return window.app.signedOut()')).toEqual({ value: { state: { from: 'logout' }, user: null } });
    expect(signInPages).toHaveLength(1);
    expect(await inApp<Outcome<SignedIn>>(tabB, 'return window.app.refresh()')).toEqual({ error: 'invalid_grant' });
    const [session] = await t.dataSource.query(`SELECT revoke_reason FROM sessions WHERE id = $1`, [idTokenA.sid]);
    expect(session.revoke_reason).toBe('logout');
  });

  it('the device page works without JavaScript on a 390 px wide screen: code, confirmation, sign-in', async () => {
    const phone = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 844 } });
    try {
      const admin = adminApi(t, (await superAdmin(t)).accessToken, 'default');
      const created = await admin
        .post('/clients')
        .send({ name: 'Living-room TV', type: 'public', grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'], firstParty: true });
      const config = await oidc.discovery(new URL(`${api}/realms/default`), created.body.client.clientId, undefined, oidc.None(), {
        execute: [oidc.allowInsecureRequests],
      });
      const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
      const polling = oidc.pollDeviceAuthorizationGrant(config, started);
      const person = await register(t, uniqueEmail('op-phone'));
      const tab = await phone.newPage();
      const fits = async () => expect(await tab.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await tab.goto(started.verification_uri);
      await fits();
      await tab.fill('input[name=code]', started.user_code.toLowerCase());
      await tab.click('button[type=submit]');
      await tab.waitForSelector('button[name=confirm]');
      await fits();
      await tab.click('button[name=confirm]');
      await tab.waitForSelector('input[name=password]');
      await fits();
      await tab.fill('input[name=email]', person.email);
      await tab.fill('input[name=password]', PASSWORD);
      await tab.click('button[type=submit]');
      await tab.waitForSelector('text=Your device is connected');
      await fits();
      expect((await polling).claims()!.sub).toBe(person.id);
    } finally {
      await phone.close();
    }
  });
});
