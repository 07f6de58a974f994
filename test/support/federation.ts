import { createHash, randomBytes } from 'node:crypto';
import { ADMIN_ENV, adminApi, superAdmin } from './admin-flows';
import { uniqueEmail } from './flows';
import { ProviderAccount, TestOidcProvider } from './oidc-provider';
import { createTestApp, TestApp, TestAppOptions } from './test-app';

/** The provider runs on loopback over http: both allowances are needed to reach it. */
export const FEDERATION_ENV: Record<string, string> = {
  ...ADMIN_ENV,
  IDP_ALLOW_HTTP: 'true',
  IDP_ALLOW_PRIVATE_NETWORKS: 'true',
};
export const CLIENT_ID = 'identity-service';
export const CLIENT_SECRET = 'idp-client-secret';
export const EXCHANGE = '/api/v1/auth/federation/exchange';

/** An app's PKCE pair (RFC 7636 S256). */
export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** An account at the provider: a unique address, verified or not, and a name. */
export function providerAccount(name: string, emailVerified = true): Required<Omit<ProviderAccount, 'name'>> {
  return {
    email: uniqueEmail(name),
    email_verified: emailVerified,
    given_name: name[0].toUpperCase() + name.slice(1),
    family_name: 'Tester',
  };
}

interface HarnessOptions {
  accounts: Record<string, ProviderAccount>;
  /** Aliases whose callbacks the provider accepts; the first is registered in realm default. */
  aliases?: string[];
  clientSecret?: string;
}

interface FlowOptions {
  alias?: string;
  /** X-Realm-Id of the start. */
  realm?: string;
  cancel?: boolean;
  challenge?: string;
  headers?: Record<string, string>;
  body?: object;
  /** The instance the flow starts on (default: the harness's). */
  startOn?: TestApp;
  /** The instance the provider's redirect lands on and the code is exchanged on (default: the harness's). */
  app?: TestApp;
}

/**
 * An app and a real OpenID provider (oidc-provider in its own process) registered in it as
 * `aliases[0]` (and the further aliases, same provider), with the walk through the provider's
 * pages a browser makes.
 */
export class FederationHarness {
  private constructor(
    readonly t: TestApp,
    readonly idp: TestOidcProvider,
    readonly rootToken: string,
    readonly clientSecret: string,
    private readonly ownsApp: boolean,
  ) {}

  /** A new app (FEDERATION_ENV and `options.app`) with the provider registered. */
  static async start(options: HarnessOptions & { app?: TestAppOptions }): Promise<FederationHarness> {
    const t = await createTestApp({ ...options.app, env: { ...FEDERATION_ENV, ...options.app?.env } });
    return FederationHarness.attach(t, options, true);
  }

  /** The provider registered in an app of the caller's (which needs FEDERATION_ENV's settings and stays open at `stop`). */
  static async attach(t: TestApp, options: HarnessOptions, ownsApp = false): Promise<FederationHarness> {
    const aliases = options.aliases ?? ['corp'];
    const clientSecret = options.clientSecret ?? CLIENT_SECRET;
    const idp = await TestOidcProvider.start({
      redirectUris: aliases.map((alias) => `${t.config.apiUrl}/api/v1/auth/federation/${alias}/callback`),
      accounts: options.accounts,
      clientSecret,
    });
    const harness = new FederationHarness(t, idp, (await superAdmin(t)).accessToken, clientSecret, ownsApp);
    await harness.register(aliases[0]);
    return harness;
  }

  async stop(): Promise<void> {
    await this.idp?.stop();
    if (this.ownsApp) await this.t?.close();
  }

  returnTo(): string {
    return `${this.t.config.apiUrl}/account/callback`;
  }

