import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import * as oidc from 'openid-client';
import {
  IdentityProviderClient,
  ProviderClaims,
  ProviderConnection,
  ProviderError,
} from '../../application/ports/identity-provider-client';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { Email } from '../../domain/user/email';
import { OutboundConnector, OutboundPolicy } from '../outbound/outbound-connector';

/** Every request to a provider (discovery, token, userinfo, JWKS) gives up after this. */
const PROVIDER_TIMEOUT_MS = 5000;

/** A provider's signing keys as openid-client keeps them (it fetches them again after 5 minutes, or on an unknown `kid`). */
type KeySet = NonNullable<ReturnType<typeof oidc.getJwksCache>>;

const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/**
 * The relying party on openid-client (OpenID Certified): discovery, PKCE, state, nonce, RFC 9207
 * `iss`, ID-token validation — with the signature checked even for tokens from the token endpoint
 * (`enableNonRepudiationChecks`) — and userinfo. Every request goes through the outbound
 * connector under the identity providers' policy.
 */
@Injectable()
export class OpenIdClientIdentityProviderClient implements IdentityProviderClient {
  private readonly policy: OutboundPolicy;
  private readonly fetch: oidc.CustomFetch;
  /**
   * Signing keys by `jwks_uri`, kept from one sign-in to the next: each sign-in builds its client
   * configuration from the stored provider, and openid-client keeps keys per configuration, so
   * without this every sign-in would fetch the provider's JWKS again.
   */
  private readonly keySets = new LRUCache<string, KeySet>({ max: 1000 });

  constructor(
    private readonly connector: OutboundConnector,
    private readonly config: AppConfig,
  ) {
    this.policy = { allowHttp: config.idpAllowHttp, allowPrivateNetworks: config.idpAllowPrivateNetworks, field: 'issuer' };
    const fetcher = connector.fetcher({ ...this.policy, timeoutMs: PROVIDER_TIMEOUT_MS });
    // openid-client's request options are fetch's: its bodies (string, URLSearchParams, bytes) are ones fetch takes.
    this.fetch = (url, options) => fetcher(url, options as RequestInit);
  }

  async discover(issuer: string): Promise<Record<string, unknown>> {
    await this.connector.check(issuer, this.policy);
    try {
      const configuration = await oidc.discovery(new URL(issuer), 'discovery', undefined, undefined, {
        [oidc.customFetch]: this.fetch,
        execute: this.config.idpAllowHttp ? [oidc.allowInsecureRequests] : [],
        timeout: PROVIDER_TIMEOUT_MS / 1000,
      });
      return { ...configuration.serverMetadata() };
    } catch (error) {
      if (error instanceof DomainError) throw error;
      throw DomainError.validation('issuer', `the provider's discovery document could not be read (${describe(error)})`);
    }
  }

  authorizationUrl(
    connection: ProviderConnection,
    request: { redirectUri: string; scopes: string[]; state: string; nonce: string; codeChallenge: string },
  ): string {
    return oidc.buildAuthorizationUrl(this.configuration(connection), {
      response_type: 'code',
      redirect_uri: request.redirectUri,
      scope: request.scopes.join(' '),
      state: request.state,
      nonce: request.nonce,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
    }).href;
  }

  async redeem(
    connection: ProviderConnection,
    request: { callbackUrl: string; redirectUri: string; state: string; nonce: string; codeVerifier: string },
  ): Promise<ProviderClaims> {
    const configuration = this.configuration(connection);
    const jwksUri = text(connection.metadata.jwks_uri);
    const keys = jwksUri ? this.keySets.get(jwksUri) : undefined;
    if (keys) oidc.setJwksCache(configuration, keys);
    try {
      const tokens = await oidc.authorizationCodeGrant(
        configuration,
        new URL(request.callbackUrl),
        { pkceCodeVerifier: request.codeVerifier, expectedState: request.state, expectedNonce: request.nonce, idTokenExpected: true },
        { redirect_uri: request.redirectUri },
      );
      const claims = tokens.claims();
      if (!claims) throw new ProviderError('no ID token');
      let profile: Record<string, unknown> = { ...claims };
      if (!text(claims.email)) {
        profile = { ...(await oidc.fetchUserInfo(configuration, tokens.access_token, claims.sub)), ...claims };
      }
      return {
        subject: claims.sub,
        // As the realm's addresses are stored (NFC, trimmed, lower-cased), so the same mailbox finds its account.
        email: text(profile.email) ? Email.normalise(text(profile.email)!) : null,
        emailVerified: profile.email_verified === true,
        givenName: text(profile.given_name),
        familyName: text(profile.family_name),
        name: text(profile.name),
        picture: text(profile.picture),
      };
    } catch (error) {
      throw error instanceof ProviderError ? error : new ProviderError(describe(error));
    } finally {
      const fetched = oidc.getJwksCache(configuration);
      if (jwksUri && fetched) this.keySets.set(jwksUri, fetched);
    }
  }

  private configuration(connection: ProviderConnection): oidc.Configuration {
    const methods = connection.metadata.token_endpoint_auth_methods_supported;
    const basic = !Array.isArray(methods) || methods.includes('client_secret_basic');
    const authentication = connection.clientSecret
      ? basic
        ? oidc.ClientSecretBasic(connection.clientSecret)
        : oidc.ClientSecretPost(connection.clientSecret)
      : oidc.None();
    const configuration = new oidc.Configuration(
      connection.metadata as oidc.ServerMetadata,
      connection.clientId,
      undefined,
      authentication,
    );
    configuration[oidc.customFetch] = this.fetch;
    configuration.timeout = PROVIDER_TIMEOUT_MS / 1000;
    if (this.config.idpAllowHttp) oidc.allowInsecureRequests(configuration);
    oidc.enableNonRepudiationChecks(configuration);
    return configuration;
  }
}

/**
 * What went wrong, for the audit trail: the library's error code and message, and its cause's
 * message (which claim failed, the connector's timeout …) — never a token.
 */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return 'unknown error';
  const code = (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error && error.cause.message !== error.message ? ` (${error.cause.message})` : '';
  return `${typeof code === 'string' ? `${code}: ` : ''}${error.message}${cause}`.slice(0, 300);
}
