import * as oidc from 'openid-client';
import type { TestApp } from './test-app';

export interface Page {
  status: number;
  url: string;
  /** Where a redirect went, when the walk stopped at one that leaves the service. */
  location: string | null;
  html: string;
  headers: Headers;
}

interface Cookie {
  name: string;
  value: string;
  path: string;
}

/**
 * A browser without JavaScript: a cookie jar, redirects followed within the service's origin (a
 * redirect elsewhere — to an app's redirect URI — ends the walk), forms posted as they are.
 */
export class Browser {
  private cookies: Cookie[] = [];

  constructor(private readonly origin: string) {}

  /** GET `url` and follow the service's redirects. */
  async open(url: string): Promise<Page> {
    return this.walk(url, { method: 'GET' });
  }

  /** Posts the page's form `index` (by its action) with `fields` beside its hidden inputs. */
  async submit(page: Page, fields: Record<string, string>, options: { action?: RegExp; omitCsrf?: boolean } = {}): Promise<Page> {
    const forms = [...page.html.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)];
    const form = forms.find((f) => !options.action || options.action.test(f[1]));
    if (!form) throw new Error(`no form on the page (${page.status} ${page.url}):\n${page.html}`);
    const hidden = Object.fromEntries(
      [...form[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], unescape(m[2])]),
    );
    if (options.omitCsrf) delete hidden.csrf;
    const body = new URLSearchParams({ ...hidden, ...fields }).toString();
    return this.walk(new URL(unescape(form[1]), page.url).href, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  }

  /** Drops the cookies whose name matches. */
  forget(name: RegExp): void {
    this.cookies = this.cookies.filter((c) => !name.test(c.name));
  }

  private async walk(url: string, init: { method: string; body?: string; headers?: Record<string, string> }): Promise<Page> {
    let current = url;
    let request = init;
    for (let hops = 0; hops < 20; hops++) {
      const target = new URL(current);
      const res = await fetch(current, {
        ...request,
        redirect: 'manual',
        headers: { ...request.headers, cookie: this.cookieHeader(target) },
      });
      this.store(res, target);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        const next = new URL(location, current);
        if (next.origin !== this.origin) {
          return { status: res.status, url: current, location: next.href, html: await res.text(), headers: res.headers };
        }
        current = next.href;
        request = { method: 'GET' };
        continue;
      }
      return { status: res.status, url: current, location: null, html: await res.text(), headers: res.headers };
    }
    throw new Error('too many redirects');
  }

  private cookieHeader(url: URL): string {
    return this.cookies
      .filter((c) => url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  private store(res: Response, url: URL): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((part) => part.trim());
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      const attr = (key: string) => attributes.find((a) => a.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1);
      const path = attr('path') ?? url.pathname.replace(/\/[^/]*$/, '') ?? '/';
      const expires = attr('expires');
      const gone = value === '' || attr('max-age') === '0' || (expires !== undefined && new Date(expires).getTime() < Date.now());
      this.cookies = this.cookies.filter((c) => !(c.name === name && c.path === path));
      if (!gone) this.cookies.push({ name, value, path });
    }
  }
}

function unescape(value: string): string {
  return value
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}

/** Starts the app on a real port and makes it its own issuer there (the providers name API_URL). */
export async function listening(t: TestApp): Promise<string> {
  await new Promise<void>((resolve) => t.http.listen(0, '127.0.0.1', resolve));
  const { port } = t.http.address() as { port: number };
  const origin = `http://127.0.0.1:${port}`;
  t.config.apiUrl = origin;
  t.config.issuer = origin;
  return origin;
}

export interface AuthorizationRequest {
  url: URL;
  verifier: string;
  state: string;
  nonce: string;
}

/** An authorization request as openid-client builds it: PKCE S256, state and nonce. */
export async function authorizationRequest(
  config: oidc.Configuration,
  params: Record<string, string> & { redirect_uri: string; scope: string },
): Promise<AuthorizationRequest> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...params,
  });
  return { url, verifier, state, nonce };
}
