import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { ADMIN_ENV, adminApi, superAdmin } from '../support/admin-flows';
import { launchChromium } from '../support/chromium';
import { axeViolations, buildConsole, watchProblems } from '../support/console-build';
import { parseSignInMail, SignInMail, wrongCode } from '../support/email-codes';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { decodeJwt } from '../support/mfa';
import { AppPageServer, buildClientBundle, freePort, inPage, Settled, startAppPage } from '../support/sdk-app-page';
import { SmtpSink } from '../support/smtp-sink';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(150_000);

const SCREENSHOTS = join(__dirname, '../../test-results/screenshots');
const SIZES = [
  ['desktop', 1280, 800],
  ['phone', 390, 844],
] as const;
const SIGN_IN_SUBJECT = 'Your sign-in code';
const PASSKEY_AMR = ['hwk', 'mfa'];

/**
 * Runs in every page before its own scripts: wraps `navigator.credentials.get` to record each
 * WebAuthn request — its mediation, how many other requests were still pending (started, neither
 * settled nor aborted) when it began, whether its signal aborted it and how it settled — and a log
 * of these events in order (`start#0 conditional`, `abort#0`, `rejected#0 AbortError`, …).
 */
const RECORD_WEBAUTHN = `(() => {
  const container = navigator.credentials;
  if (!container) return;
  const calls = [];
  const log = [];
  window.webauthn = { calls, log };
  const get = container.get.bind(container);
  container.get = (options) => {
    const index = calls.length;
    const call = {
      mediation: (options && options.mediation) || 'optional',
      pendingAtStart: calls.filter((c) => c.state === 'pending' && !c.aborted).length,
      aborted: false,
      state: 'pending',
      error: null,
    };
    calls.push(call);
    log.push('start#' + index + ' ' + call.mediation);
    if (options && options.signal) {
      // An abort after the request settled changes nothing: it is not recorded.
      options.signal.addEventListener('abort', () => {
        if (call.state !== 'pending') return;
        call.aborted = true;
        log.push('abort#' + index);
      });
    }
    return get(options).then(
      (credential) => {
        call.state = 'resolved';
        log.push('resolved#' + index);
        return credential;
      },
      (error) => {
        call.state = 'rejected';
        call.error = error && error.name;
        log.push('rejected#' + index + ' ' + call.error);
        throw error;
      },
    );
  };
})();`;

type WebauthnCall = { mediation: string; pendingAtStart: number; aborted: boolean; state: string; error: string | null };

