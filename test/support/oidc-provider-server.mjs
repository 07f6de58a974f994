// A real OpenID provider (panva's oidc-provider) for the federation tests, in its own process:
// it is an ES module with ES-module dependencies, which Node runs as they are.
// Env: REDIRECT_URIS (comma-separated), ACCOUNTS (JSON: accountId → claims), CLIENT_SECRET (optional).
// Prints one line of JSON: {"issuer": "http://127.0.0.1:<port>"}.
import http from 'node:http';
import Provider from 'oidc-provider';

const accounts = JSON.parse(process.env.ACCOUNTS ?? '{}');
const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
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
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'given_name', 'family_name', 'picture'] },
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  cookies: { keys: ['test-cookie-key'] },
  findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id, ...(accounts[id] ?? {}) }) }),
});
server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
