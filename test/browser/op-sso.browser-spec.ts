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

/**
 * The OpenID provider in Chromium. Two single-page apps on origins of their own, each a public
 * client of the realm signing in with openid-client in the browser: the first signs the user in
 * through the service's pages, the second is signed in by single sign-on without a page, and
 * logging out of the first (the end-session endpoint) ends the second's refresh token. And the
 * device page on a phone-sized screen without JavaScript.
 */
describe('the OpenID provider in a browser', () => {
  let t: TestApp;
  let api: string;
  let browser: Browser;
  let context: BrowserContext;
  const apps: SpaServer[] = [];

  beforeAll(async () => {
    const port = await freePort();
    api = `http://localhost:${port}`;
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
    const server = await startSpa(port, `${api}/realms/default`, created.body.client.clientId);
    apps.push(server);
    return server;
  }

  const inApp = <T>(tab: Page, body: string) => tab.evaluate(`(async () => { ${body} })()`) as Promise<T>;

  async function open(tab: Page, app: SpaServer): Promise<void> {
    await tab.goto(`${app.origin}/`);
    await tab.waitForFunction('window.app !== undefined');
  }

  /** Starts the app's sign-in; resolves once the browser is back at the app's callback. */
  async function login(tab: Page, app: SpaServer, signIn?: { email: string }): Promise<Outcome<{ sub: string; sid: string }>> {
    await inApp(tab, 'window.app.login()');
    if (signIn) {
      await tab.waitForURL(`${api}/realms/default/interaction/**`);
      await tab.fill('input[name=email]', signIn.email);
      await tab.fill('input[name=password]', PASSWORD);
      await tab.click('button[type=submit]');
    }
    await tab.waitForURL(`${app.origin}/callback?**`);
    await tab.waitForFunction('window.app !== undefined');
    return inApp(tab, 'return window.app.callback()');
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
    expect(a.value!.sub).toBe(person.id);
    expect(signInPages).toHaveLength(1);

    await open(tabB, second);
    const b = await login(tabB, second);
    expect(b.error).toBeUndefined();
    // Single sign-on: the same user and session, and no sign-in page on the way.
    expect(b.value).toMatchObject({ sub: person.id, sid: a.value!.sid });
    expect(signInPages).toHaveLength(1);
    expect(await inApp<Outcome<boolean>>(tabB, 'return window.app.refresh()')).toEqual({ value: true });

    // Logging out of the first app: its ID token names the session, so nothing to confirm.
    await inApp(tabA, 'window.app.logout()');
    await tabA.waitForURL(`${first.origin}/signed-out`);
    expect(await inApp<Outcome<boolean>>(tabB, 'return window.app.refresh()')).toEqual({ error: 'invalid_grant' });
    const [session] = await t.dataSource.query(`SELECT revoke_reason FROM sessions WHERE id = $1`, [a.value!.sid]);
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