describe('passwordless sign-in in Chromium: passkeys (CDP virtual authenticator) and emailed codes (SMTP sink)', () => {
  let t: TestApp;
  /** The service, its account console included. */
  let origin: string;
  /** A team's app on another origin, using the client SDK. */
  let app: AppPageServer;
  let bundle: string;
  let consoleDir: string;
  let sink: SmtpSink;
  let browser: Browser;
  const open: { context: BrowserContext; problems: string[] }[] = [];

  beforeAll(async () => {
    consoleDir = buildConsole();
    bundle = buildClientBundle();
    app = await startAppPage(bundle);
    sink = await SmtpSink.start();
    const port = await freePort();
    origin = `http://localhost:${port}`;
    t = await createTestApp({
      env: {
        ...ADMIN_ENV,
        PUBLIC_URL: origin,
        API_URL: origin,
        CORS_ORIGINS: app.origin,
        WEBAUTHN_RP_ID: 'localhost',
        WEBAUTHN_ORIGINS: `${origin},${app.origin}`,
        SMTP_URL: sink.url,
        MAIL_FROM: 'Identity <no-reply@identity.example>',
        OUTBOX_POLL_INTERVAL_MS: '50',
      },
      config: (c) => (c.accountConsoleDir = consoleDir),
    });
    await t.app.listen(port, '127.0.0.1');
    // The app's page may receive the emailed sign-in links.
    const root = await superAdmin(t);
    const patched = await adminApi(t, root.accessToken, 'default')
      .patch('/realm')
      .send({ settings: { allowedReturnUrls: [`${app.origin}/`] } });
    expect(patched.status).toBe(200);
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await sink?.stop();
    await app?.close();
    for (const dir of [consoleDir, bundle]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    const problems = open.flatMap((o) => o.problems);
    for (const { context } of open.splice(0)) await context.close();
    expect(problems).toEqual([]);
  });

  /** A fresh browser (context) at desktop size whose pages record their WebAuthn requests. */
  async function newBrowser(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: SIZES[0][1], height: SIZES[0][2] } });
    context.setDefaultTimeout(10_000);
    const problems = await watchProblems(context);
    open.push({ context, problems });
    await context.addInitScript({ content: RECORD_WEBAUTHN });
    return { context, page: await context.newPage() };
  }

  /** A virtual CTAP2 authenticator for the page: resident keys and user verification. */
  async function authenticator(context: BrowserContext, page: Page, transport: 'internal' | 'usb' = 'internal') {
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport, hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    return {
      credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials,
      /** Off: requests wait for a touch that never comes (as a user who has not picked a passkey yet). */
      presence: (enabled: boolean) => cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled }),
    };
  }

  /**
   * Waits until `expression` is true in the page. It is polled over the DevTools protocol:
   * `waitForFunction` polls with an eval that the console's CSP refuses, rightly.
   */
  async function until(page: Page, expression: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await page.evaluate<boolean>(expression))) {
      if (Date.now() > deadline) throw new Error(`not true after ${timeoutMs} ms: ${expression}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const calls = (page: Page) => page.evaluate<WebauthnCall[]>('window.webauthn.calls');
  const log = (page: Page) => page.evaluate<string[]>('window.webauthn.log');
  const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name });
  const alert = (page: Page) => page.locator('[role=alert]:not([hidden])');

  /**
   * A new page or state, at desktop and at phone size: axe-core finds nothing, nothing is wider
   * than the window, and a screenshot is kept.
   */
  async function check(page: Page, state: string): Promise<void> {
    await page.locator('[aria-busy="true"]').first().waitFor({ state: 'detached' });
    for (const [size, width, height] of SIZES) {
      await page.setViewportSize({ width, height });
      const violations = await axeViolations(page);
      expect({ state, size, violations }).toEqual({ state, size, violations: [] });
      const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect({ state, size, overflow }).toEqual({ state, size, overflow: 0 });
      await page.screenshot({ path: join(SCREENSHOTS, `passwordless-${size}-${state}.png`), fullPage: true });
    }
    await page.setViewportSize({ width: SIZES[0][1], height: SIZES[0][2] });
  }

  /** The `count`-th sign-in email to `email`, as the SMTP server received it (other mail to the address is left aside). */
  async function signInMail(email: string, count = 1): Promise<SignInMail> {
    const mails = await sink.waitFor(email, count, 10_000, SIGN_IN_SUBJECT);
    return parseSignInMail(mails[count - 1].text);
  }

  /** The sessions of the account at `email`, oldest first: what signed them in and whether they ended. */
  const sessionsOf = (email: string): Promise<{ amr: string[]; revoked: boolean }[]> =>
    t.dataSource.query(
      `SELECT s.amr, s.revoked_at IS NOT NULL AS revoked FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE u.email = $1 ORDER BY s.created_at`,
      [email],
    );
  const passkeysOf = (email: string): Promise<{ name: string; passkey: boolean }[]> =>
    t.dataSource.query(
      `SELECT c.name, c.passkey FROM webauthn_credentials c JOIN users u ON u.id = c.user_id WHERE u.email = $1 ORDER BY c.created_at`,
      [email],
    );

  async function askForCode(page: Page, email: string): Promise<void> {
    await page.getByLabel('Email address').fill(email);
    await page.getByRole('button', { name: 'Email me a code' }).click();
    await page.getByRole('heading', { level: 2, name: 'Check your email' }).waitFor();
  }

  async function signOut(page: Page): Promise<void> {
    await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  }

  it('PWL console: signs up with an emailed code, creates a passkey, then signs in with it through autofill and through the button', async () => {
    const { context, page } = await newBrowser();
    const key = await authenticator(context, page);
    const email = uniqueEmail('pwl-console');

    await page.goto(`${origin}/account/`);
    await heading(page, 'Sign in').waitFor();
    expect(await page.getByLabel('Email address').getAttribute('autocomplete')).toBe('username webauthn');
    await check(page, 'sign-in');

    // Sign up with a code: the address, then the 8 digits from the email (one wrong try first).
    await page.getByRole('link', { name: 'Email me a sign-in code' }).click();
    await heading(page, 'Sign in with a code').waitFor();
    await check(page, 'email-code');
    await askForCode(page, email);
    const mail = await signInMail(email);
    expect(mail.link).toBe(`${origin}/account/?email_token=${mail.token}`);
    await check(page, 'email-code-sent');
    await page.getByLabel('Code from the email').fill(wrongCode(mail.code));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await alert(page).waitFor();
    expect(await alert(page).textContent()).toBe('That code is not correct, or it has expired. Ask for a new one if needed.');
    await check(page, 'email-code-wrong');
    await page.getByLabel('Code from the email').fill(`${mail.code.slice(0, 4)} ${mail.code.slice(4)}`);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await heading(page, 'Your profile').waitFor();
    const [account] = await t.dataSource.query(
      `SELECT email_verified AS verified, password_hash IS NULL AS passwordless FROM users WHERE email = $1`,
      [email],
    );
    expect(account).toEqual({ verified: true, passwordless: true });
    expect(await sessionsOf(email)).toEqual([{ amr: ['email'], revoked: false }]);

    // The security page of an account without a password: set one, or create a passkey.
    await page.getByRole('navigation').getByRole('link', { name: 'Security' }).click();
    await heading(page, 'Security').waitFor();
    await page.getByRole('form', { name: 'Set a password' }).waitFor();
    await page.getByText('No passkey yet.').waitFor();
    await check(page, 'security-without-password');
    await page.getByRole('button', { name: 'Create a passkey' }).click();
    // The first second factor comes with recovery codes, shown once.
    await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
    expect(await page.locator('ol.codes code').count()).toBe(10);
    await check(page, 'passkey-recovery-codes');
    await page.getByRole('button', { name: 'I have saved them' }).click();
    const list = page.getByRole('list', { name: 'Your passkeys' });
    await list.getByRole('heading', { name: 'Passkey' }).waitFor();
    await check(page, 'security-passkey');
    const [credential] = await key.credentials();
    expect(credential.isResidentCredential).toBe(true);
    expect(await passkeysOf(email)).toEqual([{ name: 'Passkey', passkey: true }]);

    // Signed out, the sign-in page asks for a passkey with conditional mediation (the autofill);
    // the virtual authenticator answers at once, as a user picking the passkey would.
    const before = (await calls(page)).length;
    await signOut(page);
    await until(page, `window.webauthn.calls.slice(${before}).some((c) => c.state === 'resolved')`);
    await heading(page, 'Your profile').waitFor();
    await page.getByRole('banner').getByText(email).waitFor();
    expect((await calls(page)).slice(before)).toEqual([
      { mediation: 'conditional', pendingAtStart: 0, aborted: false, state: 'resolved', error: null },
    ]);
    expect(await sessionsOf(email)).toEqual([
      { amr: ['email'], revoked: true },
      { amr: PASSKEY_AMR, revoked: false },
    ]);
    expect((await key.credentials())[0].signCount).toBeGreaterThan(credential.signCount);

    // The button while the autofill request waits (no passkey picked): it aborts that request
    // before it asks, so only one is ever pending, and it signs in.
    await key.presence(false);
    const waiting = (await calls(page)).length;
    await signOut(page);
    await heading(page, 'Sign in').waitFor();
    await until(page, `window.webauthn.calls.length > ${waiting}`);
    await key.presence(true);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await heading(page, 'Your profile').waitFor();
    expect((await calls(page)).slice(waiting)).toEqual([
      { mediation: 'conditional', pendingAtStart: 0, aborted: true, state: 'rejected', error: 'AbortError' },
      { mediation: 'optional', pendingAtStart: 0, aborted: false, state: 'resolved', error: null },
    ]);
    const events = await log(page);
    expect(events.indexOf(`abort#${waiting}`)).toBeGreaterThan(-1);
    expect(events.indexOf(`abort#${waiting}`)).toBeLessThan(events.indexOf(`start#${waiting + 1} optional`));
    expect((await sessionsOf(email)).map((s) => s.amr)).toEqual([['email'], PASSKEY_AMR, PASSKEY_AMR]);
  });

  it('PWL SDK: an app on another origin signs up with an emailed code, creates a passkey, signs in with it through autofill and a button, and completes an emailed link (then the passkey as second step)', async () => {
    const { context, page } = await newBrowser();
    const key = await authenticator(context, page);
    const email = uniqueEmail('pwl-sdk');
    const accessToken = async () => decodeJwt((await inPage<string>(page, 'return app.client.getAccessToken()'))!);
    await page.goto(`${app.origin}/?api=${encodeURIComponent(origin)}`);
    await page.waitForFunction('window.app !== undefined');

    const sent = await inPage<Settled<void>>(page, `return app.settle(app.client.emailCode.send(${JSON.stringify(email)}))`);
    expect(sent.error).toBeUndefined();
    const mail = await signInMail(email);
    expect(mail.link).toBeNull();
    const signedUp = await inPage<Settled<unknown>>(
      page,
      `return app.settle(app.client.emailCode.verify(${JSON.stringify(email)}, ${JSON.stringify(mail.code)}))`,
    );
    expect(signedUp.value).toMatchObject({ kind: 'signed-in', user: { email, emailVerified: true } });
    expect(await accessToken()).toMatchObject({ amr: ['email'] });

    const created = await inPage<Settled<{ recoveryCodes: string[] }>>(
      page,
      `return app.settle(app.client.passkeys.register({ name: 'App laptop' }))`,
    );
    expect(created.value).toMatchObject({ credential: { name: 'App laptop' }, mfa: { enabled: true, methods: ['webauthn'] } });
    expect(created.value!.recoveryCodes).toHaveLength(10);
    expect(await key.credentials()).toEqual([expect.objectContaining({ isResidentCredential: true })]);
    expect(await passkeysOf(email)).toEqual([{ name: 'App laptop', passkey: true }]);
    await inPage(page, 'return app.client.signOut()');

    // Autofill: the app's sign-in form has an <input autocomplete="username webauthn">.
    await page.evaluate(
      `document.body.append(Object.assign(document.createElement('input'), { type: 'email', name: 'email', autocomplete: 'username webauthn' }))`,
    );
    const before = (await calls(page)).length;
    const autofilled = await inPage<Settled<unknown>>(page, 'return app.settle(app.client.passkeys.autofill().result)');
    expect(autofilled.value).toMatchObject({ kind: 'signed-in', user: { email } });
    expect((await calls(page)).slice(before)).toEqual([
      { mediation: 'conditional', pendingAtStart: 0, aborted: false, state: 'resolved', error: null },
    ]);
    expect(await accessToken()).toMatchObject({ amr: PASSKEY_AMR });
    await inPage(page, 'return app.client.signOut()');

    // A button while the autofill request waits: the autofill request is aborted (its result is
    // null, not an error) before the button's request starts.
    await key.presence(false);
    const waiting = (await calls(page)).length;
    await page.evaluate('void (window.autofill = window.app.settle(window.app.client.passkeys.autofill().result))');
    await until(page, `window.webauthn.calls.length > ${waiting}`);
    await key.presence(true);
    const pressed = await inPage<Settled<unknown>>(page, 'return app.settle(app.client.passkeys.signIn())');
    expect(pressed.value).toMatchObject({ kind: 'signed-in', user: { email } });
    expect(await page.evaluate('window.autofill')).toEqual({ value: null });
    expect((await calls(page)).slice(waiting)).toEqual([
      { mediation: 'conditional', pendingAtStart: 0, aborted: true, state: 'rejected', error: 'AbortError' },
      { mediation: 'optional', pendingAtStart: 0, aborted: false, state: 'resolved', error: null },
    ]);
    const events = await log(page);
    expect(events.indexOf(`abort#${waiting}`)).toBeLessThan(events.indexOf(`start#${waiting + 1} optional`));
    expect(await accessToken()).toMatchObject({ amr: PASSKEY_AMR });
    await inPage(page, 'return app.client.signOut()');

    // The emailed link comes back to the app's page (an allowed return URL) and signs in there.
    const returnTo = `${app.origin}/`;
    const linked = await inPage<Settled<void>>(
      page,
      `return app.settle(app.client.emailCode.send(${JSON.stringify(email)}, { returnTo: ${JSON.stringify(returnTo)} }))`,
    );
    expect(linked.error).toBeUndefined();
    const second = await signInMail(email, 2);
    expect(second.link).toBe(`${returnTo}?email_token=${second.token}`);
    await page.goto(second.link!);
    await page.waitForFunction('window.app !== undefined');
    const completed = await inPage<Settled<unknown>>(page, 'return app.settle(app.client.emailCode.completeLink())');
    expect(page.url()).toBe(returnTo);
    // The account has a second factor now (its passkey): the link is the first step, the passkey the second.
    expect(completed.value).toMatchObject({ kind: 'mfa-required', methods: ['webauthn'], user: { email } });
    const verified = await inPage<Settled<unknown>>(page, `return app.settle(app.client.verifyMfa({ type: 'webauthn' }))`);
    expect(verified.value).toMatchObject({ kind: 'signed-in', user: { email } });
    expect((await sessionsOf(email)).map((s) => s.amr)).toEqual([['email'], PASSKEY_AMR, PASSKEY_AMR, ['email', 'hwk']]);
  });

  it('PWL console: an emailed link opened in another browser does not sign in there, the code typed there does; the link works in the browser that asked', async () => {
    const asker = await newBrowser();
    const other = await newBrowser();
    const email = uniqueEmail('pwl-link');
    await asker.page.goto(`${origin}/account/#email-code`);
    await heading(asker.page, 'Sign in with a code').waitFor();
    await askForCode(asker.page, email);
    const mail = await signInMail(email);

    const verifications: string[] = [];
    other.page.on('request', (request) => {
      if (request.url().includes('/email-code/verify')) verifications.push(request.method());
    });
    await other.page.goto(mail.link!);
    await heading(other.page, 'Sign in with a code').waitFor();
    await other.page
      .getByText('This link works only in the browser where you asked for it. Enter the code from the email instead.')
      .waitFor();
    // Nothing was sent (the link stays good for the browser that asked) and the token left the address bar.
    expect(verifications).toEqual([]);
    expect(other.page.url()).toBe(`${origin}/account/#email-code`);
    expect(await sessionsOf(email)).toEqual([]);
    await check(other.page, 'email-link-other-browser');

    await other.page.getByLabel('Email address').fill(email);
    await other.page.getByLabel('Code from the email').fill(mail.code);
    await other.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await heading(other.page, 'Your profile').waitFor();
    expect(verifications).toEqual(['POST']);
    expect(await sessionsOf(email)).toEqual([{ amr: ['email'], revoked: false }]);

    // In the browser that asked, a new link signs in — after a mail scanner fetched it (a GET spends nothing).
    await asker.page.getByRole('button', { name: 'Send a new code' }).click();
    await askForCode(asker.page, email);
    const fresh = await signInMail(email, 2);
    const link = new URL(fresh.link!);
    expect((await t.api().get(link.pathname + link.search)).status).toBe(200);
    await asker.page.goto(fresh.link!);
    await heading(asker.page, 'Your profile').waitFor();
    expect(asker.page.url()).not.toContain('email_token');
    expect((await sessionsOf(email)).map((s) => s.amr)).toEqual([['email'], ['email']]);
  });

  it('PWL console: after a password sign-in on a device that can make passkeys, offers to create one; on a device that cannot, it does not', async () => {
    const user = await register(t, uniqueEmail('pwl-offer'));
    const signInWithPassword = async (page: Page) => {
      await page.goto(`${origin}/account/`);
      await page.getByLabel('Email address').fill(user.email);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await heading(page, 'Your profile').waitFor();
      await page.locator('[aria-busy="true"]').first().waitFor({ state: 'detached' });
    };
    const offer = (page: Page) => page.getByRole('region', { name: 'Sign in faster with a passkey' });
    const uvpaa = (page: Page) => page.evaluate<boolean>('PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable()');

    // A device with a USB security key only: no platform authenticator, no offer. Its passkey
    // button, with no passkey on the key, says so.
    const plain = await newBrowser();
    await authenticator(plain.context, plain.page, 'usb');
    await plain.page.goto(`${origin}/account/`);
    await heading(plain.page, 'Sign in').waitFor();
    expect(await uvpaa(plain.page)).toBe(false);
    await plain.page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await alert(plain.page).waitFor();
    expect(await alert(plain.page).textContent()).toBe('The security key or passkey did not answer, or the request was cancelled.');
    await check(plain.page, 'passkey-button-failed');
    await signInWithPassword(plain.page);
    await plain.page.waitForTimeout(500);
    expect(await offer(plain.page).count()).toBe(0);

    // A device with a platform authenticator that verifies its user: the offer.
    const device = await newBrowser();
    const key = await authenticator(device.context, device.page);
    await signInWithPassword(device.page);
    expect(await uvpaa(device.page)).toBe(true);
    await offer(device.page).waitFor();
    await check(device.page, 'passkey-offer');
    await offer(device.page).getByRole('button', { name: 'Create a passkey' }).click();
    // Its first second factor: the recovery codes that come with it are shown once.
    await device.page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
    expect(await device.page.locator('ol.codes code').count()).toBe(10);
    await check(device.page, 'passkey-offer-recovery-codes');
    await device.page.getByRole('button', { name: 'I have saved them' }).click();
    await device.page.getByText('Created the passkey “Passkey”. It signs you in on this device.').waitFor();
    expect(await offer(device.page).count()).toBe(0);
    expect(await key.credentials()).toEqual([expect.objectContaining({ isResidentCredential: true })]);
    expect(await passkeysOf(user.email)).toEqual([{ name: 'Passkey', passkey: true }]);

    // With a passkey, no more offers: once the offer has read the account's factors, it stays away.
    const factorsRead = device.page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v1/auth/mfa');
    await device.page.reload();
    await heading(device.page, 'Your profile').waitFor();
    expect((await factorsRead).status()).toBe(200);
    await device.page.waitForTimeout(200);
    expect(await offer(device.page).count()).toBe(0);
  });
});
