import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Injectable, Logger } from '@nestjs/common';
import { ACCESS_TOKEN_ALGORITHM, realmIssuer } from '../../application/ports/access-tokens';
import { DPOP_PROOF_ALGORITHMS } from '../../application/ports/dpop-proof-verifier';
import { Clock } from '../../application/ports/clock';
import { OpClients, OpResource } from '../../application/ports/op-clients';
import { SessionRepository } from '../../application/ports/session.repository';
import { SignInHooks } from '../../application/ports/sign-in-hooks';
import { UserRepository } from '../../application/ports/user.repository';
import { RealmDirectory } from '../../application/realm/realm-directory';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { User } from '../../domain/user/user';
import { TypeOrmServerSecrets } from '../persistence/typeorm-server-secrets';
import { TypeOrmOpArtifacts } from '../persistence/typeorm-op-artifacts';
import { OP_SCOPES, opAdapterFor } from './op-artifact-adapter';
import { OpSigningKeys } from './op-signing-keys';
import { OidcClient, OidcContext, OidcProvider, oidcProviderLibrary, OidcProviderModule, OidcSession } from './oidc-provider-library';
import {
  deviceCodePage,
  deviceConfirmPage,
  deviceDonePage,
  LOGOUT_AUTO_SUBMIT,
  logoutPage,
  renderProviderError,
  signedOutPage,
} from './op-pages';
import { SignOutFromAppUseCase } from '../../application/apps/sign-out-from-app.use-case';
import { OutboundConnector } from '../outbound/outbound-connector';

/** What `extraTokenClaims` reads of a token the library is about to issue. */
interface OpAccessToken {
  kind: string;
  accountId?: string;
  resourceServer?: unknown;
  clientId?: string;
  scope?: string;
  /** The service session's id (`patchProvider` makes the provider's `sid` ours). */
  sid?: string;
}

/** Realm ids as the service accepts them: a realm path segment that is not one is never looked up. */
export const REALM_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** The claims each OpenID scope releases (userinfo). */
const CLAIMS = {
  // The claims the library sets itself; `openid` releases amr and auth_time into every ID token.
  acr: null,
  amr: null,
  auth_time: null,
  iss: null,
  sid: null,
  openid: ['sub', 'amr', 'auth_time'],
  profile: ['name', 'given_name', 'family_name', 'picture', 'updated_at'],
  email: ['email', 'email_verified'],
  roles: ['roles'],
};
const CODE_TTL_SECONDS = 60;
/** A device's user code and device code live this long (RFC 8628). */
export const DEVICE_CODE_TTL_SECONDS = 600;
const ID_TOKEN_TTL_SECONDS = 3600;
const INTERACTION_TTL_SECONDS = 600;
/** A consent is remembered this long (or until the user revokes it). */
const GRANT_TTL_SECONDS = 365 * 86_400;
const REFRESH_TOKEN_TTL_SECONDS = 30 * 86_400;

/** Dynamic client registration by the realm's `clientRegistration` setting: `closed` unless set. */
export function clientRegistration(realm: Realm): 'closed' | 'token' | 'open' {
  const mode = (realm.settings as { clientRegistration?: unknown }).clientRegistration;
  return mode === 'token' || mode === 'open' ? mode : 'closed';
}

/** Extra metadata the provider keeps with each client, under the names op-artifact-adapter.ts gives it. */
interface ClientExtras {
  firstParty: boolean;
  resources: OpResource[];
  accessTokenTtl: number | undefined;
}
function extras(client: OidcClient | undefined): ClientExtras {
  return {
    firstParty: client?.first_party === true,
    resources: Array.isArray(client?.resources) ? (client.resources as OpResource[]) : [],
    accessTokenTtl: typeof client?.access_token_ttl === 'number' ? client.access_token_ttl : undefined,
  };
}

/**
 * Each realm's OpenID provider (panva's oidc-provider, one instance per issuer): made on the first
 * request to the realm's provider endpoints, kept, and made again when the keys or the realm's
 * settings change. Everything it stores goes to `op_artifacts`; its clients come from OpClients.
 */
