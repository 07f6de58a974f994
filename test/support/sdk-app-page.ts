import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import type { Page } from 'playwright-core';
import { PASSWORD } from './flows';
import { decodeJwt } from './mfa';

const ROOT = join(__dirname, '../..');
const WEBAUTHN_ESM = join(ROOT, 'node_modules/@simplewebauthn/browser/esm');

/** Builds the client package (JavaScript only) into a fresh folder and returns it. */
export function buildClientBundle(): string {
  const outdir = mkdtempSync(join(tmpdir(), 'client-dist-'));
  execFileSync(process.execPath, [join(ROOT, 'client/scripts/build.mjs'), '--no-types'], {
    env: { ...process.env, CLIENT_OUTDIR: outdir },
  });
  return outdir;
}

/**
 * The frontend of a team that adopted the client: an HTML page importing the built bundle as an
 * ES module, with an import map for `@simplewebauthn/browser` (as a CDN setup would have) — or,
 * with `bundler: false`, the build for pages without a bundler (`dist/browser/`) and no import map.
 * Query parameters choose the service (`api`), the transport (`cookie`, default, or `local`) and
 * an optional fixed fingerprint (`fp=alien`, a device that is not this one), DPoP (`dpop=1`). At
 * `/verify-email?token=…` (the link in the emails) it verifies the address; back from an identity
 * provider (`/?code=…`, `linked=…` or `error=…`) it completes the sign-in (`app.completed`).
 */
const PAGE = (bundler: boolean) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>App</title>
${bundler ? '<script type="importmap">{"imports":{"@simplewebauthn/browser":"/vendor/simplewebauthn/index.js"}}</script>' : ''}
</head><body><h1>App</h1>
<script type="module">
import { createIdentityClient, localStorageAdapter, collectFingerprint, FINGERPRINT_KEYS } from '${bundler ? '/sdk/index.js' : '/sdk/browser/index.js'}';
const q = new URLSearchParams(location.search);
const API = q.get('api') || localStorage.getItem('test:api');
localStorage.setItem('test:api', API);
const ALIEN = { ua: 'Mozilla/5.0 (X11; Linux x86_64) Other/1.0', platform: 'Win32', canvas: 'a'.repeat(64), audio: 'b'.repeat(64),
  fonts: 'c'.repeat(64), webglVendor: 'Other Inc.', webglRenderer: 'Other GPU', screen: '3840x2160', cores: 32, memory: 64 };
const options = { baseUrl: API, realm: 'default', transport: q.get('transport') === 'local' ? localStorageAdapter() : 'cookie' };
if (q.get('fp') === 'alien') options.fingerprint = () => ALIEN;
if (q.get('dpop')) options.dpop = true;
const client = createIdentityClient(options);
const events = [];
for (const type of ['signed-in', 'token-refreshed', 'signed-out', 'mfa-required']) client.on(type, (event) => events.push({ type, ...event }));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const settle = (promise) => promise.then((value) => ({ value }), (error) => ({ error: { code: error.code, status: error.status, message: error.message } }));
window.app = {
  client, events, API, collectFingerprint, FINGERPRINT_KEYS, settle,
  snapshot: () => client.getSnapshot(),
  me: () => settle(client.fetch(API + '/api/v1/auth/me').then(async (r) => ({ status: r.status, body: await r.json() }))),
  /** Calls the authenticated fetch every \`every\` ms for \`ms\` ms; counts the calls that did not succeed. */
  async hammer(ms, every) {
    const end = Date.now() + ms;
    let ok = 0;
    const failed = [];
    while (Date.now() < end) {
      try {
        const response = await client.fetch(API + '/api/v1/auth/me');
        if (response.status === 200) ok += 1;
        else failed.push(response.status + ' ' + (await response.text()));
      } catch (error) {
        failed.push(String(error.code) + ' ' + error.message);
      }
      await sleep(every);
    }
    return { ok, failed };
  },
};
if (location.pathname === '/verify-email') window.app.verified = settle(client.verifyEmail(q.get('token')));
if (q.has('code') || q.has('linked') || q.has('error')) window.app.completed = settle(client.federation.complete());
</script></body></html>`;

export interface AppPageServer {
  server: Server;
  origin: string;
  /** Paths the browser asked for, in order. */
  requested: string[];
  close(): Promise<void>;
}

/** Serves the page, the built bundle under /sdk/ and @simplewebauthn/browser under /vendor/, on its own origin. */
export async function startAppPage(bundleDir: string, options: { bundler?: boolean } = {}): Promise<AppPageServer> {
  const html = PAGE(options.bundler ?? true);
  const requested: string[] = [];
  const file = (base: string, path: string) => {
    const full = normalize(join(base, path));
    return full.startsWith(base) && existsSync(full) ? readFileSync(full) : null;
  };
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://page').pathname;
    requested.push(path);
    if (path === '/' || path === '/verify-email') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html);
      return;
    }
    const body = path.startsWith('/sdk/')
      ? file(bundleDir, path.slice('/sdk/'.length))
      : path.startsWith('/vendor/simplewebauthn/')
        ? file(WEBAUTHN_ESM, path.slice('/vendor/simplewebauthn/'.length))
        : null;
    if (body && extname(path) === '.js') res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    origin: `http://localhost:${(server.address() as AddressInfo).port}`,
    requested,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A port nobody listens on right now (for a service that must know its own URL before it starts). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** What the page's `app.settle` makes of a call: its value, or its error's code, status and message. */
export type Settled<T> = { value?: T; error?: { code: string; status: number; message: string } };

/** Runs an async snippet in the page, where `app` is the page's API (see PAGE above). */
export function inPage<T>(page: Page, body: string): Promise<T> {
  return page.evaluate(`(async () => { const app = window.app; ${body} })()`) as Promise<T>;
}

/**
 * Signs out, signs in with the password, and completes the second step with the security key the
 * page's virtual authenticator holds; expects an access token whose amr names the key (hwk).
 */
export async function expectSecurityKeySignIn(tab: Page, email: string): Promise<void> {
  await inPage(tab, 'return app.client.signOut()');
  const signedIn = await inPage<{ value?: unknown }>(
    tab,
    `return app.settle(app.client.signIn({ email: ${JSON.stringify(email)}, password: ${JSON.stringify(PASSWORD)} }))`,
  );
  expect(signedIn.value).toMatchObject({ kind: 'mfa-required', methods: ['webauthn'] });
  const verified = await inPage<{ error?: unknown }>(tab, `return app.settle(app.client.verifyMfa({ type: 'webauthn' }))`);
  expect(verified.error).toBeUndefined();
  expect(decodeJwt((await inPage<string>(tab, 'return app.client.getAccessToken()'))!)).toMatchObject({ amr: ['pwd', 'hwk'] });
}
