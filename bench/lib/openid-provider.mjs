// The OpenID provider's paths: client-credentials tokens, one authorization-code sign-in (with the
// browser's session, and through the sign-in page's form), and the memory of ten realms' providers.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rssBytes, sampleRss } from './proc.mjs';

const REDIRECT = 'https://app.bench.example/callback';
const API = 'https://api.bench.example/invoices';
const SCOPE = 'invoices:read';

/**
 * A browser without JavaScript: a cookie jar, redirects followed within the service's origin (a
 * redirect elsewhere — to the app's redirect URI — ends the walk), forms posted as they are. The
 * same walk as the end-to-end tests' browser (test/support/op-browser.ts).
 */
export class Browser {
  cookies = [];

  constructor(origin, headers = {}) {
    this.origin = origin;
    this.headers = headers;
  }

  open(url) {
    return this.walk(url, { method: 'GET' });
  }

  /** Posts the page's first form with `fields` beside its hidden inputs. */
  submit(page, fields) {
    const form = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(page.html);
    if (!form) throw new Error(`no form on the page (${page.status} ${page.url}): ${page.html.slice(0, 300)}`);
    const hidden = Object.fromEntries(
      [...form[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], unescape(m[2])]),
    );
    return this.walk(new URL(unescape(form[1]), page.url).href, {
      method: 'POST',
      body: new URLSearchParams({ ...hidden, ...fields }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  }

  async walk(url, init) {
    let current = url;
    let request = init;
    for (let hops = 0; hops < 20; hops++) {
      const target = new URL(current);
      const res = await fetch(current, {
        ...request,
        redirect: 'manual',
        headers: { ...this.headers, ...request.headers, cookie: this.cookieHeader(target) },
      });
      this.store(res, target);
      const location = res.headers.get('location');
      const html = await res.text();
      if (res.status >= 300 && res.status < 400 && location) {
        const next = new URL(location, current);
        if (next.origin !== this.origin) return { status: res.status, url: current, location: next.href, html };
        current = next.href;
        request = { method: 'GET' };
        continue;
      }
      return { status: res.status, url: current, location: null, html };
    }
    throw new Error('too many redirects');
  }

  cookieHeader(url) {
    return this.cookies
      .filter((c) => url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  store(res, url) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((part) => part.trim());
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      const attr = (key) => attributes.find((a) => a.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1);
      const path = attr('path') ?? (url.pathname.replace(/\/[^/]*$/, '') || '/');
      const expires = attr('expires');
      const gone = value === '' || attr('max-age') === '0' || (expires !== undefined && new Date(expires).getTime() < Date.now());
      this.cookies = this.cookies.filter((c) => !(c.name === name && c.path === path));
      if (!gone) this.cookies.push({ name, value, path });
    }
  }
}

function unescape(value) {
  return value
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}

async function ok(call, origin, method, urlPath, options) {
  const res = await call(origin, method, urlPath, options);
  if (res.status < 200 || res.status > 299) throw new Error(`${method} ${urlPath} → ${res.status} ${res.text.slice(0, 300)}`);
  return res.json;
}

/**
 * Registers, in `realm` over the admin API, the resource and a confidential client with
 * `client_secret_basic` for the client-credentials grant and a public first-party client (no
 * consent page) for sign-ins. Returns what the requests need.
 */
export async function setUpRealmProvider({ origin, call, adminAccess, realm }) {
  const headers = { authorization: `Bearer ${adminAccess}`, 'x-realm-id': realm };
  await ok(call, origin, 'POST', '/v1/admin/resources', {
    body: { identifier: API, name: 'Invoices', scopes: [{ name: SCOPE }] },
    headers,
  });
  const machine = await ok(call, origin, 'POST', '/v1/admin/clients', {
    body: { name: 'Billing job', type: 'confidential', grantTypes: ['client_credentials'], resources: [API], scopes: [SCOPE] },
    headers,
  });
  const app = await ok(call, origin, 'POST', '/v1/admin/clients', {
    body: { name: 'Web app', type: 'public', redirectUris: [REDIRECT], firstParty: true, scopes: ['openid', 'email'] },
    headers,
  });
  const discovery = await ok(call, origin, 'GET', `/realms/${realm}/.well-known/openid-configuration`);
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(machine.client.clientId)}:${encodeURIComponent(machine.clientSecret)}`).toString('base64')}`;
  return {
    realm,
    tokenPath: new URL(discovery.token_endpoint).pathname,
    authorizationEndpoint: discovery.authorization_endpoint,
    basic,
    clientCredentialsBody: new URLSearchParams({ grant_type: 'client_credentials', scope: SCOPE, resource: API }).toString(),
    appClientId: app.client.clientId,
  };
}

/** One client-credentials token; throws unless a JWT access token comes back. */
export async function clientCredentialsToken(origin, provider, clientHeaders = {}) {
  const res = await fetch(origin + provider.tokenPath, {
    method: 'POST',
    headers: { ...clientHeaders, authorization: provider.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: provider.clientCredentialsBody,
  });
  const body = await res.json().catch(() => ({}));
  if (res.status !== 200 || String(body.access_token).split('.').length !== 3) {
    throw new Error(`client credentials in ${provider.realm} → ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  }
  return body.access_token;
}

/**
 * One authorization-code sign-in of the first-party app in `browser`: authorize (PKCE S256, state,
 * nonce), the sign-in page's form when the browser has no session there (`credentials`), the
 * code at the app's redirect URI, redeemed at the token endpoint for an ID token.
 */
async function signIn(origin, provider, browser, credentials) {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const url = new URL(provider.authorizationEndpoint);
  url.search = new URLSearchParams({
    client_id: provider.appClientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state,
    nonce: randomBytes(16).toString('base64url'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  let page = await browser.open(url.href);
  if (!page.location) {
    if (!credentials) throw new Error(`authorize with a session showed a page (${page.status} ${page.url})`);
    page = await browser.submit(page, credentials);
  }
  if (!page.location) throw new Error(`the sign-in did not return to the app (${page.status} ${page.url}): ${page.html.slice(0, 200)}`);
  const back = new URL(page.location);
  const code = back.searchParams.get('code');
  if (!code || back.searchParams.get('state') !== state) throw new Error(`no code at the redirect URI: ${back.search}`);
  const res = await fetch(origin + provider.tokenPath, {
    method: 'POST',
    headers: { ...browser.headers, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: provider.appClientId,
    }).toString(),
  });
  const tokens = await res.json().catch(() => ({}));
  if (res.status !== 200 || !tokens.id_token) throw new Error(`code → ${res.status} ${JSON.stringify(tokens).slice(0, 200)}`);
}

/**
 * The scenarios of `realm` (its users' emails in `users`, all with `password`):
 * - `op-client-credentials`: POST the token endpoint, client_credentials with Basic, a JWT for the resource;
 * - `op-sign-in-sso`: one authorization-code sign-in of a browser that has a session (authorize
 *   answers the code straight away), then the code redeemed; one browser per connection;
 * - `op-sign-in-password`: the same from a new browser, through the sign-in page's form.
 */
export function openIdProviderScenarios({ origin, call, adminAccess, realm, users, password, connections, clientHeaders }) {
  let provider = null;
  const ready = async () => {
    provider ??= await setUpRealmProvider({ origin, call, adminAccess, realm });
    return provider;
  };
  let next = 0;
  const credentials = () => ({ email: users[next++ % users.length], password });
  const signedIn = [];
  const clientCredentials = {
    name: 'op-client-credentials',
    what: `POST /realms/${realm}/…/token, grant_type=client_credentials, client_secret_basic, a JWT access token for one resource and scope`,
    setup: async () => {
      await ready();
      clientCredentials.requests[0].path = provider.tokenPath;
      clientCredentials.requests[0].headers = {
        ...clientHeaders,
        authorization: provider.basic,
        'content-type': 'application/x-www-form-urlencoded',
      };
      clientCredentials.requests[0].body = provider.clientCredentialsBody;
      await clientCredentialsToken(origin, provider, clientHeaders);
    },
    requests: [{ method: 'POST', path: '/', headers: {}, body: '' }],
  };
  return [
    clientCredentials,
    {
      name: 'op-sign-in-sso',
      what: `one authorization-code sign-in in realm ${realm} of a browser already signed in there: GET authorize → 303 to the app with the code (first-party app, no consent), POST token (PKCE) → ID token; the flow's requests in turn`,
      setup: async () => {
        await ready();
        for (let i = 0; i < connections; i++) {
          const browser = new Browser(origin, clientHeaders);
          await signIn(origin, provider, browser, credentials());
          signedIn.push(browser);
        }
      },
      flow: async () => {
        const browser = signedIn.pop();
        if (!browser) throw new Error('op-sign-in-sso: no signed-in browser free');
        try {
          await signIn(origin, provider, browser, null);
        } finally {
          signedIn.push(browser);
        }
      },
    },
    {
      name: 'op-sign-in-password',
      what: `one authorization-code sign-in in realm ${realm} of a new browser: GET authorize → the sign-in page, POST its form (email, password; bcrypt cost 4) → 303 to the app with the code, POST token (PKCE) → ID token`,
      setup: async () => {
        await ready();
        await signIn(origin, provider, new Browser(origin, clientHeaders), credentials());
      },
      flow: () => signIn(origin, provider, new Browser(origin, clientHeaders), credentials()),
    },
  ];
}

/**
 * The server's memory with `count` more realms' providers loaded: each realm created over the
 * admin API (super-admin), its clients registered, its discovery document read and one
 * client-credentials token issued; then `seconds` of client-credentials tokens across all of
 * them from `connections` loops. RSS before, after loading, and the peak (sampled every 100 ms
 * and the kernel's high-water mark, VmHWM, which covers the whole life of the process).
 */
export async function measureRealmProviders({
  origin,
  call,
  superAdminAccess,
  server,
  tag,
  count,
  seconds,
  connections,
  clientHeaders,
  log,
}) {
  const headers = { authorization: `Bearer ${superAdminAccess}`, 'x-realm-id': 'master' };
  const before = rssBytes(server.pid);
  const providers = [];
  const sampler = sampleRss(server.pid);
  for (let i = 0; i < count; i++) {
    const realm = `bench-op-${tag}-${i}`.slice(0, 63);
    await ok(call, origin, 'POST', '/v1/admin/realms', { body: { id: realm, name: `Provider ${i}` }, headers });
    const provider = await setUpRealmProvider({ origin, call, adminAccess: superAdminAccess, realm });
    await clientCredentialsToken(origin, provider, clientHeaders);
    providers.push(provider);
  }
  const loaded = rssBytes(server.pid);
  log(`  ${count} realms' providers loaded: RSS ${mb(before)} → ${mb(loaded)} MB; ${seconds} s of tokens across them`);
  let tokens = 0;
  let n = 0;
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < end) {
        await clientCredentialsToken(origin, providers[n++ % providers.length], clientHeaders);
        tokens += 1;
      }
    }),
  );
  const sampledMax = sampler.stop();
  return {
    realms: count,
    rssBeforeBytes: before,
    rssLoadedBytes: loaded,
    rssMaxBytes: Math.max(sampledMax, rssBytes(server.pid)),
    rssHighWaterBytes: highWaterMark(server.pid),
    tokens,
    seconds,
  };
}

function mb(bytes) {
  return Math.round(bytes / 2 ** 20);
}

/** VmHWM of /proc/<pid>/status: the process's peak resident set, in bytes (NaN off Linux). */
export function highWaterMark(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmHWM:\s+(\d+)\s+kB/.exec(status);
    return match ? Number(match[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}