@Injectable()
export class RealmProviders {
  private readonly logger = new Logger('OpenIdProvider');
  private readonly providers = new Map<string, { version: string; provider: Promise<OidcProvider> }>();

  constructor(
    private readonly config: AppConfig,
    private readonly realms: RealmDirectory,
    private readonly users: UserRepository,
    private readonly sessions: SessionRepository,
    private readonly clients: OpClients,
    private readonly artifacts: TypeOrmOpArtifacts,
    private readonly keys: OpSigningKeys,
    private readonly secrets: TypeOrmServerSecrets,
    private readonly clock: Clock,
    private readonly hooks: SignInHooks,
    private readonly signOut: SignOutFromAppUseCase,
    private readonly connector: OutboundConnector,
  ) {}

  /**
   * The provider's requests out (a client's `jwks_uri` for `private_key_jwt`) follow the webhooks'
   * address rules through the outbound connector, instead of the library's own fetch.
   */
  private readonly outboundFetch = (url: string, options: RequestInit): Promise<Response> =>
    this.connector.fetcher({
      allowHttp: this.config.webhookAllowHttp,
      allowPrivateNetworks: this.config.webhookAllowPrivateNetworks,
      field: 'jwksUri',
      timeoutMs: this.config.webhookTimeoutMs,
    })(url, { method: options.method, headers: options.headers, body: options.body });

  /** The realm, or null when there is none by that id. */
  async realm(id: string): Promise<Realm | null> {
    return REALM_ID.test(id) ? this.realms.find(id) : null;
  }

  /** The realm's provider, made or remade as needed. */
  async providerFor(realm: Realm): Promise<OidcProvider> {
    const keySet = await this.keys.keySet();
    const version = `${keySet.version}|${realm.updatedAt.toISOString()}|${this.config.issuer}`;
    const cached = this.providers.get(realm.id);
    if (cached && cached.version === version) return cached.provider;
    const provider = this.build(realm, keySet.keys);
    provider.catch(() => {
      if (this.providers.get(realm.id)?.provider === provider) this.providers.delete(realm.id);
    });
    this.providers.set(realm.id, { version, provider });
    return provider;
  }

  /** How many realms have a provider in memory. */
  get loaded(): number {
    return this.providers.size;
  }

  /** The realm's issuer. */
  issuerOf(realmId: string): string {
    return realmIssuer(this.config.issuer, realmId);
  }

  /** Wrong device codes a browser (`key`) entered in its current window (TypeOrmOpArtifacts). */
  deviceCodeFailures(realmId: string, key: string): Promise<{ count: number; retryAfterSeconds: number }> {
    return this.artifacts.deviceCodeFailures(realmId, key);
  }

  /** Counts one more wrong device code of `key`; returns the count in its window. */
  addDeviceCodeFailure(realmId: string, key: string, windowSeconds: number): Promise<number> {
    return this.artifacts.addDeviceCodeFailure(realmId, key, windowSeconds);
  }

  /** A keyed hash for the interaction pages' CSRF tokens, shared by every instance. */
  async formSecret(): Promise<Buffer> {
    return Buffer.from(await this.secrets.get('op-form-secret', () => randomBytes(32).toString('base64url')), 'utf8');
  }

  private async build(realm: Realm, jwks: Record<string, unknown>[]): Promise<OidcProvider> {
    const library = await oidcProviderLibrary();
    const cookieKey = await this.secrets.get('op-cookie-key', () => randomBytes(32).toString('base64url'));
    const provider = new library.default(this.issuerOf(realm.id), this.configuration(library, realm, jwks, cookieKey));
    // The mount names API_URL's host and scheme in X-Forwarded-Host/-Proto (op-mount.ts).
    provider.proxy = true;
    patchProvider(provider);
    this.endServiceSessionOnLogout(library, provider, realm);
    provider.on('server_error', (_ctx: unknown, error: unknown) => this.logger.error(`realm ${realm.id}: ${String(error)}`));
    return provider;
  }

