import { rmSync } from 'node:fs';
import { Browser, BrowserContext } from 'playwright-core';
import { LOG_DESTINATION } from '../../src/adapters/http/logging/logging.module';
import { CapturedLogs } from '../support/captured-logs';
import { launchChromium } from '../support/chromium';
import { PASSWORD, uniqueEmail } from '../support/flows';
import { decodeJwt } from '../support/mfa';
import { AppPageServer, buildClientBundle, freePort, inPage, Settled, startAppPage } from '../support/sdk-app-page';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(120_000);

/**
 * The development profile (`APP_PROFILE=development`, what `npm run dev` sets) accepts passkeys
 * from a frontend's dev server on any `http://localhost:<port>` without WEBAUTHN_ORIGINS; the
 * production profile accepts them only from the origins it names, and its log (not its answer)
 * says which origin it expected and which it received.
 */
describe('passkeys from an app page on another localhost port, by profile (client SDK, CDP virtual authenticator)', () => {
  let bundle: string;
  /** The frontend under development: the client SDK on a port of its own. */
  let app: AppPageServer;
  let browser: Browser;
  let t: TestApp | undefined;
  let context: BrowserContext | undefined;

  beforeAll(async () => {
    bundle = buildClientBundle();
    app = await startAppPage(bundle);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    if (bundle) rmSync(bundle, { recursive: true, force: true });
  });

  afterEach(async () => {
    await context?.close();
    await t?.close();
    context = undefined;
    t = undefined;
  });

  /** The service at http://localhost:<port> (its PUBLIC_URL), with `env(origin)` on top; its log is captured. */
  async function startService(env: (origin: string) => Record<string, string>): Promise<{ origin: string; logs: CapturedLogs }> {
    const logs = new CapturedLogs();
    const port = await freePort();
    const origin = `http://localhost:${port}`;
    t = await createTestApp({
      env: { PUBLIC_URL: origin, API_URL: origin, LOG_LEVEL: 'info', ...env(origin) },
      override: (builder) => builder.overrideProvider(LOG_DESTINATION).useValue(logs),
    });
    await t.app.listen(port, '127.0.0.1');
    return { origin, logs };
  }

  /**
   * The app's page against the service at `origin`, in a fresh browser with a virtual CTAP2
   * authenticator (resident keys, user verification), signed in with a new account's password.
   */
  async function signedInAppPage(origin: string, prefix: string) {
    context = await browser.newContext();
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    await page.goto(`${app.origin}/?api=${encodeURIComponent(origin)}`);
    await page.waitForFunction('window.app !== undefined');
    const email = uniqueEmail(prefix);
    const account = JSON.stringify({ email, password: PASSWORD });
    const registered = await inPage<Settled<unknown>>(page, `return app.settle(app.client.register({ ...${account}, name: 'Dev' }))`);
    expect(registered.error).toBeUndefined();
    const signedIn = await inPage<Settled<unknown>>(page, `return app.settle(app.client.signIn(${account}))`);
    expect(signedIn.value).toMatchObject({ kind: 'signed-in', user: { email } });
    return {
      page,
      email,
      credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials,
    };
  }

  const passkeysOf = (email: string): Promise<{ name: string }[]> =>
    t!.dataSource.query(
      `SELECT c.name FROM webauthn_credentials c JOIN users u ON u.id = c.user_id WHERE u.email = $1 AND c.passkey ORDER BY c.created_at`,
      [email],
    );
  const webauthnWarnings = (logs: CapturedLogs) => logs.lines().filter((line) => line.context === 'WebAuthn');
  const isRegisterVerify = (url: string) => new URL(url).pathname === '/api/v1/auth/mfa/webauthn/register/verify';

  it('development profile, no WEBAUTHN_ORIGINS: registers a passkey from the page and signs in with it', async () => {
    const { origin, logs } = await startService(() => ({ APP_PROFILE: 'development' }));
    expect(t!.config.profile).toBe('development');
    expect(new URL(app.origin).port).not.toBe(new URL(origin).port);
    const { page, email, credentials } = await signedInAppPage(origin, 'dev-profile-passkey');

    const created = await inPage<Settled<{ recoveryCodes: string[] }>>(
      page,
      `return app.settle(app.client.passkeys.register({ name: 'Dev laptop' }))`,
    );
    expect(created.error).toBeUndefined();
    expect(created.value).toMatchObject({ credential: { name: 'Dev laptop' }, mfa: { enabled: true, methods: ['webauthn'] } });
    expect(await credentials()).toEqual([expect.objectContaining({ isResidentCredential: true })]);
    expect(await passkeysOf(email)).toEqual([{ name: 'Dev laptop' }]);

    // Signed out, the passkey alone signs in from the same page.
    await inPage(page, 'return app.client.signOut()');
    const signedIn = await inPage<Settled<unknown>>(page, 'return app.settle(app.client.passkeys.signIn())');
    expect(signedIn.value).toMatchObject({ kind: 'signed-in', user: { email } });
    expect(decodeJwt((await inPage<string>(page, 'return app.client.getAccessToken()'))!)).toMatchObject({ amr: ['hwk', 'mfa'] });
    expect(webauthnWarnings(logs)).toEqual([]);
  });

  it('production profile, WEBAUTHN_ORIGINS naming only the service: the same page is refused, the log names both origins and the answer neither', async () => {
    const { origin, logs } = await startService((self) => ({
      CORS_ORIGINS: app.origin,
      WEBAUTHN_RP_ID: 'localhost',
      WEBAUTHN_ORIGINS: self,
    }));
    expect(t!.config.profile).toBe('production');
    const { page, email, credentials } = await signedInAppPage(origin, 'prod-profile-passkey');

    const answered = page.waitForResponse((response) => isRegisterVerify(response.url()));
    const created = await inPage<Settled<unknown>>(page, `return app.settle(app.client.passkeys.register({ name: 'Dev laptop' }))`);
    expect(created.error).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    // The browser made the credential; the service refused it.
    expect(await credentials()).toHaveLength(1);
    expect(await passkeysOf(email)).toEqual([]);

    const response = await answered;
    const body = await response.text();
    expect(JSON.parse(body).error.details).toEqual([{ field: 'response', message: 'could not be verified' }]);
    for (const named of ['localhost', new URL(origin).host, new URL(app.origin).host]) expect(body).not.toContain(named);
    expect(JSON.stringify(created.error)).not.toContain('localhost');

    const warnings = webauthnWarnings(logs);
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 'warn',
        ceremony: 'registration',
        reason: 'origin',
        expectedOrigins: [origin],
        receivedOrigin: app.origin,
        expectedRpId: 'localhost',
        receivedRpId: 'localhost',
        requestId: response.headers()['x-request-id'],
      }),
    ]);
    expect(warnings[0].msg).toBe(
      `WebAuthn registration did not verify (origin): expected origin ${origin} and RP ID localhost, received origin ${app.origin} and RP ID localhost`,
    );
  });
});
