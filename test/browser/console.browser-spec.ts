import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { buildConsole, watchProblems as watch } from '../support/console-build';
import { PASSWORD, uniqueEmail } from '../support/flows';
import { midStep, nextStep, oathtoolTotp } from '../support/mfa';
import { freePort } from '../support/sdk-app-page';
import { linkToken, SmtpSink } from '../support/smtp-sink';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(150_000);

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = join(__dirname, '../..');
const SCREENSHOTS = join(ROOT, 'test-results/screenshots');
const AXE = readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
const NEW_PASSWORD = 'a different horse, battery and staple';
const RESET_PASSWORD = 'yet another horse with its staple';

type Violation = { id: string; impact: string | null; help: string; nodes: { target: string[] }[] };

describe('the account console in Chromium', () => {
  let t: TestApp;
  let origin: string;
  let sink: SmtpSink;
  let browser: Browser;
  let consoleDir: string;

  beforeAll(async () => {
    consoleDir = buildConsole();
    sink = await SmtpSink.start();
    const port = await freePort();
    origin = `http://localhost:${port}`;
    t = await createTestApp({
      env: {
        PUBLIC_URL: origin,
        API_URL: origin,
        WEBAUTHN_RP_ID: 'localhost',
        SMTP_URL: sink.url,
        MAIL_FROM: 'Identity <no-reply@identity.example>',
        OUTBOX_POLL_INTERVAL_MS: '50',
      },
      config: (c) => (c.accountConsoleDir = consoleDir),
    });
    await t.app.listen(port, '127.0.0.1');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--host-resolver-rules=MAP localhost 127.0.0.1',
      ],
    });
    // This file's screenshots of an earlier run go; those of the other browser files (which may be
    // running beside this one) stay.
    mkdirSync(SCREENSHOTS, { recursive: true });
    for (const file of readdirSync(SCREENSHOTS)) if (/^(desktop|phone)-\d\d-/.test(file)) rmSync(join(SCREENSHOTS, file));
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await sink?.stop();
    if (consoleDir) rmSync(consoleDir, { recursive: true, force: true });
  });

  /** axe-core in the page (evaluated over the DevTools protocol: the page's CSP refuses inline scripts, rightly). */
  async function axe(page: Page): Promise<Violation[]> {
    if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE);
    return page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) =>
      ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`);
  }

  describe.each([
    ['desktop', 1280, 800],
    ['phone', 360, 740],
  ] as const)('at %s size (%i×%i)', (name, width, height) => {
    let context: BrowserContext;
    let page: Page;
    let problems: string[];
    let shot = 0;

    beforeAll(async () => {
      context = await browser.newContext({ viewport: { width, height }, acceptDownloads: true });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
      context.setDefaultTimeout(5000);
      // The browser's clock agrees with the service's (whose clock the tests move to fresh TOTP
      // steps), as it would with NTP: DPoP proofs carry the time.
      await context.clock.install({ time: t.clock.now() });
      problems = await watch(context);
      page = await context.newPage();
    });
    afterAll(async () => {
      await context?.close();
    });
    afterEach(() => {
      expect(problems).toEqual([]);
    });

    const heading = (text: string | RegExp) => page.getByRole('heading', { level: 1, name: text });
    const notice = () => page.getByRole('status');
    const alert = () => page.locator('[role=alert]:not([hidden])');

    /**
     * A page or state as the user sees it: no serious or critical axe violation, nothing wider than
     * the window, and a screenshot.
     */
    async function check(state: string, on: Page = page): Promise<void> {
      await on.locator('[aria-busy="true"]').first().waitFor({ state: 'detached' });
      const violations = (await axe(on)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect({ state, violations }).toEqual({ state, violations: [] });
      const overflow = await on.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect({ state, overflow }).toEqual({ state, overflow: 0 });
      shot += 1;
      await on.screenshot({ path: join(SCREENSHOTS, `${name}-${String(shot).padStart(2, '0')}-${state}.png`), fullPage: true });
      expect(problems).toEqual([]);
    }

    async function signInWithPassword(email: string, password: string, on: Page = page): Promise<void> {
      await on.getByLabel('Email address').fill(email);
      await on.getByLabel('Password', { exact: true }).fill(password);
      await on.getByRole('button', { name: 'Sign in', exact: true }).click();
    }

    async function signOut(): Promise<void> {
      await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
      await heading('Sign in').waitFor();
      expect(await notice().textContent()).toBe('You have signed out.');
    }

    const totp = (secret: string) => oathtoolTotp(secret, t.clock.now());

    /** Moves the service's clock (to a fresh TOTP step) and the browsers' with it. */
    async function advance(move: (app: TestApp) => void, ...contexts: BrowserContext[]): Promise<void> {
      move(t);
      for (const c of [context, ...contexts]) await c.clock.setSystemTime(t.clock.now());
    }

    const email = uniqueEmail(`console-${name}`);
    let secret = '';
    let recoveryCodes: string[] = [];

    it('signs up: required fields and the password rules are reported at their fields', async () => {
      await page.goto(`${origin}/account/`);
      await heading('Sign in').waitFor();
      await check('sign-in');

      await page.getByRole('link', { name: 'Create an account' }).click();
      await heading('Create an account').waitFor();
      await page.getByRole('button', { name: 'Create account' }).click();
      await alert().waitFor();
      expect(await alert().textContent()).toBe('Please fill in: Full name, Email address, Password.');
      expect(await page.getByLabel('Full name').getAttribute('aria-invalid')).toBe('true');
      await check('sign-up-missing');

      await page.getByLabel('Full name').fill('Grace Hopper');
      await page.getByLabel('Email address').fill(email);
      await page.getByLabel('Password').fill('password');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.waitForSelector('input[name=password][aria-invalid=true]');
      expect(await alert().textContent()).toBe('Please correct the fields marked below.');
      await check('sign-up-rejected');

      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Create account' }).click();
      await heading('Check your email').waitFor();
      await check('sign-up-done');
    });

    it('signs in with the keyboard alone (Tab, Enter), sends the verification again, and the emailed link verifies', async () => {
      await page.goto(`${origin}/account/`);
      await heading('Sign in').waitFor();
      // From the top of the page: the brand link, then the email field.
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.name')).toBe('email');
      await page.keyboard.type(email);
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await heading('Your profile').waitFor();
      // The new view's heading holds the focus, for screen readers.
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Your profile');
      await page.getByText('Not verified').waitFor();
      await check('profile-unverified');

      await page.getByRole('button', { name: 'Send the link again' }).click();
      await page.getByText(`A new link is on its way to ${email}.`).waitFor();
      const mails = await sink.waitFor(email, 2);
      const token = linkToken(mails[1], '/verify-email');
      const link = /https?:\/\/\S+\/verify-email\?token=[\w-]+/.exec(mails[1].text)![0];
      expect(link).toBe(`${origin}/verify-email?token=${token}`);

      // Opening the link only asks; the answer verifies.
      await page.goto(link);
      await heading('Did you create this account?').waitFor();
      await check('verify-email-ask');
      await page.getByRole('button', { name: 'Yes, I created this account' }).click();
      await heading('Email address verified').waitFor();
      await check('verify-email');
      // The same link again: used.
      await page.reload();
      await page.getByRole('button', { name: 'Yes, I created this account' }).click();
      await alert().filter({ hasText: 'This link is not valid any more' }).waitFor();
      expect(await alert().textContent()).toBe('This link is not valid any more: it was used already or it has expired.');
      await check('verify-email-used');

      await page.getByRole('link', { name: 'Go to your account' }).click();
      await heading('Your profile').waitFor();
      await page.getByText('Verified', { exact: true }).waitFor();
      await check('profile');
    });

    it('sets up TOTP from the QR code page, shows the recovery codes once, copies and downloads them', async () => {
      await page.getByRole('navigation').getByRole('link', { name: 'Security' }).click();
      await heading('Security').waitFor();
      expect(await page.getByRole('link', { name: 'Security' }).getAttribute('aria-current')).toBe('page');
      await check('security');

      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      const qr = page.getByRole('img', { name: 'QR code of the key for your authenticator app' });
      await qr.waitFor();
      expect(await qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
      expect(await qr.evaluate((img) => (img as unknown as { complete: boolean; naturalWidth: number }).naturalWidth > 100)).toBe(true);
      secret = (await page.locator('code.secret').textContent())!.replace(/\s+/g, '');
      expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
      await check('totp-setup');

      await page.getByLabel('6-digit code from the app').fill('000000');
      await page.getByRole('button', { name: 'Turn on' }).click();
      await alert().waitFor();
      await check('totp-setup-wrong-code');

      await advance(midStep);
      await page.getByLabel('6-digit code from the app').fill(totp(secret));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
      await advance(nextStep);
      recoveryCodes = await page.locator('ol.codes code').allTextContents();
      expect(recoveryCodes).toHaveLength(10);
      expect(new Set(recoveryCodes).size).toBe(10);
      await check('recovery-codes');

      await page.getByRole('button', { name: 'Copy codes' }).click();
      await page.getByText('Copied 10 recovery codes.').waitFor();
      const copied = await page.evaluate<string>('navigator.clipboard.readText()');
      for (const code of recoveryCodes) expect(copied).toContain(code);

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download codes' }).click()]);
      expect(download.suggestedFilename()).toBe('recovery-codes-default.txt');
      const saved = readFileSync((await download.path())!, 'utf8');
      expect(saved.split('\n').filter((line) => recoveryCodes.includes(line))).toEqual(recoveryCodes);

      await page.getByRole('button', { name: 'I have saved them' }).click();
      await page.getByText('Sign-ins ask for a code from your authenticator app.').waitFor();
      await page.getByText('You have 10 unused recovery codes.').waitFor();
      // Shown once: a reload does not show them again.
      await page.reload();
      await heading('Security').waitFor();
      await page.getByText('You have 10 unused recovery codes.').waitFor();
      expect(await page.locator('ol.codes').count()).toBe(0);
    });

    it('signs out, then in with the TOTP step (a wrong code is announced)', async () => {
      await signOut();
      await check('signed-out');
      await signInWithPassword(email, PASSWORD);
      await heading('Two-step verification').waitFor();
      await check('mfa-totp');
      await page.getByLabel('Code from your authenticator app').fill('123456');
      await page.getByRole('button', { name: 'Verify' }).click();
      await alert().waitFor();
      expect(await alert().textContent()).toBe('That code is not correct, or it was already used.');
      await check('mfa-totp-wrong');
      await page.getByLabel('Code from your authenticator app').fill(totp(secret));
      await page.getByRole('button', { name: 'Verify' }).click();
      await heading('Your profile').waitFor();
      await advance(nextStep);
    });

    it('signs in with a recovery code, once: the same code again is refused', async () => {
      await signOut();
      await signInWithPassword(email, PASSWORD);
      await heading('Two-step verification').waitFor();
      await page.getByRole('button', { name: 'Use a recovery code' }).click();
      await page.getByRole('textbox', { name: 'Recovery code' }).waitFor();
      expect(await page.evaluate('document.activeElement.name')).toBe('code');
      await check('mfa-recovery');
      await page.getByRole('textbox', { name: 'Recovery code' }).fill(recoveryCodes[0]);
      await page.getByRole('button', { name: 'Verify' }).click();
      await heading('Your profile').waitFor();
      await page.getByRole('navigation').getByRole('link', { name: 'Security' }).click();
      await page.getByText('You have 9 unused recovery codes.').waitFor();

      await signOut();
      await signInWithPassword(email, PASSWORD);
      await page.getByRole('button', { name: 'Use a recovery code' }).click();
      await page.getByRole('textbox', { name: 'Recovery code' }).fill(recoveryCodes[0]);
      await page.getByRole('button', { name: 'Verify' }).click();
      await alert().waitFor();
      expect(await alert().textContent()).toBe('That code is not correct, or it was already used.');
      await page.getByRole('button', { name: 'Use your authenticator app' }).click();
      await page.getByLabel('Code from your authenticator app').fill(totp(secret));
      await page.getByRole('button', { name: 'Verify' }).click();
      await heading('Your profile').waitFor();
      await advance(nextStep);
    });

    it('adds a named security key (CDP virtual authenticator) and signs in with it', async () => {
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: { protocol: 'ctap2', transport: 'usb', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
      });
      await page.getByRole('navigation').getByRole('link', { name: 'Security' }).click();
      await page.getByLabel('Name of the key').fill('USB key');
      await page.getByRole('button', { name: 'Add a security key', exact: true }).click();
      await page.getByText('Added “USB key”.').waitFor();
      await page.getByRole('list', { name: 'Your security keys' }).getByRole('heading', { name: 'USB key' }).waitFor();
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials).toHaveLength(1);
      await check('security-key-added');

      await signOut();
      await signInWithPassword(email, PASSWORD);
      await page.getByRole('button', { name: 'Use a security key or passkey' }).click();
      await check('mfa-security-key');
      await page.getByRole('button', { name: 'Use security key or passkey' }).click();
      await heading('Your profile').waitFor();
      const { credentials: after } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(after[0].signCount).toBeGreaterThan(credentials[0].signCount);
      await page.getByRole('navigation').getByRole('link', { name: 'Security' }).click();
      await page.getByText('last used just now').waitFor();
    });

    it('lists the sessions (this device, a flagged one marked) and signs the others out', async () => {
      // A second browser signs in; a script signs in too.
      const other = await context.browser()!.newContext({ viewport: { width, height } });
      await other.clock.install({ time: t.clock.now() });
      const otherProblems = await watch(other);
      const otherPage = await other.newPage();
      await otherPage.goto(`${origin}/account/`);
      await signInWithPassword(email, PASSWORD, otherPage);
      await otherPage.getByLabel('Code from your authenticator app').fill(totp(secret));
      await otherPage.getByRole('button', { name: 'Verify' }).click();
      await otherPage.getByRole('heading', { level: 1, name: 'Your profile' }).waitFor();
      await advance(nextStep, other);
      const [{ id: userId }] = await t.dataSource.query(`SELECT id FROM users WHERE email = $1`, [email]);
      // Sessions opened in the console are bound to a key of their browser (DPoP), one key per browser.
      const bound: { jkt: string | null }[] = await t.dataSource.query(
        `SELECT dpop_jkt AS jkt FROM sessions WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at`,
        [userId],
      );
      expect(bound).toHaveLength(2);
      expect(bound.every(({ jkt }) => jkt && /^[\w-]{43}$/.test(jkt))).toBe(true);
      expect(bound[0].jkt).not.toBe(bound[1].jkt);
      const [{ id: otherSession }] = await t.dataSource.query(
        `SELECT id FROM sessions WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 1`,
        [userId],
      );
      // The other browser's session was flagged by the hijack detection.
      await t.dataSource.query(
        `UPDATE sessions SET status = 'flagged', flag_reason = 'fingerprint_mismatch', flag_score = 0.41, flagged_at = $2 WHERE id = $1`,
        [otherSession, t.clock.now()],
      );

      await page.getByRole('navigation').getByRole('link', { name: 'Sessions' }).click();
      await heading('Where you are signed in').waitFor();
      const items = page.getByRole('list', { name: 'Sessions' }).getByRole('listitem');
      await page.locator('.session').nth(1).waitFor();
      await items.first().getByText('This device').waitFor();
      expect(await items.nth(1).getByText('Flagged', { exact: true }).count()).toBe(1);
      expect(await items.nth(1).textContent()).toContain('Flagged just now: the device no longer looked like the one that signed in.');
      expect(await items.nth(1).textContent()).toMatch(/Last active.*just now/);
      expect(await items.first().getByRole('button').count()).toBe(0);
      await check('sessions');

      await items
        .nth(1)
        .getByRole('button', { name: /^Sign out/ })
        .click();
      await page.getByText(/^Signed out /).waitFor();
      await page.locator('.session').nth(1).waitFor({ state: 'detached' });
      expect(await page.locator('.session').count()).toBe(1);
      const [{ revoked }] = await t.dataSource.query(`SELECT revoked_at IS NOT NULL AS revoked FROM sessions WHERE id = $1`, [
        otherSession,
      ]);
      expect(revoked).toBe(true);
      await otherPage.reload();
      await otherPage.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      await other.close();
      expect(otherProblems).toEqual([]);

      const script = await t.api().post('/api/v1/auth/login').send({ email, password: PASSWORD });
      expect(script.body.requiresMfa).toBe(true);
      const verified = await t
        .api()
        .post('/api/v1/auth/mfa/verify')
        .send({ mfaToken: script.body.mfaToken, type: 'totp', code: totp(secret) });
      expect(verified.status).toBe(200);
      await advance(nextStep);
      await page.reload();
      await heading('Where you are signed in').waitFor();
      await page.locator('.session').nth(1).waitFor();
      await page.getByRole('button', { name: 'Sign out all other sessions' }).click();
      await page.getByText('Signed out 1 other session.').waitFor();
      await page.locator('.session').nth(1).waitFor({ state: 'detached' });
      expect(await page.locator('.session').count()).toBe(1);
      await check('sessions-alone');
    });

    it('changes the password, gets new recovery codes, removes the key and turns TOTP off', async () => {
      await page.getByRole('navigation').getByRole('link', { name: 'Security' }).click();
      await heading('Security').waitFor();
      await page.getByLabel('Current password').fill('not my password');
      await page.getByLabel('New password').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Change password' }).click();
      await alert().waitFor();
      expect(await alert().textContent()).toBe('The email address or password is not correct.');
      await page.getByLabel('Current password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByText('Your password was changed. Your other sessions were signed out.').waitFor();
      await check('password-changed');

      await page.getByText('Get new recovery codes').click();
      await page.getByRole('form', { name: 'Get new recovery codes' }).getByLabel('Your password').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Get new codes' }).click();
      await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
      const fresh = await page.locator('ol.codes code').allTextContents();
      expect(fresh).toHaveLength(10);
      expect(fresh.filter((code) => recoveryCodes.includes(code))).toEqual([]);
      await page.getByRole('button', { name: 'I have saved them' }).click();
      await page.getByText('You have 10 unused recovery codes.').waitFor();

      await page.getByText('Remove USB key').click();
      await page.getByRole('form', { name: 'Remove USB key' }).getByLabel('Your password').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Remove this key' }).click();
      await page.getByText('Removed “USB key”.').waitFor();
      await page.getByText('No security key yet.').waitFor();

      await page.getByText('Turn off the authenticator app').click();
      await page.getByRole('form', { name: 'Turn off the authenticator app' }).getByLabel('Your password').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Turn off' }).click();
      await page.getByText('The authenticator app is off: two-step verification is off.').waitFor();
      await page.getByRole('button', { name: 'Set up an authenticator app' }).waitFor();
      await check('security-off');
    });

    it('resets a forgotten password from the emailed link', async () => {
      await signOut();
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await heading('Reset your password').waitFor();
      await check('forgot-password');
      await page.getByLabel('Email address').fill(email);
      await page.getByRole('button', { name: 'Email me a link' }).click();
      await heading('Check your email').waitFor();
      await check('forgot-password-sent');

      const mails = await sink.waitFor(email, 3);
      const mail = mails.find((m) => m.text.includes('/reset-password?token='))!;
      const link = /https?:\/\/\S+\/reset-password\?token=[\w-]+/.exec(mail.text)![0];
      expect(link.startsWith(`${origin}/reset-password?token=`)).toBe(true);
      await page.goto(link);
      await heading('Choose a new password').waitFor();
      await check('reset-password');
      await page.getByLabel('New password', { exact: true }).fill(RESET_PASSWORD);
      await page.getByLabel('Repeat the new password').fill('something else entirely');
      await page.getByRole('button', { name: 'Set new password' }).click();
      await alert().waitFor();
      expect(await alert().textContent()).toBe('The two passwords differ.');
      await check('reset-password-mismatch');
      await page.getByLabel('Repeat the new password').fill(RESET_PASSWORD);
      await page.getByRole('button', { name: 'Set new password' }).click();
      await heading('Password changed').waitFor();
      await check('reset-password-done');

      await page.getByRole('link', { name: 'Sign in' }).click();
      await heading('Sign in').waitFor();
      await signInWithPassword(email, NEW_PASSWORD);
      await alert().waitFor();
      expect(await alert().textContent()).toBe('The email address or password is not correct.');
      await check('sign-in-wrong-password');
      await signInWithPassword(email, RESET_PASSWORD);
      await heading('Your profile').waitFor();
    });
  });

  it('the CSP holds: inline scripts and styles in the page are refused, and so is a script added through a DOM sink', async () => {
    const context = await browser.newContext();
    const problems = await watch(context);
    try {
      const page = await context.newPage();
      // The page as served, headers included, with an inline script and style slipped in.
      await page.route(`${origin}/account/`, async (route) => {
        const response = await route.fetch();
        const body = (await response.text()).replace(
          '</head>',
          '<script>window.injected = true;</script><style>body { color: red }</style></head>',
        );
        await route.fulfill({ response, body });
      });
      await page.goto(`${origin}/account/`);
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      expect(await page.evaluate('window.injected')).toBeUndefined();
      expect(problems.filter((p) => p.startsWith('CSP violation')).map((p) => p.split(' ')[2])).toEqual([
        'script-src-elem',
        'style-src-elem',
      ]);

      problems.length = 0;
      await page.addScriptTag({ content: 'window.injected = true;' }).catch(() => undefined);
      expect(await page.evaluate('window.injected')).toBeUndefined();
      expect(problems).toContainEqual(expect.stringMatching(/^CSP violation: require-trusted-types-for /));
    } finally {
      await context.close();
    }
  });
});