  /**
   * RP-initiated logout ends the service's session: the provider destroys its own session only
   * once the user confirmed on the logout page (its form's xsrf checked), and the service's is
   * revoked just before, while the provider's still names the apps that were signed in with it.
   */
  private endServiceSessionOnLogout(library: OidcProviderModule, provider: OidcProvider, realm: Realm): void {
    const signOut = this.signOut;
    const destroy = provider.Session.prototype.destroy as (this: OidcSession) => Promise<void>;
    provider.Session.prototype.destroy = async function (this: OidcSession) {
      const ctx = library.default.ctx;
      if (this.serviceSessionId && this.accountId) {
        await signOut.execute({
          realmId: realm.id,
          sessionId: this.serviceSessionId,
          userId: this.accountId,
          clientId: (this as { state?: { clientId?: string } }).state?.clientId ?? null,
          ip: (ctx?.req as (IncomingMessage & { ip?: string }) | undefined)?.ip ?? '',
        });
      }
      return destroy.call(this);
    };
  }

  private configuration(
    library: OidcProviderModule,
    realm: Realm,
    jwks: Record<string, unknown>[],
    cookieKey: string,
  ): Record<string, unknown> {
    const realmId = realm.id;
    const { users, sessions, clock, hooks } = this;
    const policy = realm.policy;
    const { errors, interactionPolicy } = library;
    const { Check } = interactionPolicy;
    const prompts = interactionPolicy.base();
    // Native apps (loopback and private-use redirects, which another app may claim) are asked for
    // consent every time (RFC 8252 §8.6), unless they are first-party.
    const consentChecks = prompts.get('consent')!.checks;
    const native = consentChecks.findIndex((check) => check.reason === 'native_client_prompt');
    consentChecks.splice(native, 1);
    consentChecks.add(
      new Check('native_client_prompt', 'native clients require End-User interaction', 'interaction_required', (ctx) => {
        const client = ctx.oidc.client!;
        const asked = client.applicationType === 'native' && !extras(client).firstParty && !ctx.oidc.result?.consent;
        return asked ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT;
      }),
      0,
    );
    // Our session behind the provider's: revoked or ended (idle, absolute lifetime, logout
    // anywhere) → a sign-in again, even for a browser that still holds the provider's cookie.
    // So does a session flagged as used from another device: it signs no app in, and grants none.
    prompts.get('login')!.checks.add(
      new Check('service_session_ended', 'End-User authentication is required', 'login_required', async (ctx) => {
        const session = ctx.oidc.session;
        if (!session?.accountId || ctx.oidc.result?.login) return Check.NO_NEED_TO_PROMPT;
        const sid = session.serviceSessionId;
        if (!sid) return Check.REQUEST_PROMPT;
        const ours = await sessions.findById(realmId, sid);
        const usable = ours !== null && ours.isLive(clock.now(), policy.sessionLifetime) && ours.status !== 'flagged';
        return usable ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT;
      }),
      0,
    );
    const resourceInfo = (client: OidcClient, indicator: string) => {
      const resource = extras(client).resources.find((r) => r.identifier === indicator);
      if (!resource) throw new errors.InvalidTarget('the resource is not one this client may use');
      return {
        scope: resource.scopes.join(' '),
        audience: resource.identifier,
        accessTokenTTL: extras(client).accessTokenTtl ?? resource.accessTokenTtlSeconds ?? policy.accessTokenTtlSeconds,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: ACCESS_TOKEN_ALGORITHM } },
      };
    };
    return {
      adapter: opAdapterFor(realmId, this.artifacts, this.clients),
      jwks: { keys: jwks },
      cookies: {
        names: { session: 'op_session', interaction: 'op_interaction', resume: 'op_resume' },
        // Lax: the top-level navigation from an app to the authorization endpoint carries them.
        long: { httpOnly: true, sameSite: 'lax', signed: true, path: `/realms/${realmId}` },
        short: { httpOnly: true, sameSite: 'lax', signed: true, path: `/realms/${realmId}` },
        keys: [cookieKey],
      },
      fetch: this.outboundFetch,
      claims: CLAIMS,
      // The registration endpoint is the service's own (op-registration.ts), published while open to registrations.
      discovery: realm.policy.clientRegistration === 'closed' ? {} : { registration_endpoint: `${this.issuerOf(realmId)}/reg` },
      scopes: OP_SCOPES,
      responseTypes: ['code'],
      subjectTypes: ['public'],
      clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        id_token_signed_response_alg: 'RS256',
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      extraClientMetadata: { properties: ['first_party', 'resources', 'access_token_ttl'] },
      allowOmittingSingleRegisteredRedirectUri: false,
      pkce: { required: () => true },
      // A client allowed the refresh_token grant gets a refresh token; without offline_access (and
      // its consent) it ends with the session it was issued in.
      issueRefreshToken: async (_ctx: OidcContext, client: OidcClient) => client.grantTypeAllowed('refresh_token'),
      conformIdTokenClaims: true,
      enabledJWA: {
        idTokenSigningAlgValues: ['RS256', 'ES256'],
        clientAuthSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
        dPoPSigningAlgValues: DPOP_PROOF_ALGORITHMS,
      },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        introspection: {
          enabled: true,
          // Confidential clients, on their own tokens only.
          allowedPolicy: (_ctx: OidcContext, client: OidcClient, token: { clientId?: string }) =>
            client.clientAuthMethod !== 'none' && token.clientId === client.clientId,
        },
        revocation: {
          enabled: true,
          allowedPolicy: (_ctx: OidcContext, client: OidcClient, token: { clientId?: string }) => token.clientId === client.clientId,
        },
        userinfo: { enabled: true },
        dPoP: { enabled: true },
        rpInitiatedLogout: {
          enabled: true,
          logoutSource: async (ctx: OidcContext, form: string) => logoutSource(ctx, form, realm),
          postLogoutSuccessSource: async (ctx: OidcContext) => {
            ctx.body = signedOutPage(realm.name);
          },
        },
        // RFC 8628: codes of 8 letters of BCDFGHJKLMNPQRSTVWXZ shown as XXXX-XXXX, on the service's pages.
        deviceFlow: {
          enabled: true,
          charset: 'base-20',
          mask: '****-****',
          userCodeInputSource: async (ctx: OidcContext, form: string, _out: unknown, error?: Error & { userCode?: string }) => {
            ctx.body = deviceCodePage(realm.name, libraryForm(form), { error: deviceCodeError(error), code: error?.userCode });
          },
          userCodeConfirmSource: async (ctx: OidcContext, form: string, client: OidcClient, _info: unknown, userCode: string) => {
            const name = String(client.clientName ?? client.clientId);
            ctx.body = deviceConfirmPage(realm.name, name, { ...libraryForm(form), code: userCode });
          },
          successSource: async (ctx: OidcContext) => {
            ctx.body = deviceDonePage(realm.name);
          },
        },
        // Logout tokens go out from the outbox when the service's session ends (BackchannelLogoutDispatcher).
        backchannelLogout: { enabled: true },
        registration: { enabled: false },
        resourceIndicators: {
          enabled: true,
          defaultResource: (_ctx: OidcContext, _client: OidcClient, oneOf?: string) => oneOf,
          useGrantedResource: () => false,
          getResourceServerInfo: (_ctx: OidcContext, indicator: string, client: OidcClient) => resourceInfo(client, indicator),
        },
      },
      interactions: {
        policy: prompts,
        url: (_ctx: OidcContext, interaction: { uid: string }) => `/realms/${realmId}/interaction/${interaction.uid}`,
      },
      ttl: {
        AccessToken: (_ctx: OidcContext, token: { resourceServer?: { accessTokenTTL?: number } }, client: OidcClient) =>
          token.resourceServer?.accessTokenTTL ?? extras(client).accessTokenTtl ?? policy.accessTokenTtlSeconds,
        ClientCredentials: (_ctx: OidcContext, token: { resourceServer?: { accessTokenTTL?: number } }, client: OidcClient) =>
          token.resourceServer?.accessTokenTTL ?? extras(client).accessTokenTtl ?? policy.accessTokenTtlSeconds,
        AuthorizationCode: CODE_TTL_SECONDS,
        DeviceCode: DEVICE_CODE_TTL_SECONDS,
        IdToken: ID_TOKEN_TTL_SECONDS,
        Interaction: INTERACTION_TTL_SECONDS,
        Session: policy.sessionLifetime.maxLifetimeSeconds,
        Grant: GRANT_TTL_SECONDS,
        RefreshToken: REFRESH_TOKEN_TTL_SECONDS,
      },
      // First-party clients never ask for consent: their grant covers whatever they request.
      loadExistingGrant: async (ctx: OidcContext) => {
        const { oidc } = ctx;
        const session = oidc.session!;
        const client = oidc.client!;
        const signedIn = oidc.result?.login?.serviceSessionId;
        if (signedIn) session.serviceSessionId = signedIn;
        // The ID token's `sid` is our session's id (the one GET /sessions lists).
        if (session.serviceSessionId) session.sidFor(client.clientId, session.serviceSessionId);
        const grantId = (oidc.result?.consent as { grantId?: string } | undefined)?.grantId ?? session.grantIdFor(client.clientId);
        const existing = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
        if (!extras(client).firstParty || !session.accountId) return existing;
        const grant = existing ?? new oidc.provider.Grant({ accountId: session.accountId, clientId: client.clientId });
        const requested = String(oidc.params?.scope ?? '')
          .split(' ')
          .filter((scope) => OP_SCOPES.includes(scope));
        if (requested.length) grant.addOIDCScope(requested.join(' '));
        const resource = oidc.params?.resource;
        for (const indicator of Array.isArray(resource) ? resource : resource ? [resource] : []) {
          grant.addResourceScope(String(indicator), resourceInfo(client, String(indicator)).scope);
        }
        await grant.save();
        return grant;
      },
      findAccount: async (_ctx: OidcContext, sub: string) => {
        const user = await users.findById(realmId, sub);
        if (!user) return undefined;
        return { accountId: sub, claims: async (_use: string, scope: string) => claimsOf(user, scope) };
      },
      extraTokenClaims: async (ctx: OidcContext, token: OpAccessToken) => {
        if (token.kind === 'ClientCredentials') return { realm: realmId };
        if (token.kind !== 'AccessToken' || !token.resourceServer || !token.accountId) return undefined;
        const scopes = ctx.oidc.entities.Grant?.getOIDCScope().split(' ') ?? [];
        const user = await users.findById(realmId, token.accountId);
        // The realm's token-claims hook; the token's own claims (and the library's) win over its.
        const asked =
          user && hooks.tokenClaims({ realm, user, sessionId: token.sid ?? '', amr: [], clientId: token.clientId, scope: token.scope });
        const added = asked
          ? await asked.catch((error: unknown) => {
              if (error instanceof DomainError && error.code === 'HOOK_FAILED') throw new errors.TemporarilyUnavailable(error.message);
              throw error;
            })
          : null;
        return { ...added, realm: realmId, ...(scopes.includes('roles') ? { roles: user?.roles ?? [] } : {}) };
      },
      renderError: async (ctx: OidcContext, out: Record<string, string>) => {
        ctx.type = 'html';
        ctx.body = renderProviderError(out);
      },
    };
  }
}

