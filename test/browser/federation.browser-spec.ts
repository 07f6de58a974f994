import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { adminApi } from '../support/admin-flows';
import { launchChromium } from '../support/chromium';
import { axeViolations, buildConsole, watchProblems } from '../support/console-build';
import { FEDERATION_ENV, FederationHarness, providerAccount } from '../support/federation';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { decodeJwt } from '../support/mfa';
import { AppPageServer, buildClientBundle, freePort, inPage, startAppPage } from '../support/sdk-app-page';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(150_000);

const SCREENSHOTS = join(__dirname, '../../test-results/screenshots');
const ALIAS = 'corp';

type Settled<T> = { value?: T; error?: { code: string; status: number; message: string } };

/**
 * Sign-in with an identity provider in Chromium, through the pages of a real OpenID provider
 * (panva's oidc-provider): from an app on a second origin with the SDK, and from the account
 * console's buttons; linking and unlinking in the console.
 */
describe('sign-in with an OpenID Connect provider in Chromium', () => {
  let t: TestApp;
  let harness: FederationHarness;
  let origin: string;
  let appPage: AppPageServer;
  let bundle: string;
  let consoleDir: string;
  let browser: Browser;
  let context: BrowserContext;
  let problems: string[];
  const accounts = Object.fromEntries(['ada', 'grace', 'linus', 'ken'].map((sub) => [sub, providerAccount(sub)]));
  const issuer = () => harness.idp.issuer;

  beforeAll(async () => {
    consoleDir = buildConsole();
    bundle = buildClientBundle();
    appPage = await startAppPage(bundle);
    const port = await freePort();
    origin = `http://localhost:${port}`;
    t = await createTestApp({
      env: { ...FEDERATION_ENV, PUBLIC_URL: origin, API_URL: origin, CORS_ORIGINS: appPage.origin, WEBAUTHN_RP_ID: 'localhost' },
      config: (c) => (c.accountConsoleDir = consoleDir),
    });
    await t.app.listen(port, '127.0.0.1');
    harness = await FederationHarness.attach(t, { accounts, aliases: [ALIAS] });
    const admin = adminApi(t, harness.rootToken, 'default');
    expect((await admin.patch('/realm').send({ settings: { allowedReturnUrls: [`${appPage.origin}/`] } })).status).toBe(200);
    expect((await admin.patch(`/identity-providers/${ALIAS}`).send({ displayName: 'Corp SSO' })).status).toBe(200);
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
    await t?.close();
    await appPage?.close();
    for (const dir of [bundle, consoleDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(10_000);
    // The provider's pages ask for a web font: an empty stylesheet answers, nothing leaves the machine.
    await context.route(/^https?:\/\/(?!localhost|127\.0\.0\.1)/, (route) => route.fulfill({ contentType: 'text/css', body: '' }));
    problems = await watchProblems(context);
  });
  afterEach(async () => {
    await context?.close();
    expect(problems).toEqual([]);
  });

  /** At the provider: its login page (any password), then its consent page; or its cancel link. */
  async function atProvider(page: Page, account: string, options: { cancel?: boolean } = {}): Promise<void> {
    await page.waitForURL((url) => url.origin === issuer());
    if (options.cancel) {
      await page.getByRole('link', { name: '[ Cancel ]' }).click();
      return;
    }
    await page.locator('input[name=login]').fill(account);
    await page.locator('input[name=password]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  /** No axe violation at all in the page, and a screenshot of it. */
  async function accessible(page: Page, state: string): Promise<void> {
    await page.locator('[aria-busy="true"]').first().waitFor({ state: 'detached' });
    expect({ state, violations: await axeViolations(page) }).toEqual({ state, violations: [] });
    await page.screenshot({ path: join(SCREENSHOTS, `federation-${state.replaceAll(' ', '-')}.png`), fullPage: true });
  }

  const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name });
  const alert = (page: Page) => page.locator('[role=alert]:not([hidden])');

  it('an app on another origin signs in with the SDK through the provider’s pages and lands signed in', async () => {
    const page = await context.newPage();
    await page.goto(`${appPage.origin}/?${new URLSearchParams({ api: origin })}`);
    await page.waitForFunction('window.app !== undefined');
    expect(await inPage(page, 'return app.client.federation.providers()')).toEqual([{ alias: ALIAS, displayName: 'Corp SSO' }]);
    await inPage(page, `void app.client.federation.signInWith('${ALIAS}', { returnTo: location.origin + '/' }); return null`);
    await atProvider(page, 'ada');
    await page.waitForURL((url) => url.origin === appPage.origin);
    await page.waitForFunction('window.app !== undefined');
    const completed = await inPage<Settled<{ kind: string; user: { email: string } }>>(page, 'return app.completed');
    expect(completed).toEqual({ value: { kind: 'signed-in', user: expect.objectContaining({ email: accounts.ada.email }) } });
    // The one-time code is gone from the address bar and the history entry.
    expect(page.url()).toBe(`${appPage.origin}/`);
    const token = await inPage<string>(page, 'return app.client.getAccessToken()');
    expect(decodeJwt(token)).toMatchObject({ amr: ['fed'] });
    const me = await inPage<Settled<{ status: number; body: { user: { hasPassword: boolean; identities: unknown[] } } }>>(
      page,
      'return app.me()',
    );
    expect(me.value?.body.user).toMatchObject({ hasPassword: false, identities: [expect.objectContaining({ provider: ALIAS })] });
    // The session lives in the HttpOnly cookie: a reload is still signed in.
    await page.reload();
    await page.waitForFunction('window.app !== undefined');
    await inPage(page, 'return app.client.ready');
    expect(await inPage(page, 'return app.snapshot().status')).toBe('signed-in');
  });

  it('the console’s provider button signs in through the provider’s pages; a cancel there is said on the sign-in page', async () => {
    const page = await context.newPage();
    await page.goto(`${origin}/account/`);
    await heading(page, 'Sign in').waitFor();
    const button = page.getByRole('group', { name: 'Other ways to sign in' }).getByRole('button', { name: 'Sign in with Corp SSO' });
    await button.waitFor();
    await accessible(page, 'sign-in with a provider button');

    await button.click();
    await atProvider(page, 'grace', { cancel: true });
    await heading(page, 'Sign in').waitFor();
    await expect(alert(page).textContent()).resolves.toBe('Cancelled at the identity provider: nothing was changed.');
    expect(page.url()).toBe(`${origin}/account/`);
    await accessible(page, 'sign-in after a cancel at the provider');

    await page.getByRole('button', { name: 'Sign in with Corp SSO' }).click();
    await atProvider(page, 'grace');
    await heading(page, 'Your profile').waitFor();
    expect(page.url()).toBe(`${origin}/account/`);
    expect(await page.getByRole('banner').textContent()).toContain(accounts.grace.email);
    await accessible(page, 'profile after a provider sign-in');

    // Its only way in cannot be unlinked: the page says why.
    await page.getByRole('link', { name: 'Security' }).click();
    const linked = page.getByRole('region', { name: 'Linked accounts' });
    await linked.getByRole('heading', { name: 'Corp SSO' }).waitFor();
    await linked.getByRole('button', { name: 'Unlink Corp SSO' }).click();
    await expect(linked.locator('[role=alert]:not([hidden])').textContent()).resolves.toBe(
      'Corp SSO is your only way to sign in: set a password or create a passkey before unlinking it.',
    );
    await accessible(page, 'linked accounts refusing the last way in');
  });

  it('linked accounts in the console: link through the provider’s pages, unlink; an account linked elsewhere is refused', async () => {
    const { email } = await register(t, uniqueEmail('console-link'));
    const page = await context.newPage();
    await page.goto(`${origin}/account/`);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await heading(page, 'Your profile').waitFor();
    await page.getByRole('link', { name: 'Security' }).click();
    const linked = page.getByRole('region', { name: 'Linked accounts' });
    await linked.getByText('No linked account yet.').waitFor();
    await accessible(page, 'linked accounts none yet');

    await linked.getByRole('button', { name: 'Link Corp SSO' }).click();
    await atProvider(page, 'linus');
    await heading(page, 'Security').waitFor();
    expect(page.url()).toBe(`${origin}/account/#security`);
    await expect(page.getByRole('status').textContent()).resolves.toBe('Your Corp SSO account is linked: it signs you in to this one.');
    await linked.getByRole('heading', { name: 'Corp SSO' }).waitFor();
    expect(await linked.textContent()).toContain(accounts.linus.email);
    await accessible(page, 'linked accounts one linked');

    await linked.getByRole('button', { name: 'Unlink Corp SSO' }).click();
    await linked.getByText('No linked account yet.').waitFor();
    await expect(page.getByRole('status').textContent()).resolves.toBe('Your Corp SSO account is unlinked.');

    // ken signs in once elsewhere (a new user); the provider's session here is linus's: start afresh there.
    expect((await harness.throughProvider('ken')).location.searchParams.get('code')).toBeTruthy();
    await context.clearCookies({ domain: '127.0.0.1' });
    await linked.getByRole('button', { name: 'Link Corp SSO' }).click();
    await atProvider(page, 'ken');
    await heading(page, 'Security').waitFor();
    await expect(alert(page).first().textContent()).resolves.toBe(
      'That account at the identity provider is linked to another user here already.',
    );
    await linked.getByText('No linked account yet.').waitFor();
    await accessible(page, 'linked accounts after a refused link');
  });
});
