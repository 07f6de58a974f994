import { rmSync } from 'node:fs';
import { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { createTestApp, TestApp } from '../support/test-app';
import { PASSWORD, uniqueEmail } from '../support/flows';
import { AppPageServer, buildClientBundle, expectSecurityKeySignIn, freePort, inPage, startAppPage } from '../support/sdk-app-page';

jest.setTimeout(180_000);

type Settled<T> = { value?: T; error?: { code: string; status: number; message: string } };

/**
 * An app that serves the SDK's files as they are built (`dist/browser/`), with no bundler and no
 * import map, on its own origin, using the cookie transport; the service on another port of the
 * same host (as a dev setup has it).
 */
describe('the client SDK without a bundler, cookie transport', () => {
  let page: AppPageServer;
  let bundle: string;
  let browser: Browser;
  let t: TestApp;
  let api: string;

  beforeAll(async () => {
    bundle = buildClientBundle();
    page = await startAppPage(bundle, { bundler: false });
    const port = await freePort();
    api = `http://localhost:${port}`;
    t = await createTestApp({
      env: { CORS_ORIGINS: page.origin, PUBLIC_URL: page.origin, API_URL: api, WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: page.origin },
    });
    await t.app.listen(port, '127.0.0.1');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await page?.close();
    if (bundle) rmSync(bundle, { recursive: true, force: true });
  });

  /** Every answer the tab gets from the service, as `METHOD path status`; and the page's errors. */
  async function watch(tab: Page) {
    // The test page has no icon; its 404 would be the only console error otherwise.
    await tab.route('**/favicon.ico', (route) => route.fulfill({ status: 204 }));
    const answers: string[] = [];
    const errors: string[] = [];
    tab.on('response', (response: Response) => {
      if (response.url().startsWith(api))
        answers.push(`${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}`);
    });
    tab.on('pageerror', (error) => errors.push(error.message));
    tab.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    return { answers, errors };
  }

  async function load(tab: Page): Promise<void> {
    await tab.goto(`${page.origin}/?${new URLSearchParams({ api })}`);
    await tab.waitForFunction('window.app !== undefined');
    await inPage(tab, 'await app.client.ready');
  }

  const signIn = (tab: Page, email: string) =>
    inPage<Settled<{ kind: string; methods?: string[] }>>(
      tab,
      `return app.settle(app.client.signIn({ email: ${JSON.stringify(email)}, password: ${JSON.stringify(PASSWORD)} }))`,
    );

  async function registered(tab: Page): Promise<string> {
    const email = uniqueEmail('nobundler');
    const res = await inPage<Settled<unknown>>(
      tab,
      `return app.settle(app.client.register({ email: ${JSON.stringify(email)}, password: ${JSON.stringify(PASSWORD)}, name: 'Ada Lovelace' }))`,
    );
    expect(res.error).toBeUndefined();
    return email;
  }

  it('a signed-out page load sends no request at all (so none answers 401); signed in, a reload restores through the hint cookie', async () => {
    const context: BrowserContext = await browser.newContext();
    try {
      const tab = await context.newPage();
      const seen = await watch(tab);
      await load(tab);
      expect(await inPage(tab, 'return app.snapshot()')).toEqual({ status: 'signed-out', reason: null });
      expect(seen.answers).toEqual([]);

      const email = await registered(tab);
      expect((await signIn(tab, email)).value).toMatchObject({ kind: 'signed-in' });
      // The hint is readable by the page; the refresh token is not.
      expect(await inPage<string>(tab, 'return document.cookie')).toContain('__Host-session-default=1');
      const cookies = (await context.cookies(api)).map((c) => [c.name, c.httpOnly, c.secure, c.sameSite]).sort();
      expect(cookies).toEqual([
        ['__Host-refresh-default', true, true, 'Strict'],
        ['__Host-session-default', false, true, 'Strict'],
      ]);

      // A reload takes the tab's access token back after one read with it: no refresh is spent.
      seen.answers.length = 0;
      await load(tab);
      expect(await inPage(tab, 'return app.snapshot()')).toMatchObject({ status: 'signed-in' });
      expect(seen.answers).toEqual(['GET /api/v1/auth/me 200']);

      await inPage(tab, 'return app.client.signOut()');
      expect(await inPage<string>(tab, 'return document.cookie')).not.toContain('__Host-session-default');
      seen.answers.length = 0;
      await load(tab);
      await load(tab);
      expect(await inPage(tab, 'return app.snapshot()')).toEqual({ status: 'signed-out', reason: null });
      expect(seen.answers).toEqual([]);
      expect(seen.errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a session ended elsewhere costs a refused read and a refused refresh, which clears the hint: the next loads send nothing', async () => {
    const context = await browser.newContext();
    try {
      const tab = await context.newPage();
      const seen = await watch(tab);
      await load(tab);
      const email = await registered(tab);
      await signIn(tab, email);
      // An administrator (or another device) ends every session of the user.
      await t.dataSource.query(`UPDATE sessions SET revoked_at = now() WHERE user_id = (SELECT id FROM users WHERE email = $1)`, [email]);
      seen.answers.length = 0;
      await load(tab);
      expect(await inPage(tab, 'return app.snapshot()')).toEqual({ status: 'signed-out', reason: null });
      expect(seen.answers).toEqual(['GET /api/v1/auth/me 401', 'POST /api/v1/auth/refresh 401']);
      expect(await inPage<string>(tab, 'return document.cookie')).not.toContain('__Host-session-default');
      seen.answers.length = 0;
      await load(tab);
      expect(seen.answers).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('runs a security-key ceremony (CDP virtual authenticator) from the built files, loading the WebAuthn chunk only then', async () => {
    const context = await browser.newContext();
    try {
      const tab = await context.newPage();
      const seen = await watch(tab);
      await load(tab);
      const cdp = await context.newCDPSession(tab);
      await cdp.send('WebAuthn.enable');
      const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: { protocol: 'ctap2', transport: 'usb', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
      });
      const email = await registered(tab);
      await signIn(tab, email);
      const sdkFiles = () => page.requested.filter((path) => path.startsWith('/sdk/'));
      const before = sdkFiles();
      expect(before.every((path) => path.startsWith('/sdk/browser/'))).toBe(true);

      const added = await inPage<Settled<{ credential: { id: string; name: string }; mfa: unknown }>>(
        tab,
        `return app.settle(app.client.mfa.addSecurityKey({ name: 'USB key' }))`,
      );
      expect(added.error).toBeUndefined();
      expect(added.value).toMatchObject({ credential: { name: 'USB key' }, mfa: { enabled: true, methods: ['webauthn'] } });
      // The WebAuthn code came as one more file of the build, fetched for the ceremony.
      const lazy = sdkFiles().filter((path) => !before.includes(path));
      expect(lazy).toEqual([expect.stringMatching(/^\/sdk\/browser\/chunks\/[\w-]+\.js$/)]);
      expect(page.requested.filter((path) => path.startsWith('/vendor/'))).toEqual([]);
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(Buffer.from(credentials[0].credentialId, 'base64').toString('base64url')).toBe(added.value!.credential.id);

      await expectSecurityKeySignIn(tab, email);
      expect(seen.errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