/** Where the library's own form posts and its xsrf value: the service's pages post the same. */
function libraryForm(html: string): { action: string; xsrf: string } {
  return {
    action: /action="([^"]+)"/.exec(html)?.[1] ?? '',
    xsrf: /name="xsrf" value="([^"]+)"/.exec(html)?.[1] ?? '',
  };
}

/** What the device page says about the library's answer to an entered code. */
function deviceCodeError(error: Error | undefined): string | null {
  switch (error?.name) {
    case undefined:
      return null;
    case 'NotFoundError':
    case 'NoCodeError':
      return 'That code is not valid. Check the code on your device and try again.';
    case 'ExpiredError':
      return 'That code has expired. Start again on your device.';
    case 'AlreadyUsedError':
      return 'That code has already been used. Start again on your device.';
    case 'AbortedError':
      return 'The device was not connected.';
    default:
      return 'This request cannot be completed. Start again on your device.';
  }
}

/**
 * The service's logout page. The app's ID token naming this very session (its `sid`) needs no
 * confirmation: the form submits itself. The page's CSP is the console's, allowing the app's
 * post-logout address as a form target (the confirmation redirects there) and, for the form that
 * submits itself, that one script by its hash.
 */
function logoutSource(ctx: OidcContext, form: string, realm: Realm): void {
  const { session, params, client, entities } = ctx.oidc;
  const { action, xsrf } = libraryForm(form);
  const hint = (entities.IdTokenHint as { payload?: { sid?: unknown; sub?: unknown } } | undefined)?.payload;
  const automatic = !!hint && !!session?.serviceSessionId && hint.sid === session.serviceSessionId && hint.sub === session.accountId;
  // The mount answers the logout pages under the console's CSP (op-mount.ts); this page widens it.
  let csp = ctx.response.get('content-security-policy');
  const returnTo = typeof params?.post_logout_redirect_uri === 'string' ? params.post_logout_redirect_uri : null;
  const returnOrigin = returnTo && /^https?:/.test(returnTo) ? new URL(returnTo).origin : null;
  if (returnOrigin) csp = csp.replace("form-action 'self'", `form-action 'self' ${returnOrigin}`);
  if (automatic) {
    const digest = createHash('sha256').update(LOGOUT_AUTO_SUBMIT).digest('base64');
    csp = csp.replace("script-src 'self'", `script-src 'self' 'sha256-${digest}'`);
  }
  if (csp) ctx.set('content-security-policy', csp);
  ctx.body = logoutPage(
    { realmName: realm.name, clientName: client ? String(client.clientName ?? client.clientId) : null },
    { action, xsrf },
    automatic,
  );
}

