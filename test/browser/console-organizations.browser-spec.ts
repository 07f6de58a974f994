import { rmSync } from 'node:fs';
import { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { ADMIN_ENV, adminApi, createUser, superAdmin } from '../support/admin-flows';
import { axeViolations, buildConsole } from '../support/console-build';
import { PASSWORD, uniqueEmail } from '../support/flows';
import { createOrganization } from '../support/organizations';
import { freePort } from '../support/sdk-app-page';
import { createTestApp, TestApp } from '../support/test-app';
import { lastQueuedMailText } from '../support/admin-flows';

jest.setTimeout(150_000);

/** The console's organizations: the switcher, an org-admin's members page, the invitation link's page — at 390 px. */
describe('the account console: organizations', () => {
  let t: TestApp;
  let origin: string;
  let browser: Browser;
  let consoleDir: string;

  beforeAll(async () => {
    consoleDir = buildConsole();
    const port = await freePort();
    origin = `http://localhost:${port}`;
    t = await createTestApp({
      env: { ...ADMIN_ENV, PUBLIC_URL: origin, API_URL: origin, WEBAUTHN_RP_ID: 'localhost' },
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

  async function noSeriousViolation(page: Page, state: string): Promise<void> {
    await page.locator('[aria-busy="true"]').first().waitFor({ state: 'detached' });
    const violations = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect({ state, violations }).toEqual({ state, violations: [] });
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect({ state, overflow }).toEqual({ state, overflow: 0 });
  }

  async function signIn(page: Page, email: string, landing: string): Promise<void> {
    await page
      .getByLabel('Email address')
      .fill(email, { timeout: 10_000 })
      .catch(async (e) => {
        throw new Error(`${page.url()} ${await page.locator('body').innerText()} ${e}`);
      });
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: landing }).waitFor();
  }

  it('an org-admin switches to the organization, invites; the invitee’s page asks before it accepts (axe, 390 px)', async () => {
    const root = await superAdmin(t);
    const orgId = await createOrganization(t, root.accessToken, 'default', { name: 'Acme', slug: 'acme-console' });
    const alice = await createUser(t, root.accessToken, 'default', { emailVerified: true });
    await adminApi(t, root.accessToken, 'default')
      .put(`/organizations/${orgId}/members/${alice.id}`)
      .send({ roles: ['org-admin'] });
    const bobEmail = uniqueEmail('bob');
    await createUser(t, root.accessToken, 'default', { email: bobEmail, emailVerified: true });

    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const page = await context.newPage();
      await page.goto(`${origin}/account/#organizations`);
      await signIn(page, alice.email, 'Your organizations');
      await page.getByRole('heading', { level: 2, name: 'Acme' }).waitFor();
      await noSeriousViolation(page, 'organizations');

      // The switcher: the session's tokens now carry the organization, and the header says so.
      await page.getByRole('button', { name: 'Work in this organization Acme' }).click();
      await page.getByText('Active', { exact: true }).waitFor();
      await page.locator('header .who', { hasText: 'acme-console' }).waitFor();

      // The members page of an org-admin: invite Bob.
      await page.getByRole('button', { name: 'Manage members of Acme' }).click();
      await page.getByRole('heading', { level: 2, name: 'Members of Acme' }).waitFor();
      await page.getByText('1 member').waitFor();
      await noSeriousViolation(page, 'members');
      const invite = page.getByRole('form', { name: 'Invite someone' });
      await invite.getByLabel('Email address').fill(bobEmail);
      await invite.getByRole('button', { name: 'Send invitation' }).click();
      await page.getByRole('list', { name: 'Pending invitations' }).getByText(bobEmail).waitFor();

      const link = /(http\S+\/account\/invitation\?token=\S+)/.exec(await lastQueuedMailText(t, bobEmail))![1];
      const bob = await browser.newContext({ viewport: { width: 390, height: 844 } });
      try {
        const bobPage = await bob.newPage();
        await bobPage.goto(link);
        await signIn(bobPage, bobEmail, 'Join an organization?');
        await noSeriousViolation(bobPage, 'invitation');
        // Opening the page accepted nothing.
        expect((await adminApi(t, root.accessToken, 'default').get(`/organizations/${orgId}`)).body.organization.memberCount).toBe(1);
        await bobPage.getByRole('button', { name: 'Accept the invitation' }).click();
        await bobPage.getByRole('heading', { level: 1, name: 'You joined Acme' }).waitFor();
        await noSeriousViolation(bobPage, 'invitation accepted');
      } finally {
        await bob.close();
      }
      expect((await adminApi(t, root.accessToken, 'default').get(`/organizations/${orgId}`)).body.organization.memberCount).toBe(2);
    } finally {
      await context.close();
    }
  });
});
