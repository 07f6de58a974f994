import { existsSync, readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';

const MODULES = join(__dirname, '../../node_modules');
/** Where the page's modules come from: openid-client (a certified relying party) as built for browsers, and what it imports. */
const LIBRARIES: Record<string, string> = {
  '/lib/openid-client/': join(MODULES, 'openid-client/build'),
  '/lib/oauth4webapi/': join(MODULES, 'oauth4webapi/build'),
  '/lib/jose/': join(MODULES, 'jose/dist/webapi'),
};
const IMPORTS = {
  'openid-client': '/lib/openid-client/index.js',
  oauth4webapi: '/lib/oauth4webapi/index.js',
  'jose/errors': '/lib/jose/util/errors.js',
  'jose/jwe/compact/decrypt': '/lib/jose/jwe/compact/decrypt.js',
};

/**
 * A single-page app on an origin of its own: a public client of the realm that signs in with
 * the authorization code flow and PKCE through openid-client in the browser, keeps its tokens in
 * sessionStorage, refreshes, and logs out through the end-session endpoint. `window.app` is its API.
 */
const PAGE = (issuer: string, clientId: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>App</title>
<link rel="icon" href="data:,">
<script type="importmap">${JSON.stringify({ imports: IMPORTS })}</script>
<script type="module">
import * as oidc from 'openid-client';
const issuer = new URL(${JSON.stringify(issuer)});
const clientId = ${JSON.stringify(clientId)};
const redirect = location.origin + '/callback';
const configured = oidc.discovery(issuer, clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
const stored = (key) => JSON.parse(sessionStorage.getItem(key) ?? 'null');
const outcome = (work) => work.then((value) => ({ value }), (error) => ({ error: error.error ?? error.code ?? String(error) }));
window.app = {
  async login() {
    const config = await configured;
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    sessionStorage.setItem('pending', JSON.stringify({ verifier, state }));
    const challenge = await oidc.calculatePKCECodeChallenge(verifier);
    location.assign(oidc.buildAuthorizationUrl(config, { redirect_uri: redirect, scope: 'openid email', code_challenge: challenge, code_challenge_method: 'S256', state }).href);
  },
  callback() {
    return outcome((async () => {
      const config = await configured;
      const { verifier, state } = stored('pending');
      const tokens = await oidc.authorizationCodeGrant(config, new URL(location.href), { pkceCodeVerifier: verifier, expectedState: state });
      sessionStorage.setItem('tokens', JSON.stringify({ id_token: tokens.id_token, refresh_token: tokens.refresh_token }));
      return tokens.claims();
    })());
  },
  refresh() {
    return outcome((async () => {
      const tokens = await oidc.refreshTokenGrant(await configured, stored('tokens').refresh_token);
      sessionStorage.setItem('tokens', JSON.stringify({ id_token: stored('tokens').id_token, refresh_token: tokens.refresh_token }));
      return true;
    })());
  },
  async logout() {
    const url = oidc.buildEndSessionUrl(await configured, { id_token_hint: stored('tokens').id_token, post_logout_redirect_uri: location.origin + '/signed-out' });
    location.assign(url.href);
  },
};
</script>
</head>
<body><main><h1>App</h1></main></body>
</html>`;

export interface SpaServer {
  origin: string;
  close(): Promise<void>;
}

/** Serves the app (`/`, `/callback`, `/signed-out`) and its modules on `port` of 127.0.0.1 (a loopback redirect URI). */
export async function startSpa(port: number, issuer: string, clientId: string): Promise<SpaServer> {
  const html = PAGE(issuer, clientId);
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://spa').pathname;
    if (path === '/' || path === '/callback' || path === '/signed-out') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html);
      return;
    }
    const prefix = Object.keys(LIBRARIES).find((p) => path.startsWith(p));
    const base = prefix ? LIBRARIES[prefix] : null;
    const full = base ? normalize(join(base, path.slice(prefix!.length))) : null;
    if (!base || !full || !full.startsWith(base) || !existsSync(full)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' }).end(readFileSync(full));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
