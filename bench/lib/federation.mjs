// The `federation` scenario: one federated sign-in (start, the provider's redirect to the
// callback, exchange) against a real OpenID provider — the tests' oidc-provider — running in a
// process of its own, so its work is not the server's.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { walkProviderPages } from '../../test/support/oidc-provider-pages.mjs';

const SUPPORT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'support');
const ALIAS = 'bench-idp';
const ACCOUNT = 'bench-federated';
const CLIENT_ID = 'identity-service';

/** oidc-provider-server.mjs with one account and the service's callback; resolves once it listens. */
async function startProvider({ redirectUri, email, clientSecret }) {
  const child = spawn(process.execPath, [path.join(SUPPORT, 'oidc-provider-server.mjs')], {
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      REDIRECT_URIS: redirectUri,
      ACCOUNTS: JSON.stringify({ [ACCOUNT]: { email, email_verified: true, given_name: 'Bench', family_name: 'Federated' } }),
      CLIENT_SECRET: clientSecret,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the provider exited (${code})`)));
  });
  return {
    issuer: JSON.parse(line).issuer,
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill();
      await exited;
    },
  };
}

/**
 * The scenario for `measureScenario`: `flow` is one whole sign-in of a user already linked (the
 * first one, in `setup`, registers it and goes through the provider's login and consent pages;
 * later ones keep the provider's session, which sends the browser straight back). The provider's
 * process is named in `otherPids`, so that its CPU is counted apart from the server's.
 */
export function federationScenario({ origin, call, adminAccess, tag, fingerprint, clientHeaders }) {
  let provider = null;
  const jar = new Map();
  const signIn = async () => {
    const verifier = randomBytes(32).toString('base64url');
    const codeChallenge = createHash('sha256').update(verifier).digest('base64url');
    const started = await call(origin, 'POST', `/api/v1/auth/federation/${ALIAS}/start`, {
      body: { returnTo: `${origin}/account/callback`, codeChallenge, deviceFingerprint: fingerprint },
    });
    if (started.status !== 200) throw new Error(`start → ${started.status} ${started.text.slice(0, 200)}`);
    const back = await walkProviderPages(provider.issuer, started.json.authorizationUrl, ACCOUNT, { jar });
    const callback = await fetch(back, { redirect: 'manual', headers: clientHeaders });
    await callback.arrayBuffer();
    const location = new URL(callback.headers.get('location') ?? '', origin);
    const code = location.searchParams.get('code');
    if (callback.status !== 303 || !code) throw new Error(`callback → ${callback.status} ${location.search}`);
    const exchanged = await call(origin, 'POST', '/api/v1/auth/federation/exchange', {
      body: { code, codeVerifier: verifier, deviceFingerprint: fingerprint },
    });
    if (exchanged.status !== 200) throw new Error(`exchange → ${exchanged.status} ${exchanged.text.slice(0, 200)}`);
  };
  return {
    name: 'federation',
    what:
      `one federated sign-in of a linked user: POST /federation/${ALIAS}/start, GET its callback (the code redeemed at the ` +
      'provider, the ID token checked against its JWKS), POST /federation/exchange; the provider (oidc-provider) in its own process',
    flow: signIn,
    otherPids: () => (provider ? [provider.pid] : []),
    setup: async () => {
      const clientSecret = randomBytes(24).toString('base64url');
      provider = await startProvider({
        redirectUri: `${origin}/api/v1/auth/federation/${ALIAS}/callback`,
        email: `federated.${tag}@bench.example.com`,
        clientSecret,
      });
      const created = await call(origin, 'POST', '/v1/admin/identity-providers', {
        body: { alias: ALIAS, displayName: 'Bench provider', issuer: provider.issuer, clientId: CLIENT_ID, clientSecret },
        headers: { authorization: `Bearer ${adminAccess}`, 'x-realm-id': 'default' },
      });
      if (created.status !== 201) throw new Error(`registering the provider → ${created.status} ${created.text.slice(0, 200)}`);
      await signIn();
    },
    teardown: () => provider?.stop(),
  };
}
