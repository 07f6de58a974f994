import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { axeViolations, buildConsole } from '../support/console-build';
import { login, PASSWORD, register, uniqueEmail } from '../support/flows';
import { freePort } from '../support/sdk-app-page';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(150_000);

const SCREENSHOTS = join(__dirname, '../../test-results/screenshots');

/**
 * The verification link's page, as a mail scanner that runs scripts and as the mailbox's owner
 * open it: loading it verifies nothing; only an answer does — "yes" verifies, "I didn't create
 * this account" takes it over for the owner.
 */
describe('the verification page asks before it sends anything (FED-06)', () => {
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
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (consoleDir) rmSync(consoleDir, { recursive: true, force: true });
  });

  async function verificationLink(email: string): Promise<string> {
    const rows: { text_body: string }[] = await t.dataSource.query(
      `SELECT text_body FROM email_outbox WHERE recipient = $1 ORDER BY created_at DESC, id DESC LIMIT 1`,
      [email],
    );
    const link = /https?:\/\/\S+\/verify-email\?token=[\w-]+/.exec(rows[0]?.text_body ?? '')?.[0];
    if (!link) throw new Error(`no verification link for ${email}`);
    return link;
  }

  const emailVerified = async (email: string) => (await login(t, email)).body.user.emailVerified as boolean;

  it('a script-running fetch of the page (loaded, scripts run, network idle, no click) verifies nothing', async () => {
    const squatter = await register(t, uniqueEmail('scanned'));
    const link = await verificationLink(squatter.email);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      const posts: string[] = [];
      page.on('request', (req) => {
        if (req.method() === 'POST') posts.push(new URL(req.url()).pathname);
      });
      await page.goto(link, { waitUntil: 'networkidle' });
      await page.getByRole('heading', { level: 1, name: 'Did you create this account?' }).waitFor();
      // What a scanner does after the load: wait, then leave.
      await page.waitForTimeout(1000);
      expect(posts.filter((path) => path.includes('verify-email'))).toEqual([]);
      expect(await emailVerified(squatter.email)).toBe(false);
      // The squatter's password still signs in: nothing was decided.
      expect((await login(t, squatter.email, PASSWORD)).status).toBe(200);
    } finally {
      await context.close();
    }
  });

  it('"I didn’t create this account" takes the account over: the squatter’s password stops working (axe: no violation)', async () => {
    const squatter = await register(t, uniqueEmail('disowned'));
    const link = await verificationLink(squatter.email);
    for (const width of [1280, 390]) {
      const context = await browser.newContext({ viewport: { width, height: 844 } });
      try {
        const page = await context.newPage();
        await page.goto(link);
        await page.getByRole('heading', { level: 1, name: 'Did you create this account?' }).waitFor();
        expect((await axeViolations(page)).map((v) => v.id)).toEqual([]);
        mkdirSync(SCREENSHOTS, { recursive: true });
        await page.screenshot({ path: join(SCREENSHOTS, `verify-email-ask-${width}.png`), fullPage: true });
        if (width === 390) {
          await page.getByRole('button', { name: 'I didn’t create this account' }).click();
          await page.getByRole('heading', { level: 1, name: 'The account is yours now' }).waitFor();
          expect((await axeViolations(page)).map((v) => v.id)).toEqual([]);
          await page.screenshot({ path: join(SCREENSHOTS, `verify-email-not-me-${width}.png`), fullPage: true });
        }
      } finally {
        await context.close();
      }
    }
    const after = await login(t, squatter.email, PASSWORD);
    expect([after.status, after.body.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
  });
});
