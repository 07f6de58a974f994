import { rmSync } from 'node:fs';
import { Browser, chromium } from 'playwright-core';
import { ADMIN_ENV, adminApi, superAdmin } from '../support/admin-flows';
import { buildConsole } from '../support/console-build';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { HookServer } from '../support/hook-server';
import { freePort } from '../support/sdk-app-page';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(120_000);

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The account console shows the words of the realm's hook when it refuses a sign-up or a sign-in. */
describe('the account console and the realm’s hooks (Chromium)', () => {
  let t: TestApp;
  let origin: string;
  let browser: Browser;
  let server: HookServer;
  let consoleDir: string;

  beforeAll(async () => {
    consoleDir = buildConsole();
    server = await HookServer.start();
    const port = await freePort();
    origin = `http://localhost:${port}`;
    t = await createTestApp({
      env: { ...ADMIN_ENV, PUBLIC_URL: origin, API_URL: origin, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
      config: (c) => (c.accountConsoleDir = consoleDir),
    });
    await t.app.listen(port, '127.0.0.1');
    const root = (await superAdmin(t)).accessToken;
    for (const name of ['before-registration', 'before-sign-in']) {
      expect((await adminApi(t, root, 'default').put(`/hooks/${name}`).send({ url: server.url })).status).toBe(200);
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--host-resolver-rules=MAP localhost 127.0.0.1'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await server?.close();
    if (consoleDir) rmSync(consoleDir, { recursive: true, force: true });
  });

  it('shows the hook’s message on sign-up and on sign-in', async () => {
    const known = await register(t, uniqueEmail('console-hook-known'));
    server.reply = (call) =>
      call.type === 'before-registration'
        ? { body: { decision: 'deny', message: 'Sign-ups are by invitation only.' } }
        : { body: { decision: 'deny', message: 'Your subscription has ended.' } };
    const context = await browser.newContext();
    context.setDefaultTimeout(5000);
    const page = await context.newPage();
    const alert = () => page.locator('[role=alert]:not([hidden])');

    await page.goto(`${origin}/account/`);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Full name').fill('Grace Hopper');
    await page.getByLabel('Email address').fill(uniqueEmail('console-hook-new'));
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await alert().waitFor();
    expect(await alert().textContent()).toBe('Sign-ups are by invitation only.');

    await page.goto(`${origin}/account/`);
    await page.getByLabel('Email address').fill(known.email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await alert().waitFor();
    expect(await alert().textContent()).toBe('Your subscription has ended.');
    await context.close();
  });
});