/** The claims of `scope` (space-separated) for the user. */
export function claimsOf(user: User, scope: string): Record<string, unknown> {
  const scopes = new Set(scope.split(' '));
  const claims: Record<string, unknown> = { sub: user.id };
  if (scopes.has('profile')) {
    const { firstName, lastName, avatar } = user.profile;
    claims.name = [firstName, lastName].filter(Boolean).join(' ');
    claims.given_name = firstName;
    claims.family_name = lastName;
    claims.picture = avatar;
    claims.updated_at = Math.floor(user.snapshot().updatedAt.getTime() / 1000);
  }
  if (scopes.has('email')) {
    claims.email = user.email;
    claims.email_verified = user.emailVerified;
  }
  if (scopes.has('roles')) claims.roles = user.roles;
  return claims;
}

/** `sha256:` and the base64url SHA-256 of a presented secret, compared in constant time with the stored one. */
function secretMatches(stored: unknown, presented: unknown): boolean {
  if (typeof stored !== 'string' || typeof presented !== 'string' || !stored.startsWith('sha256:')) return false;
  const expected = Buffer.from(stored.slice('sha256:'.length), 'base64url');
  const actual = createHash('sha256').update(presented, 'utf8').digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/**
 * What this service changes in one provider instance: secrets compared by hash, `sid` in every
 * ID token (our session's id), our session's id kept in the provider's session, and a pending
 * second step kept in the interaction.
 */
function patchProvider(provider: OidcProvider): void {
  // The stored `client_secret` is a hash (OpClient.clientSecretHash); the secret is never stored.
  provider.Client.prototype.compareClientSecret = function (this: OidcClient, actual: string) {
    return secretMatches(this.clientSecret, actual);
  };
  provider.Client.prototype.includeSid = () => true;
  // Back-channel logout is sent from the outbox when the service's session ends, never inline here.
  provider.Client.prototype.backchannelLogout = async () => undefined;
  const session = provider.Session.IN_PAYLOAD;
  Object.defineProperty(provider.Session, 'IN_PAYLOAD', { get: () => [...session, 'serviceSessionId'] });
  // A sign-in's second step (or the address a code was emailed to) waits in the interaction: its mfaToken never leaves the server.
  const interaction = provider.Interaction.IN_PAYLOAD;
  Object.defineProperty(provider.Interaction, 'IN_PAYLOAD', {
    get: () => [...interaction, 'pendingMfa', 'pendingEmailCode', 'pendingFederation'],
  });
}