  /** Registers the provider in `realm` as `alias` through the admin API. */
  async register(alias: string, realm = 'default', fields: Record<string, unknown> = {}) {
    const res = await adminApi(this.t, this.rootToken, realm)
      .post('/identity-providers')
      .send({
        alias,
        displayName: `SSO ${alias}`,
        issuer: this.idp.issuer,
        clientId: CLIENT_ID,
        clientSecret: this.clientSecret,
        ...fields,
      });
    if (res.status !== 201) throw new Error(`registering ${alias} failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.identityProvider;
  }

  /** POST /federation/:alias/start; returns the answer and the app's PKCE verifier. */
  async start(options: FlowOptions = {}) {
    const { verifier, challenge } = pkce();
    const req = (options.startOn ?? this.t).api().post(`/api/v1/auth/federation/${options.alias ?? 'corp'}/start`);
    if (options.realm) req.set('X-Realm-Id', options.realm);
    for (const [k, v] of Object.entries(options.headers ?? {})) req.set(k, v);
    const res = await req.send({ returnTo: this.returnTo(), codeChallenge: options.challenge ?? challenge, ...options.body });
    return { res, verifier };
  }

  /** The callback as the browser calls it, on `app` (default: the harness's). */
  callback(back: string, app = this.t) {
    return app.api().get(back.slice(app.config.apiUrl.length));
  }

  /** start → the provider's pages → the URL the provider sends the browser back to (not yet followed). */
  async toCallback(account: string, options: FlowOptions = {}) {
    const { res, verifier } = await this.start(options);
    if (res.status !== 200) throw new Error(`start failed: ${res.status} ${JSON.stringify(res.body)}`);
    const back = await this.idp.signIn(res.body.authorizationUrl, account, { cancel: options.cancel });
    return { back, verifier, authorizationUrl: res.body.authorizationUrl as string };
  }

  /** start → the provider's pages → callback: the redirect the service answers with. */
  async throughProvider(account: string, options: FlowOptions = {}) {
    const { back, verifier, authorizationUrl } = await this.toCallback(account, options);
    const callback = await this.callback(back, options.app);
    if (callback.status !== 303) throw new Error(`callback answered ${callback.status} ${JSON.stringify(callback.body)}`);
    return { location: new URL(callback.headers.location), verifier, authorizationUrl, back };
  }

  /** POST /federation/exchange on `app`. */
  exchange(code: string | null, codeVerifier: string, options: { app?: TestApp; headers?: Record<string, string>; realm?: string } = {}) {
    const req = (options.app ?? this.t).api().post(EXCHANGE);
    if (options.realm) req.set('X-Realm-Id', options.realm);
    for (const [k, v] of Object.entries(options.headers ?? {})) req.set(k, v);
    return req.send({ code, codeVerifier });
  }

  /** A whole federated sign-in: the exchange's answer. */
  async signIn(account: string, options: FlowOptions & { exchangeHeaders?: Record<string, string> } = {}) {
    const { location, verifier } = await this.throughProvider(account, options);
    const code = location.searchParams.get('code');
    if (!code) throw new Error(`no login code: ${location.href}`);
    return this.exchange(code, verifier, { app: options.app, headers: options.exchangeHeaders, realm: options.realm });
  }

  /**
   * Starts a link of `account` at the provider for the signed-in user of `accessToken` ({"link": true})
   * and walks the provider's pages: where the browser is sent back to (`link_code` or `error`), and
   * the start's verifier.
   */
  async linkAtProvider(account: string, accessToken: string, options: FlowOptions = {}): Promise<{ location: URL; verifier: string }> {
    const headers = { Authorization: `Bearer ${accessToken}`, ...options.headers };
    const { location, verifier } = await this.throughProvider(account, { ...options, headers, body: { link: true, ...options.body } });
    return { location, verifier };
  }

  /** POST /federation/link with a link code, a verifier and an access token. */
  finishLink(code: string | null, codeVerifier: string, accessToken: string, app = this.t) {
    return app.api().post('/api/v1/auth/federation/link').set('Authorization', `Bearer ${accessToken}`).send({ code, codeVerifier });
  }

  /**
   * A whole link as the browser that started it makes it: the provider's pages, then the link code
   * posted with the start's verifier. The answer of POST /federation/link, or the refusal's
   * redirect when the callback refused (`location`).
   */
  async link(account: string, accessToken: string, options: FlowOptions = {}) {
    const { location, verifier } = await this.linkAtProvider(account, accessToken, options);
    const code = location.searchParams.get('link_code');
    if (!code) return { location, res: null };
    return { location, res: await this.finishLink(code, verifier, accessToken, options.app) };
  }

  /** GET /identities of the signed-in user of `accessToken`. */
  async identities(accessToken: string): Promise<{ id: string; provider: string; subject: string; email: string | null }[]> {
    const res = await this.t.api().get('/api/v1/auth/identities').set('Authorization', `Bearer ${accessToken}`);
    if (res.status !== 200) throw new Error(`GET /identities answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.identities;
  }
}
