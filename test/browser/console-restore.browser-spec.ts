import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { axeViolations, buildConsole, watchProblems } from '../support/console-build';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { freePort } from '../support/sdk-app-page';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(180_000);

const SCREENSHOTS = join(__dirname, '../../test-results/screenshots');

/**
 * Records the text of every level-1 heading the page ever shows (a "Sign in" shown for a moment
 * counts), and whether a heading that took the focus drew a ring.
 */
const RECORD_HEADINGS = `(() => {
  window.headings = [];
  new MutationObserver(() => {
    for (const h1 of document.querySelectorAll('h1')) {
      const text = h1.textContent;
      if (window.headings.at(-1) !== text) window.headings.push(text);
    }
  }).observe(document, { childList: true, subtree: true, characterData: true });
})();`;

/** A service on its own port, its console built, with `env` on top of the test defaults. */
async function startService(env: Record<string, string>): Promise<{ t: TestApp; origin: string }> {
  const consoleDir = buildConsole();
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const t = await createTestApp({
    env: { PUBLIC_URL: origin, API_URL: origin, WEBAUTHN_RP_ID: 'localhost', ...env },
    config: (c) => (c.accountConsoleDir = consoleDir),
  });
  await t.app.listen(port, '127.0.0.1');
  const close = t.close.bind(t);
  t.close = async () => {
    await close();
    rmSync(consoleDir, { recursive: true, force: true });
  };
  return { t, origin };
}

