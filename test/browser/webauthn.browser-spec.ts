import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, IncomingMessage, request, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserContext, CDPSession, chromium, Page } from 'playwright-core';
import { createTestApp, TestApp } from '../support/test-app';
import { PASSWORD, uniqueEmail } from '../support/flows';
import { decodeJwt } from '../support/mfa';

jest.setTimeout(120_000);

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// The package's exports map hides its UMD bundle from require.resolve; it is read from disk.
const BUNDLE_DIR = join(__dirname, '../../node_modules/@simplewebauthn/browser/dist/bundle');
const BUNDLE = ['index.umd.min.js', 'index.es5.umd.min.js'].map((file) => join(BUNDLE_DIR, file)).find((file) => existsSync(file))!;

/** The frontend a team would ship: one page using @simplewebauthn/browser against the API. */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>MFA test page</title><script src="/simplewebauthn-browser.js"></script></head>
<body><h1>MFA test page</h1><pre id="log"></pre>
<script>
  async function call(path, body, accessToken) {
    const headers = { 'Content-Type': 'application/json' };
    if (accessToken) headers.Authorization = 'Bearer ' + accessToken;
    const res = await fetch('/api/v1/auth' + path, { method: 'POST', headers, body: JSON.stringify(body ?? {}) });
    return { status: res.status, body: await res.json() };
  }
  window.registerKey = async (accessToken, name) => {
    const options = await call('/mfa/webauthn/register/options', { name }, accessToken);
    if (options.status !== 200) return { step: 'options', ...options };
    const response = await SimpleWebAuthnBrowser.startRegistration({ optionsJSON: options.body });
    return call('/mfa/webauthn/register/verify', { response }, accessToken);
  };
  window.secondStep = async (mfaToken) => {
    const options = await call('/mfa/webauthn/options', { mfaToken });
    if (options.status !== 200) return { step: 'options', ...options };
    const response = await SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: options.body });
    return call('/mfa/verify', { mfaToken, type: 'webauthn', code: JSON.stringify(response) });
  };
  window.call = call;
