import { Injectable } from '@nestjs/common';
import { Client } from '../../domain/client/client';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { ResourceRepository } from '../ports/resource.repository';
import { Transaction } from '../ports/transaction';
import { CreateClientUseCase } from './create-client.use-case';
import { InitialAccessTokens } from './initial-access-tokens';

/** A client's metadata as RFC 7591 names it (the members this service reads; others are ignored). */
export interface ClientMetadata {
  client_name?: unknown;
  redirect_uris?: unknown;
  post_logout_redirect_uris?: unknown;
  grant_types?: unknown;
  response_types?: unknown;
  scope?: unknown;
  token_endpoint_auth_method?: unknown;
  jwks_uri?: unknown;
  backchannel_logout_uri?: unknown;
  id_token_signed_response_alg?: unknown;
}

/** Why a registration was refused, as RFC 7591 §3.2.2 names it. */
export class RegistrationRefused extends Error {
  constructor(
    readonly error: 'invalid_client_metadata' | 'invalid_redirect_uri' | 'invalid_token' | 'registration_closed',
    readonly description: string,
  ) {
    super(description);
  }
}

/** The grants a client registered by anyone (`open`) may have: a browser or native app signing users in. */
const OPEN_GRANTS = ['authorization_code', 'refresh_token'];

/**
 * Dynamic client registration (RFC 7591) by the realm's `clientRegistration`: `closed` none;
 * `token` with an initial access token, spent in the registration's transaction; `open` anyone,
 * but only public clients (PKCE alone) with the authorization code and refresh token grants. A
 * registered client is an ordinary client of the realm (CreateClientUseCase), `registeredBy:
 * "dynamic"` and never first-party, so its users are asked for consent. A `scope` naming scopes of
 * the realm's resources (APIs) gives the client those resources, as an agent registering itself
 * for an API (MCP) needs; each user still consents to them. A client asking for the
 * client_credentials grant (`token` only) gets none: its tokens would need no user's consent.
 */
@Injectable()
export class RegisterClientUseCase {
  constructor(
    private readonly create: CreateClientUseCase,
    private readonly initialAccessTokens: InitialAccessTokens,
    private readonly resources: ResourceRepository,
    private readonly tx: Transaction,
  ) {}

  /** @throws RegistrationRefused */
  async execute(input: {
    realm: Realm;
    metadata: ClientMetadata;
    initialAccessToken: string | null;
  }): Promise<{ client: Client; clientSecret: string | null }> {
    const { realm, metadata } = input;
    const mode = realm.policy.clientRegistration;
    if (mode === 'closed') throw new RegistrationRefused('registration_closed', 'This realm does not register clients');
    const method = optionalString(metadata.token_endpoint_auth_method, 'token_endpoint_auth_method') ?? 'client_secret_basic';
    const grantTypes = optionalStrings(metadata.grant_types, 'grant_types') ?? ['authorization_code'];
    if (mode === 'open') {
      if (method !== 'none') {
        throw new RegistrationRefused(
          'invalid_client_metadata',
          'token_endpoint_auth_method must be "none": open registration registers public clients only',
        );
      }
      const refused = grantTypes.find((grant) => !OPEN_GRANTS.includes(grant));
      if (refused) throw new RegistrationRefused('invalid_client_metadata', `grant_types may not include ${refused} in open registration`);
    }
    const responseTypes = optionalStrings(metadata.response_types, 'response_types');
    if (responseTypes && responseTypes.some((type) => type !== 'code')) {
      throw new RegistrationRefused('invalid_client_metadata', 'response_types may only be ["code"]');
    }
    const scope = optionalString(metadata.scope, 'scope');
    const scopes = scope ? scope.split(' ').filter(Boolean) : [];
    // The resources whose scopes the client asks for, for its users to consent to (unknown scopes
    // stay for the validation to refuse). Not for client_credentials: no user would be asked.
    const resources =
      scopes.length && !grantTypes.includes('client_credentials')
        ? (await this.resources.list(realm.id)).filter((r) => r.scopeNames.some((name) => scopes.includes(name))).map((r) => r.identifier)
        : [];
    const registration = {
      realmId: realm.id,
      name: optionalString(metadata.client_name, 'client_name') ?? 'Unnamed app',
      type: method === 'none' ? 'public' : 'confidential',
      tokenEndpointAuthMethod: method,
      redirectUris: optionalStrings(metadata.redirect_uris, 'redirect_uris') ?? [],
      postLogoutRedirectUris: optionalStrings(metadata.post_logout_redirect_uris, 'post_logout_redirect_uris') ?? [],
      grantTypes,
      ...(scope ? { scopes } : {}),
      ...(resources.length ? { resources } : {}),
      jwksUri: optionalString(metadata.jwks_uri, 'jwks_uri') ?? null,
      backchannelLogoutUri: optionalString(metadata.backchannel_logout_uri, 'backchannel_logout_uri') ?? null,
      ...(metadata.id_token_signed_response_alg !== undefined
        ? { idTokenSignedResponseAlg: optionalString(metadata.id_token_signed_response_alg, 'id_token_signed_response_alg') }
        : {}),
      firstParty: false,
      actor: null,
      registeredBy: 'dynamic' as const,
    };
    try {
      return await this.tx.run(async () => {
        if (mode === 'token') {
          const token = input.initialAccessToken;
          if (!token || !(await this.initialAccessTokens.consume(realm.id, token))) {
            throw new RegistrationRefused('invalid_token', 'A valid initial access token is required');
          }
        }
        return this.create.execute(registration);
      });
    } catch (error) {
      if (error instanceof DomainError && error.code === 'VALIDATION_FAILED') {
        const field = error.meta.details?.[0]?.field ?? '';
        const message = error.meta.details?.map((d) => `${d.field} ${d.message}`).join('; ') ?? error.message;
        throw new RegistrationRefused(
          /redirectUris|postLogoutRedirectUris/.test(field) ? 'invalid_redirect_uri' : 'invalid_client_metadata',
          message,
        );
      }
      throw error;
    }
  }
}

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new RegistrationRefused('invalid_client_metadata', `${field} must be a string`);
  return value;
}

function optionalStrings(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw new RegistrationRefused('invalid_client_metadata', `${field} must be an array of strings`);
  }
  return value as string[];
}
