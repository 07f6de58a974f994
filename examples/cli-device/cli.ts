/**
 * A command-line tool that signs its user in with the device authorization grant (RFC 8628,
 * openid-client) and calls an API protected by the verifier with the token it got: it prints
 * where to go and the code to type, waits while the user signs in on the service's device page
 * (in any browser, on any device), then prints the API's answer.
 *
 * Run it: `node examples/run.mjs cli-device` (see docs/command-line-tools.md).
 */
import * as oidc from 'openid-client';

export interface CliOptions {
  /** The realm's issuer, e.g. `http://localhost:3000/realms/default`. */
  issuer: string;
  /** A public client of the realm allowed the device code grant. */
  clientId: string;
  /** The API's resource identifier (its tokens' `aud`). */
  resource: string;
  /** The scopes to ask for: the API's (and `offline_access` for a refresh token). */
  scope: string;
  /** The API URL to call with the token. */
  apiUrl: string;
  /** Where the tool's lines go (default: the console). */
  print?: (line: string) => void;
  /** Stops waiting for the user. */
  signal?: AbortSignal;
}

/** Signs in and calls the API once; resolves with the API's status and JSON answer. */
export async function signInAndCall(options: CliOptions): Promise<{ status: number; body: unknown }> {
  const print = options.print ?? ((line: string) => console.warn(line));
  const issuer = new URL(options.issuer);
  // openid-client refuses plain http unless told: allowed for a service on this machine only.
  const local = issuer.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(issuer.hostname);
  const config = await oidc.discovery(
    issuer,
    options.clientId,
    undefined,
    oidc.None(),
    local ? { execute: [oidc.allowInsecureRequests] } : undefined,
  );

  const started = await oidc.initiateDeviceAuthorization(config, { scope: options.scope, resource: options.resource });
  print(`To sign in, open ${started.verification_uri} and enter the code ${started.user_code}`);
  if (started.verification_uri_complete) print(`(or open ${started.verification_uri_complete})`);

  const tokens = await oidc.pollDeviceAuthorizationGrant(config, started, { resource: options.resource }, { signal: options.signal });
  print('Signed in.');

  const res = await fetch(options.apiUrl, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  const body: unknown = await res.json().catch(() => null);
  print(`${options.apiUrl} answered ${res.status}: ${JSON.stringify(body)}`);
  return { status: res.status, body };
}

/** From the environment: ISSUER, CLIENT_ID, RESOURCE, SCOPE, API_URL. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const missing = ['ISSUER', 'CLIENT_ID', 'RESOURCE', 'API_URL'].filter((name) => !env[name]);
  if (missing.length) throw new Error(`set ${missing.join(', ')}`);
  const { status } = await signInAndCall({
    issuer: env.ISSUER as string,
    clientId: env.CLIENT_ID as string,
    resource: env.RESOURCE as string,
    scope: env.SCOPE ?? '',
    apiUrl: env.API_URL as string,
  });
  process.exitCode = status === 200 ? 0 : 1;
}