describe('the account console across page loads: no false sign-out', () => {
  let browser: Browser;
  const open: { context: BrowserContext; problems: string[] }[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    const problems = open.flatMap((o) => o.problems);
    for (const { context } of open.splice(0)) await context.close();
    expect(problems).toEqual([]);
  });

  async function newPage(width = 1280, height = 800): Promise<{ context: BrowserContext; page: Page; refreshes: () => number }> {
    const context = await browser.newContext({ viewport: { width, height } });
    context.setDefaultTimeout(10_000);
    const problems = await watchProblems(context);
    open.push({ context, problems });
    await context.addInitScript({ content: RECORD_HEADINGS });
    let refreshes = 0;
    context.on('request', (request) => {
      if (request.url().endsWith('/api/v1/auth/refresh')) refreshes += 1;
    });
    return { context, page: await context.newPage(), refreshes: () => refreshes };
  }

  const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name });
  const headings = (page: Page) => page.evaluate<string[]>('window.headings');

  async function signIn(page: Page, origin: string, email: string): Promise<void> {
    await page.goto(`${origin}/account/`);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await heading(page, 'Your profile').waitFor();
  }

  describe('with the refresh limit of production (10 per minute per user)', () => {
    let t: TestApp;
    let origin: string;
    beforeAll(async () => {
      ({ t, origin } = await startService({ RATE_LIMIT_REFRESH: '10/60' }));
    });
    afterAll(async () => {
      await t?.close();
    });

    it('reloads the console 30 times in a minute and stays signed in: a reload takes the tab’s access token back, no refresh is spent', async () => {
      const { page, refreshes } = await newPage();
      const user = await register(t, uniqueEmail('reloads'));
      await signIn(page, origin, user.email);
      const before = refreshes();
      const started = Date.now();
      for (let i = 0; i < 30; i += 1) {
        await page.reload();
        await heading(page, 'Your profile').waitFor();
        expect(await headings(page)).toEqual(['Your profile']);
      }
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(refreshes() - before).toBe(0);
      // The session is the same one, and a second tab opened now is signed in too (the open tab hands it the token).
      const second = await page.context().newPage();
      await second.goto(`${origin}/account/#sessions`);
      await heading(second, 'Where you are signed in').waitFor();
      // The list comes after the heading: wait for it before counting.
      await second.locator('.session').first().waitFor();
      expect(await second.locator('.session').count()).toBe(1);
      expect(refreshes() - before).toBe(0);
      await second.close();
    });

    it('a page opened by URL shows no focus ring on its heading; the profile and security pages at 390 px (screenshots, axe clean)', async () => {
      const { page } = await newPage(390, 844);
      const user = await register(t, uniqueEmail('a-rather-long-address-for-a-phone'));
      await t.dataSource.query(`UPDATE users SET email_verified = true WHERE id = $1`, [user.id]);
      await signIn(page, origin, user.email);
      for (const [fragment, name, shot] of [
        ['#profile', 'Your profile', 'profile'],
        ['#security', 'Security', 'security'],
      ] as const) {
        await page.goto(`${origin}/account/${fragment}`);
        await heading(page, name).waitFor();
        await page.locator('[aria-busy="true"]').first().waitFor({ state: 'detached' });
        // Whatever has the focus draws no outline unless it is a control used from the keyboard.
        const ring = await page.evaluate(`(() => { const el = document.activeElement; const style = getComputedStyle(el);
          return { tag: el.tagName, outline: style.outlineStyle === 'none' ? 'none' : style.outlineStyle + ' ' + style.outlineColor }; })()`);
        expect(ring).toMatchObject({ outline: 'none' });
        expect(await axeViolations(page)).toEqual([]);
        expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBe(0);
        await page.screenshot({ path: join(SCREENSHOTS, `console-390-${shot}.png`), fullPage: true });
      }

      // On the security page, seen at 390 px: every button of a panel spans the column.
      const widths = await page.evaluate<{ text: string; width: number }[]>(`[...document.querySelectorAll('.panel button')]
        .filter((b) => b.offsetParent !== null).map((b) => ({ text: b.textContent, width: Math.round(b.getBoundingClientRect().width) }))`);
      const column = await page.evaluate<number>(`Math.round(document.querySelector('.panel form').getBoundingClientRect().width)`);
      expect(widths.length).toBeGreaterThan(2);
      for (const button of widths) expect(button).toEqual({ text: button.text, width: column });
      // The passkey can be named at creation, as a security key can.
      await page.getByLabel('Name of the passkey').waitFor();

      // On the profile page the badge stays on the address's line.
      await page.goto(`${origin}/account/#profile`);
      await heading(page, 'Your profile').waitFor();
      const address = page.locator('.address');
      const [text, badge] = [await address.locator('span').first().boundingBox(), await address.locator('.badge').boundingBox()];
      expect(badge!.x).toBeGreaterThan(text!.x);
      expect(Math.abs(badge!.y + badge!.height / 2 - (text!.y + text!.height / 2))).toBeLessThan(text!.height / 2 + 1);
    });
  });

  describe('with a refresh limit of 3 per 5 seconds', () => {
    let t: TestApp;
    let origin: string;
    beforeAll(async () => {
      ({ t, origin } = await startService({ RATE_LIMIT_REFRESH: '3/5' }));
    });
    afterAll(async () => {
      await t?.close();
    });

    it('a restore answered 429 waits for Retry-After and restores the session, never showing “Sign in”', async () => {
      const { page, refreshes } = await newPage(390, 844);
      const user = await register(t, uniqueEmail('limited'));
      await signIn(page, origin, user.email);
      let limited: { retryAfter: string | null } | null = null;
      page.on('response', (response) => {
        if (response.url().endsWith('/api/v1/auth/refresh') && response.status() === 429)
          limited ??= { retryAfter: response.headers()['retry-after'] };
      });
      // Loads without the tab's kept token (as a fresh tab would be) rotate: the fourth is over the limit.
      for (let i = 0; i < 4 && !limited; i += 1) {
        await page.evaluate('sessionStorage.clear()');
        await page.reload();
        await page.locator('main h1, main p[role=status]').first().waitFor();
        if (!limited) await heading(page, 'Your profile').waitFor();
      }
      expect(limited).not.toBeNull();
      const retryAfter = Number(limited!.retryAfter);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(5);
      const limitedAt = Date.now();
      await page.getByText('Still connecting to your account…').waitFor();
      await page.screenshot({ path: join(SCREENSHOTS, 'console-390-restore-rate-limited.png'), fullPage: true });
      const spent = refreshes();
      await heading(page, 'Your profile').waitFor({ timeout: (retryAfter + 5) * 1000 });
      expect(Date.now() - limitedAt).toBeGreaterThanOrEqual(retryAfter * 1000 - 1500);
      expect(refreshes() - spent).toBe(1);
      expect(await headings(page)).toEqual(['Your profile']);
      expect(await page.getByText('Sign in', { exact: true }).count()).toBe(0);
    });
  });
});
