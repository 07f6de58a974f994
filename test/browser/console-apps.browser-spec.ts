import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as oidc from 'openid-client';
import { Browser, Page } from 'playwright-core';
import { OpClients } from '../../src/application/ports/op-clients';
import { aClient, InMemoryOpClients, TEST_REDIRECT } from '../fakes/in-memory-op-clients';
import { launchChromium } from '../support/chromium';
import { axeViolations, buildConsole } from '../support/console-build';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { authorizationRequest, Browser as FormBrowser } from '../support/op-browser';
import { freePort } from '../support/sdk-app-page';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(150_000);

const SCREENSHOTS = join(__dirname, '../../test-results/screenshots');

/** The console's Apps page: the apps a user allowed through the realm's OpenID provider, and revoking one — at 390 px. */
describe('the account console: apps', () => {
  let t: TestApp;
  let origin: string;
  let browser: Browser;
  let consoleDir: string;

  beforeAll(async () => {
    consoleDir = buildConsole();
    const port = await freePort();
    origin = `http://localhost:${port}`;
    t = await createTestApp({
      env: { PUBLIC_URL: origin, API_URL: origin, WEBAUTHN_RP_ID: 'localhost' },
      config: (c) => (c.accountConsoleDir = consoleDir),
      override: (builder) => builder.overrideProvider(OpClients).useValue(new InMemoryOpClients()),
    });
    await t.app.listen(port, '127.0.0.1');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (consoleDir) rmSync(consoleDir, { recursive: true, force: true });
  });

  /** No serious or critical axe violation, nothing wider than the screen; a screenshot for a person to look at. */
  async function noSeriousViolation(page: Page, state: string): Promise<void> {
    await page.locator('[aria-busy="true"]').first().waitFor({ state: 'detached' });
    const violations = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect({ state, violations }).toEqual({ state, violations: [] });
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect({ state, overflow }).toEqual({ state, overflow: 0 });
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({
      path: join(SCREENSHOTS, `apps-${page.viewportSize()?.width}-${state.replaceAll(' ', '-')}.png`),
      fullPage: true,
    });
  }

  /** The user allows a third-party app on the provider's pages (scopes with offline_access): its tokens. */
  async function allow(clientId: string, email: string) {
    const config = await oidc.discovery(new URL(`${origin}/realms/default`), clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
    const request = await authorizationRequest(config, {
      redirect_uri: TEST_REDIRECT,
      scope: 'openid email offline_access',
      prompt: 'consent',
    });
    const pages = new FormBrowser(origin);
    const signIn = await pages.open(request.url.href);
    const consent = await pages.submit(signIn, { email, password: PASSWORD });
    expect(consent.html).toContain('<button type="submit" name="decision" value="allow">');
    const back = await pages.submit(consent, { decision: 'allow' });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(back.location!), {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    });
    return { config, refreshToken: tokens.refresh_token! };
  }

  it('lists an app the user allowed, with what it may access; revoking it after a confirmation ends its refresh token (axe, 390 px)', async () => {
    const app = aClient({ name: 'Photo Printer' });
    (t.app.get(OpClients) as InMemoryOpClients).register('default', app);
    const person = await register(t, uniqueEmail('apps-console'));
    const { config, refreshToken } = await allow(app.clientId, person.email);

    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const page = await context.newPage();
      await page.goto(`${origin}/account/#apps`);
      await page.getByLabel('Email address').fill(person.email, { timeout: 10_000 });
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Apps with access to your account' }).waitFor();
      await page.getByRole('heading', { level: 2, name: 'Photo Printer' }).waitFor();
      const may = page.getByRole('list', { name: 'What Photo Printer may access' });
      expect(await may.getByRole('listitem').allInnerTexts()).toEqual(
        expect.arrayContaining(['Know who you are', 'See your email address', 'Stay signed in when you are away']),
      );
      expect(await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Apps' }).getAttribute('aria-current')).toBe(
        'page',
      );
      await noSeriousViolation(page, 'list');

      // Nothing is revoked until the user confirms.
      await page.getByText('Revoke access', { exact: false }).first().click();
      const confirm = page.getByRole('button', { name: 'Yes, revoke access of Photo Printer' });
      await confirm.waitFor();
      await noSeriousViolation(page, 'confirm');
      const refreshed = await oidc.refreshTokenGrant(config, refreshToken);

      await confirm.click();
      await page.getByRole('status').filter({ hasText: 'Photo Printer no longer has access to your account.' }).waitFor();
      await page.getByText('No app has access to your account.').waitFor();
      await noSeriousViolation(page, 'revoked');

      await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token ?? refreshToken)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
    } finally {
      await context.close();
    }
  });
});
