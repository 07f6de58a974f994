// A real OpenID provider (panva's oidc-provider) for the federation tests, in its own process:
// it is an ES module with ES-module dependencies, which Node runs as they are.
// Env: REDIRECT_URIS (comma-separated), ACCOUNTS (JSON: accountId → claims), CLIENT_SECRET (optional).
// Prints one line of JSON: {"issuer": "http://127.0.0.1:<port>"}.
//
// A line of JSON on stdin, {"misbehave": <mode>, "location"?: <url>}, switches how it behaves
// from then on, answered by {"misbehave": <mode>} on stdout; null is the provider as it is:
// - "foreign-key": its ID tokens are signed by another key under the signing key's `kid`, one
//   its JWKS endpoint does not publish (a forger's);
// - "audience": its ID tokens name another client in `aud`;
// - "expired": its ID tokens expired an hour before they were issued;
// - "stall": its token endpoint accepts the request and never answers;
// - "redirect": its token endpoint answers 307 to `location`.
// {"count": <path>} is answered by {"count": <requests to that path so far>}.
import http from 'node:http';
import { createInterface } from 'node:readline';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, SignJWT } from 'jose';
import Provider from 'oidc-provider';

const accounts = JSON.parse(process.env.ACCOUNTS ?? '{}');
const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

/** An RS256 signing key as a private JWK, with a `kid`. */
async function signingKey(kid) {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}
const key = await signingKey('signing-key');
const forger = await importJWK(await signingKey(key.kid), 'RS256');

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'identity-service',
      ...(process.env.CLIENT_SECRET ? { client_secret: process.env.CLIENT_SECRET } : { token_endpoint_auth_method: 'none' }),
      redirect_uris: (process.env.REDIRECT_URIS ?? '').split(','),
      grant_types: ['authorization_code'],
      response_types: ['code'],
    },
  ],
  jwks: { keys: [key] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'given_name', 'family_name', 'picture'] },
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  cookies: { keys: ['test-cookie-key'] },
  findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id, ...(accounts[id] ?? {}) }) }),
});

let mode = null;
let location = null;

// The ID token as the provider makes it, unless a mode says otherwise.
const issue = provider.IdToken.prototype.issue;
provider.IdToken.prototype.issue = function (options = {}) {
  if (options.use === 'idtoken' && mode === 'audience') {
    const client = this.client;
    this.client = new Proxy(client, {
      get: (target, name) => {
        if (name === 'clientId') return 'another-client';
        const value = Reflect.get(target, name, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }
  if (options.use === 'idtoken' && mode === 'foreign-key') {
    return issue
      .call(this, options)
      .then((token) => new SignJWT(decodeJwt(token)).setProtectedHeader(decodeProtectedHeader(token)).sign(forger));
  }
  if (options.use === 'idtoken' && mode === 'expired') {
    return issue.call(this, { ...options, expiresAt: Math.floor(Date.now() / 1000) - 3600 });
  }
  return issue.call(this, options);
};

const stalled = new Set();
const requests = new Map();
const answer = provider.callback();
server.on('request', (req, res) => {
  const path = new URL(req.url, issuer).pathname;
  requests.set(path, (requests.get(path) ?? 0) + 1);
  if (req.method === 'POST' && path === '/token') {
    if (mode === 'stall') {
      stalled.add(req.socket);
      req.socket.once('close', () => stalled.delete(req.socket));
      return;
    }
    if (mode === 'redirect') {
      res.writeHead(307, { location });
      res.end();
      return;
    }
  }
  answer(req, res);
});

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if ('count' in message) {
    process.stdout.write(`${JSON.stringify({ count: requests.get(message.count) ?? 0 })}\n`);
    return;
  }
  mode = message.misbehave ?? null;
  location = message.location ?? null;
  if (mode !== 'stall') for (const socket of stalled) socket.destroy();
  process.stdout.write(`${JSON.stringify({ misbehave: mode })}\n`);
});
// The tests stop it with SIGTERM; a stalled request must not hold it open.
process.once('SIGTERM', () => {
  for (const socket of stalled) socket.destroy();
  process.exit(0);
});
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