</script></body></html>`;

/**
 * Serves the page and the @simplewebauthn/browser bundle from its own origin (the one in
 * WEBAUTHN_ORIGINS) and passes /api/* on to the service, as a frontend's server would.
 */
function pageServer(apiPort: () => number): Server {
  const bundle = readFileSync(BUNDLE);
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(PAGE);
    } else if (req.url === '/simplewebauthn-browser.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(bundle);
    } else if (req.url?.startsWith('/api/')) {
      const upstream = request(
        { host: '127.0.0.1', port: apiPort(), method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    } else {
      res.writeHead(404).end();
    }
  });
}

type ApiAnswer = { status: number; body: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
type PageApi = {
  call(path: string, body: unknown, accessToken?: string): Promise<ApiAnswer>;
  registerKey(accessToken: string, name: string): Promise<ApiAnswer>;
  secondStep(mfaToken: string): Promise<ApiAnswer>;
};
const api = (tab: Page) => ({
  call: (path: string, body: unknown, accessToken?: string) =>
    tab.evaluate(([p, b, a]) => (globalThis as unknown as PageApi).call(p, b, a), [path, body, accessToken] as const),
  registerKey: (accessToken: string, name: string) =>
    tab.evaluate(([a, n]) => (globalThis as unknown as PageApi).registerKey(a, n), [accessToken, name] as const),
  secondStep: (mfaToken: string) => tab.evaluate((m) => (globalThis as unknown as PageApi).secondStep(m), mfaToken),
});

describe('WebAuthn in a real browser: Chromium with a virtual CTAP2 authenticator and @simplewebauthn/browser', () => {
  let t: TestApp;
  let server: Server;
  /** Same host, another port: a different origin, not in WEBAUTHN_ORIGINS. */
  let strangerServer: Server;
  let apiPort = 0;
  let origin: string;
  let strangerOrigin: string;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  let authenticatorId: string;
  let cdp: CDPSession;

  async function listen(s: Server): Promise<string> {
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return `http://localhost:${(s.address() as AddressInfo).port}`;
  }

  /** A tab at `url` with its own virtual CTAP2 authenticator (internal, with user verification). */
  async function openTab(url: string): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
    const tab = context.pages().find((p) => p.url() === 'about:blank') ?? (await context.newPage());
    await tab.goto(url);
    const session = await context.newCDPSession(tab);
    await session.send('WebAuthn.enable');
    const { authenticatorId: id } = await session.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    return { page: tab, cdp: session, authenticatorId: id };
  }

  beforeAll(async () => {
    server = pageServer(() => apiPort);
    strangerServer = pageServer(() => apiPort);
    origin = await listen(server);
    strangerOrigin = await listen(strangerServer);
    t = await createTestApp({ env: { WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: origin } });
    await t.app.listen(0, '127.0.0.1');
    apiPort = (t.http.address() as AddressInfo).port;

    userDataDir = mkdtempSync(join(tmpdir(), 'chromium-mfa-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--host-resolver-rules=MAP localhost 127.0.0.1',
      ],
    });
    ({ page, cdp, authenticatorId } = await openTab(`${origin}/`));
  });

  afterAll(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await t?.close();
    await new Promise((resolve) => server?.close(resolve));
    await new Promise((resolve) => strangerServer?.close(resolve));
  });

  it('registers a credential from the page, then completes a login’s second step with it', async () => {
    const email = uniqueEmail('browser');
    const { call, registerKey, secondStep } = api(page);

    expect((await call('/register', { email, password: PASSWORD, name: 'Browser User' })).status).toBe(201);
    const first = await call('/login', { email, password: PASSWORD });
    expect(first.status).toBe(200);
    expect(first.body.requiresMfa).toBe(false);

    const registered = await registerKey(first.body.tokens.accessToken, 'Laptop');
    expect(registered.status).toBe(200);
    expect(registered.body).toMatchObject({
      credential: { id: expect.any(String), name: 'Laptop' },
      mfa: { enabled: true, methods: ['webauthn'] },
    });
    expect(registered.body.recoveryCodes).toHaveLength(10);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(Buffer.from(credentials[0].credentialId, 'base64').toString('base64url')).toBe(registered.body.credential.id);

    const second = await call('/login', { email, password: PASSWORD });
    expect(second.body).toMatchObject({ requiresMfa: true, tokens: null, mfaMethods: ['webauthn'] });
    const verified = await secondStep(second.body.mfaToken);
    expect(verified.status).toBe(200);
    expect(verified.body.user).toMatchObject({ email, mfaEnabled: true });
    expect(decodeJwt(verified.body.tokens.accessToken)).toMatchObject({ amr: ['pwd', 'hwk'] });

    // The signature counter the authenticator reports is the one the service stored.
    const after = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    const rows: { counter: string; last_used_at: Date | null }[] = await t.dataSource.query(
      `SELECT counter, last_used_at FROM webauthn_credentials WHERE id = $1`,
      [registered.body.credential.id],
    );
    expect(Number(rows[0].counter)).toBe(after.credentials[0].signCount);
    expect(rows[0].last_used_at).not.toBeNull();

    // The mfaToken is spent: the same ceremony cannot log in twice.
    const replay = await secondStep(second.body.mfaToken);
    expect(replay.status).toBe(401);
    expect(replay.body.error.code).toBe('INVALID_TOKEN');
  });

  it('a page on another origin (same host, other port) gets its credential refused by the service', async () => {
    const email = uniqueEmail('stranger');
    const stranger = await openTab(`${strangerOrigin}/`);
    try {
      const { call, registerKey } = api(stranger.page);
      expect((await call('/register', { email, password: PASSWORD, name: 'Stranger' })).status).toBe(201);
      const signedIn = await call('/login', { email, password: PASSWORD });
      // The browser signs for rpID localhost from this origin; the service accepts only its own origins.
      const refused = await registerKey(signedIn.body.tokens.accessToken, 'Elsewhere');
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ field: 'response', message: expect.any(String) }],
      });
      const { credentials } = await stranger.cdp.send('WebAuthn.getCredentials', { authenticatorId: stranger.authenticatorId });
      expect(credentials).toHaveLength(1);
      expect((await call('/login', { email, password: PASSWORD })).body.requiresMfa).toBe(false);
    } finally {
      await stranger.page.close();
    }
  });
});
