import { rmSync } from 'node:fs';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { watchProblems } from '../support/console-build';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { AppPageServer, buildClientBundle, freePort, inPage, Settled, startAppPage } from '../support/sdk-app-page';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(150_000);

/**
 * Records the page's WebAuthn requests in order: `get#0 conditional`, `abort#0`, `end#0 AbortError`,
 * `create#1`, `end#1 ok` …
 */
const RECORD_WEBAUTHN = `(() => {
  const container = navigator.credentials;
  if (!container) return;
  const log = [];
  window.webauthn = log;
  for (const kind of ['get', 'create']) {
    const original = container[kind].bind(container);
    container[kind] = (options) => {
      const index = log.filter((e) => /^(get|create)#/.test(e)).length;
      log.push(kind + '#' + index + (kind === 'get' ? ' ' + ((options && options.mediation) || 'optional') : ''));
      options?.signal?.addEventListener('abort', () => log.push('abort#' + index));
      return original(options).then(
        (value) => (log.push('end#' + index + ' ok'), value),
        (error) => {
          log.push('end#' + index + ' ' + (error && error.name));
          throw error;
        },
      );
    };
  }
})();`;

/** The SDK's guardrails in Chromium: a pending passkey autofill ends for other sign-ins and ceremonies; a cross-site cookie transport warns. */
describe('client SDK guardrails in Chromium', () => {
  let t: TestApp;
  let origin: string;
  let app: AppPageServer;
  let bundle: string;
  let browser: Browser;
  const open: { context: BrowserContext; problems: string[] }[] = [];

  beforeAll(async () => {
    bundle = buildClientBundle();
    app = await startAppPage(bundle);
    const port = await freePort();
    origin = `http://localhost:${port}`;
    const appOrigins = `${app.origin},${app.origin.replace('localhost', '127.0.0.1')}`;
    t = await createTestApp({
      env: { PUBLIC_URL: origin, API_URL: origin, CORS_ORIGINS: appOrigins, WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: app.origin },
    });
    await t.app.listen(port, '127.0.0.1');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await app?.close();
    if (bundle) rmSync(bundle, { recursive: true, force: true });
  });
  afterEach(async () => {
    const problems = open.flatMap((o) => o.problems);
    for (const { context } of open.splice(0)) await context.close();
    expect(problems).toEqual([]);
  });

  async function newBrowser(): Promise<{ context: BrowserContext; page: Page; warnings: string[] }> {
    const context = await browser.newContext();
    context.setDefaultTimeout(10_000);
    const problems = await watchProblems(context);
    open.push({ context, problems });
    await context.addInitScript({ content: RECORD_WEBAUTHN });
    const warnings: string[] = [];
    context.on('console', (message) => {
      if (message.type() === 'warning') warnings.push(message.text());
    });
    return { context, page: await context.newPage(), warnings };
  }

  /** A virtual authenticator that holds every request until a touch (presence off), as a user who has not picked a passkey yet. */
  async function waitingAuthenticator(context: BrowserContext, page: Page) {
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: false });
    return { touch: () => cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: true }) };
  }

  async function openApp(page: Page, pageOrigin = app.origin): Promise<void> {
    await page.goto(`${pageOrigin}/?api=${encodeURIComponent(origin)}`);
    await page.waitForFunction('window.app !== undefined');
    await inPage(page, 'await app.client.ready');
    await page.evaluate(
      `document.body.append(Object.assign(document.createElement('input'), { type: 'email', autocomplete: 'username webauthn' }))`,
    );
  }

  async function until(page: Page, expression: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!(await page.evaluate<boolean>(expression))) {
      if (Date.now() > deadline) throw new Error(`not true in time: ${expression}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const log = (page: Page) => page.evaluate<string[]>('window.webauthn');

  it('a password sign-in stops the pending autofill request (its result is null) before it signs in', async () => {
    const { context, page } = await newBrowser();
    await waitingAuthenticator(context, page);
    const user = await register(t, uniqueEmail('autofill-password'));
    await openApp(page);
    await page.evaluate('void (window.autofill = window.app.settle(window.app.client.passkeys.autofill().result))');
    await until(page, `window.webauthn.includes('get#0 conditional')`);

    const signedIn = await inPage<Settled<unknown>>(
      page,
      `return app.settle(app.client.signIn({ email: ${JSON.stringify(user.email)}, password: ${JSON.stringify(PASSWORD)} }))`,
    );
    expect(signedIn.value).toMatchObject({ kind: 'signed-in' });
    expect(await page.evaluate('window.autofill')).toEqual({ value: null });
    expect(await log(page)).toEqual(['get#0 conditional', 'abort#0', 'end#0 AbortError']);
    // Signed in, a new autofill request does not start at all.
    expect(await inPage(page, 'return app.settle(app.client.passkeys.autofill().result)')).toEqual({ value: null });
    expect(await log(page)).toHaveLength(3);
  });

  it('a pending autofill request ends before passkeys.register() asks the browser, and the registration succeeds', async () => {
    const { context, page } = await newBrowser();
    const authenticator = await waitingAuthenticator(context, page);
    const user = await register(t, uniqueEmail('autofill-register'));
    await openApp(page);
    await page.evaluate('void (window.autofill = window.app.settle(window.app.client.passkeys.autofill().result))');
    await until(page, `window.webauthn.includes('get#0 conditional')`);

    // The user signs in in another tab of the app; this tab follows, and its autofill request ends.
    const other = await context.newPage();
    await openApp(other);
    await inPage(other, `return app.client.signIn({ email: ${JSON.stringify(user.email)}, password: ${JSON.stringify(PASSWORD)} })`);
    await until(page, `window.app.snapshot().status === 'signed-in'`);
    expect(await page.evaluate('window.autofill')).toEqual({ value: null });

    // Back in this tab (WebAuthn asks for the focused page), the user adds a passkey.
    await other.close();
    await page.bringToFront();
    await authenticator.touch();
    const created = await inPage<Settled<{ credential: { name: string } }>>(
      page,
      `return app.settle(app.client.passkeys.register({ name: 'Desk' }))`,
    );
    expect(created.error).toBeUndefined();
    expect(created.value).toMatchObject({ credential: { name: 'Desk' } });
    const events = await log(page);
    expect(events).toEqual(['get#0 conditional', 'abort#0', 'end#0 AbortError', 'create#1', 'end#1 ok']);
  });

  it('the cookie transport across sites (page on 127.0.0.1, service on localhost) warns; on one site it does not', async () => {
    const { page, warnings } = await newBrowser();
    await openApp(page, app.origin.replace('localhost', '127.0.0.1'));
    const crossSite = warnings.filter((w) => w.includes('different sites'));
    expect(crossSite).toHaveLength(1);
    expect(crossSite[0]).toContain(`this page (${app.origin.replace('localhost', '127.0.0.1')}) and the service (${origin})`);
    expect(crossSite[0]).toContain('TokenStorage');

    warnings.length = 0;
    await openApp(page);
    expect(warnings.filter((w) => w.includes('different sites'))).toEqual([]);
  });
});
