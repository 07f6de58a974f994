import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { CreateRealmUseCase } from '../../src/application/admin/create-realm.use-case';
import { storedEvents } from '../support/admin-flows';
import { axeViolations, buildConsole } from '../support/console-build';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { freePort } from '../support/sdk-app-page';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(150_000);

const SCREENSHOTS = join(__dirname, '../../test-results/screenshots');

/** The account console's profile page, the realm's name in its header, and the header's place. */
describe('the account console: profile, realm name, header', () => {
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
    });
    await t.app.listen(port, '127.0.0.1');
    await t.app.get(CreateRealmUseCase).execute({ id: 'acme', name: 'Acme Corporation', actorId: null, ip: null });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (consoleDir) rmSync(consoleDir, { recursive: true, force: true });
  });

  /** No serious or critical axe violation in the page; a screenshot of it for a person to look at. */
  async function serious(page: Page, state: string): Promise<void> {
    await page.locator('[aria-busy="true"]').first().waitFor({ state: 'detached' });
    const violations = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect({ state, violations }).toEqual({ state, violations: [] });
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({
      path: join(SCREENSHOTS, `profile-${page.viewportSize()?.width}-${state.replaceAll(' ', '-')}.png`),
      fullPage: true,
    });
  }

  const brand = (page: Page) => page.getByRole('banner').getByRole('link').first();
  const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name });

  async function signIn(page: Page, email: string): Promise<void> {
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await heading(page, 'Your profile').waitFor();
  }

  /** Horizontal centres of the header's brand and of the page's card. */
  async function centres(page: Page): Promise<{ brand: number; card: number }> {
    const of = async (selector: string) => {
      const box = (await page.locator(selector).first().boundingBox())!;
      return Math.round(box.x + box.width / 2);
    };
    return { brand: await of('header .brand'), card: await of('.card') };
  }

  it.each([
    ['desktop', 1280, 800],
    ['phone', 360, 740],
  ] as const)('at %s size: the brand names the realm and sits on the sign-in card’s axis', async (_name, width, height) => {
    const context: BrowserContext = await browser.newContext({ viewport: { width, height } });
    try {
      const page = await context.newPage();
      await page.goto(`${origin}/account/`);
      await heading(page, 'Sign in').waitFor();
      expect(await brand(page).textContent()).toBe('Account · Default');
      expect(await page.title()).toBe('Sign in — Default account');
      const { brand: b, card } = await centres(page);
      expect(Math.abs(b - card)).toBeLessThanOrEqual(1);
      await serious(page, 'sign-in');

      await page.goto(`${origin}/account/?realm=acme#sign-up`);
      await heading(page, 'Create an account').waitFor();
      expect(await brand(page).textContent()).toBe('Account · Acme Corporation');
      const again = await centres(page);
      expect(Math.abs(again.brand - again.card)).toBeLessThanOrEqual(1);

      await page.goto(`${origin}/verify-email?token=not-a-token&realm=acme`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      expect(await brand(page).textContent()).toBe('Account · Acme Corporation');
    } finally {
      await context.close();
    }
  });

  it('edits the name and the picture through PATCH /me; a refused picture is reported at its field (axe: no serious violation)', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      const user = await register(t, uniqueEmail('console-profile'));
      await page.goto(`${origin}/account/`);
      await signIn(page, user.email);
      expect(await brand(page).textContent()).toBe('Account · Default');
      // Signed in, the brand starts the header's row again, above the page's column.
      const header = (await page.locator('header').boundingBox())!;
      const left = (await page.locator('header .brand').boundingBox())!;
      expect(left.x - header.x).toBeLessThan(40);

      await page.getByText('Change your name or picture').click();
      const first = page.getByLabel('First name');
      expect(await first.inputValue()).toBe('Test');
      await first.fill('  Grace  ');
      await page.getByLabel('Last name').fill('Hopper');
      await page.getByLabel('Picture address').fill('http://insecure.example/grace.png');
      await serious(page, 'profile form');
      await page.getByRole('button', { name: 'Save' }).click();
      const picture = page.getByLabel('Picture address');
      await page.locator('[aria-invalid="true"]').waitFor();
      expect(await picture.getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('.field-error:not([hidden])').allTextContents()).toEqual(['Must be an https URL.']);
      await serious(page, 'profile form with an error');

      await picture.fill('https://images.example.com/grace.png');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'Your profile was saved.' }).waitFor();
      await page.getByRole('definition').filter({ hasText: 'Grace Hopper' }).waitFor();
      expect(await page.getByRole('link', { name: 'Open your picture' }).getAttribute('href')).toBe('https://images.example.com/grace.png');
      await serious(page, 'profile saved');

      const me = await t.dataSource.query(`SELECT first_name, last_name, avatar FROM users WHERE id = $1`, [user.id]);
      expect(me).toEqual([{ first_name: 'Grace', last_name: 'Hopper', avatar: 'https://images.example.com/grace.png' }]);
      const events = await storedEvents(t, 'default', { userId: user.id, type: 'user.profile_updated' });
      expect(events.map((e) => e.details)).toEqual([{ fields: ['firstName', 'lastName', 'avatar'] }]);

      await page.getByRole('navigation').getByRole('link', { name: 'Sessions' }).click();
      await heading(page, 'Where you are signed in').waitFor();
      expect(await brand(page).textContent()).toBe('Account · Default');
    } finally {
      await context.close();
    }
  });
});
