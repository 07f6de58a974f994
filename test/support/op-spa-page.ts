import { readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** oidc-client-ts as built for browsers: one script, an IIFE that defines the global `oidc`. */
const LIBRARY = join(__dirname, '../../node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js');

/**
 * A single-page app on an origin of its own: a public client of the realm that signs in with
 * oidc-client-ts (`UserManager`: the authorization code flow with PKCE by redirect, a nonce, the
 * profile merged from the ID token and userinfo), keeps its user in sessionStorage, refreshes
 * with its refresh token (`signinSilent`) and logs out through the end-session endpoint
 * (`signoutRedirect`). `window.app` is its API; every call answers `{ value }` or `{ error }`
 * (an OAuth error code when the provider sent one).
 */
const PAGE = (issuer: string, clientId: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>App</title>
<link rel="icon" href="data:,">
<script src="/lib/oidc-client-ts.min.js"></script>
<script>
const manager = new oidc.UserManager({
  authority: ${JSON.stringify(issuer)},
  client_id: ${JSON.stringify(clientId)},
  redirect_uri: location.origin + '/callback',
  post_logout_redirect_uri: location.origin + '/signed-out',
  scope: 'openid email',
  loadUserInfo: true,
  automaticSilentRenew: false,
});
const outcome = (work) => work.then((value) => ({ value }), (error) => ({ error: error.error ?? String(error) }));
const user = (u) => ({ profile: u.profile, idToken: u.id_token, scope: u.scope, refreshToken: u.refresh_token });
window.app = {
  /** Sends the browser to the authorization endpoint; the nonce is kept to be compared with the ID token's. */
  async login() {
    const nonce = crypto.randomUUID();
    sessionStorage.setItem('nonce', nonce);
    await manager.signinRedirect({ nonce, state: { from: 'login' } });
  },
  callback() {
    return outcome(manager.signinRedirectCallback().then((u) => ({ ...user(u), state: u.state, nonce: sessionStorage.getItem('nonce') })));
  },
  /** With a refresh token, signinSilent uses it (no iframe, no page). */
  refresh() {
    return outcome(manager.signinSilent().then(user));
  },
  async logout() {
    await manager.signoutRedirect({ state: { from: 'logout' } });
  },
  signedOut() {
    return outcome(manager.signoutRedirectCallback().then(async (response) => ({ state: response.userState, user: await manager.getUser() })));
  },
};
</script>
</head>
<body><main><h1>App</h1></main></body>
</html>`;

export interface SpaServer {
  origin: string;
  clientId: string;
  close(): Promise<void>;
}

/** Serves the app (`/`, `/callback`, `/signed-out`) and oidc-client-ts on `port` of 127.0.0.1 (a loopback redirect URI). */
export async function startSpa(port: number, issuer: string, clientId: string): Promise<SpaServer> {
  const html = PAGE(issuer, clientId);
  const library = readFileSync(LIBRARY);
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://spa').pathname;
    if (path === '/' || path === '/callback' || path === '/signed-out') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html);
    } else if (path === '/lib/oidc-client-ts.min.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' }).end(library);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, clientId, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
