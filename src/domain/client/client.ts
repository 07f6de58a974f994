import { DomainError } from '../errors';
import { assertRedirectUri } from './client-uris';
import {
  assertAccessTokenTtl,
  assertName,
  CLIENT_TYPES,
  ClientType,
  DEFAULT_GRANT_TYPES,
  GRANT_TYPES,
  GrantType,
  ID_TOKEN_ALGORITHMS,
  IdTokenAlgorithm,
  isOneOf,
  REGISTERED_BY,
  RegisteredBy,
  STANDARD_SCOPES,
  TOKEN_ENDPOINT_AUTH_METHODS,
  TokenEndpointAuthMethod,
} from './client-rules';
import { Resource } from './resource';

export const MAX_REDIRECT_URIS = 20;
export const MAX_CLIENT_RESOURCES = 20;
export const MAX_CLIENT_SCOPES = 100;

export interface ClientState {
  /** Public, random (≥ 128 bits, URL-safe), unique across realms. */
  clientId: string;
  realmId: string;
  name: string;
  type: ClientType;
  /** A one-way hash of the secret of a confidential client; null for a public one. */
  secretHash: string | null;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: GrantType[];
  scopes: string[];
  /** Identifiers of the realm's resources the client may ask tokens for. */
  resources: string[];
  /** Never asks the user's consent. */
  firstParty: boolean;
  backchannelLogoutUri: string | null;
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  jwksUri: string | null;
  /** null: the resource's, else the realm's. */
  accessTokenTtlSeconds: number | null;
  idTokenSignedResponseAlg: IdTokenAlgorithm;
  registeredBy: RegisteredBy;
  createdAt: Date;
  updatedAt: Date;
}

/** What a registration names; everything but the name and the type has a default. */
export interface ClientRegistration {
  clientId: string;
  realmId: string;
  name: string;
  type: string;
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
  grantTypes?: string[];
  scopes?: string[];
  resources?: string[];
  firstParty?: boolean;
  /** Already through the outbound address rules. */
  backchannelLogoutUri?: string | null;
  tokenEndpointAuthMethod?: string;
  /** Already through the outbound address rules. */
  jwksUri?: string | null;
  accessTokenTtlSeconds?: number | null;
  idTokenSignedResponseAlg?: string;
  registeredBy: RegisteredBy;
  createdAt: Date;
}

/** A change by PATCH: any field but `clientId` and `type`; null clears the nullable ones. */
export type ClientChange = Partial<Omit<ClientRegistration, 'clientId' | 'realmId' | 'type' | 'registeredBy' | 'createdAt'>>;

/** What PATCH may change: everything but `clientId`, `type` and what the service keeps. */
const CHANGEABLE: readonly (keyof ClientChange)[] = [
  'name',
  'redirectUris',
  'postLogoutRedirectUris',
  'grantTypes',
  'scopes',
  'resources',
  'firstParty',
  'backchannelLogoutUri',
  'tokenEndpointAuthMethod',
  'jwksUri',
  'accessTokenTtlSeconds',
  'idTokenSignedResponseAlg',
];

const unique = <T>(values: readonly T[]): T[] => [...new Set(values)];

/** @throws DomainError VALIDATION_FAILED naming `field` */
function uriList(values: readonly string[], field: string): string[] {
  if (values.length > MAX_REDIRECT_URIS) throw DomainError.validation(field, `must hold at most ${MAX_REDIRECT_URIS} URIs`);
  return unique(values.map((value) => assertRedirectUri(value, field)));
}

/** @throws DomainError VALIDATION_FAILED (field `grantTypes`) */
function grantTypes(values: readonly string[]): GrantType[] {
  if (values.length === 0) throw DomainError.validation('grantTypes', 'must allow at least one grant type');
  const unknown = values.find((g) => !isOneOf(GRANT_TYPES, g));
  if (unknown !== undefined)
    throw DomainError.validation('grantTypes', `must be among ${GRANT_TYPES.join(', ')} (not ${JSON.stringify(unknown)})`);
  return unique(values as GrantType[]);
}

/**
 * Every rule of a client, checked on the whole state, so that a change of one
 * field is checked against the others (a PATCH giving a public client `client_credentials`, or
 * taking the last redirect URI of one allowed `authorization_code`).
 * `known`: the realm's resources among those the client names.
 * @throws DomainError VALIDATION_FAILED naming the field
 */
function checked(s: ClientState, known: readonly Resource[]): ClientState {
  if (!isOneOf(CLIENT_TYPES, s.type)) throw DomainError.validation('type', 'must be "public" or "confidential"');
  if (!isOneOf(TOKEN_ENDPOINT_AUTH_METHODS, s.tokenEndpointAuthMethod)) {
    throw DomainError.validation('tokenEndpointAuthMethod', `must be one of ${TOKEN_ENDPOINT_AUTH_METHODS.join(', ')}`);
  }
  if (s.type === 'public' && s.tokenEndpointAuthMethod !== 'none') {
    throw DomainError.validation('tokenEndpointAuthMethod', 'must be "none" for a public client, which holds no secret');
  }
  if (s.type === 'confidential' && s.tokenEndpointAuthMethod === 'none') {
    throw DomainError.validation(
      'tokenEndpointAuthMethod',
      'must be client_secret_basic, client_secret_post or private_key_jwt for a confidential client',
    );
  }
  if (s.tokenEndpointAuthMethod === 'private_key_jwt' && s.jwksUri === null) {
    throw DomainError.validation('jwksUri', 'is required with private_key_jwt: the client’s keys are read there');
  }
  const grants = grantTypes(s.grantTypes);
  if (s.type === 'public' && grants.includes('client_credentials')) {
    throw DomainError.validation('grantTypes', 'must not hold client_credentials for a public client, which cannot keep a secret');
  }
  const redirectUris = uriList(s.redirectUris, 'redirectUris');
  if (grants.includes('authorization_code') && redirectUris.length === 0) {
    throw DomainError.validation('redirectUris', 'must hold at least one URI while authorization_code is allowed');
  }
  const postLogoutRedirectUris = uriList(s.postLogoutRedirectUris, 'postLogoutRedirectUris');
  if (s.resources.length > MAX_CLIENT_RESOURCES)
    throw DomainError.validation('resources', `must name at most ${MAX_CLIENT_RESOURCES} resources`);
  const resources = unique(s.resources);
  const missing = resources.find((identifier) => !known.some((r) => r.identifier === identifier));
  if (missing !== undefined)
    throw DomainError.validation('resources', `names ${JSON.stringify(missing)}, which is no resource of the realm`);
  if (s.scopes.length > MAX_CLIENT_SCOPES) throw DomainError.validation('scopes', `must hold at most ${MAX_CLIENT_SCOPES} scopes`);
  const offered = offeredScopes(resources, known);
  const foreign = s.scopes.find((scope) => !offered.has(scope));
  if (foreign !== undefined) {
    throw DomainError.validation(
      'scopes',
      `holds ${JSON.stringify(foreign)}, which neither the OpenID scopes nor the client’s resources offer`,
    );
  }
  if (typeof s.firstParty !== 'boolean') throw DomainError.validation('firstParty', 'must be a boolean');
  if (!isOneOf(ID_TOKEN_ALGORITHMS, s.idTokenSignedResponseAlg)) {
    throw DomainError.validation('idTokenSignedResponseAlg', 'must be "RS256" or "ES256"');
  }
  if (!isOneOf(REGISTERED_BY, s.registeredBy)) throw DomainError.validation('registeredBy', 'must be "admin" or "dynamic"');
  return {
    ...s,
    name: assertName(s.name),
    grantTypes: grants,
    redirectUris,
    postLogoutRedirectUris,
    resources,
    scopes: unique(s.scopes),
    accessTokenTtlSeconds: assertAccessTokenTtl(s.accessTokenTtlSeconds),
  };
}

/** The scopes a client naming `resources` may hold: the OpenID ones and those of its resources. */
function offeredScopes(resources: readonly string[], known: readonly Resource[]): Set<string> {
  const offered = new Set<string>(STANDARD_SCOPES);
  for (const resource of known) if (resources.includes(resource.identifier)) for (const scope of resource.scopeNames) offered.add(scope);
  return offered;
}

/**
 * An application that gets tokens from the realm as an OpenID provider: a
 * browser or native app (`public`, no secret, PKCE alone) or a backend (`confidential`).
 */
export class Client {
  private constructor(private state: ClientState) {}

  /**
   * A new client with the defaults: grant types `authorization_code` and
   * `refresh_token`, the five OpenID scopes, `none` for a public client and
   * `client_secret_basic` for a confidential one, RS256 ID tokens, third-party. A client
   * registered dynamically is always third-party, so its users are asked. A confidential client
   * gets its secret with `setSecret`.
   * `known`: the realm's resources among those `resources` names.
   * @throws DomainError VALIDATION_FAILED naming the field
   */
  static register(input: ClientRegistration, known: readonly Resource[]): Client {
    if (input.registeredBy === 'dynamic' && input.firstParty === true) {
      throw DomainError.validation('firstParty', 'is always false for a client registered dynamically');
    }
    const type = input.type as ClientType;
    const state = checked(
      {
        clientId: input.clientId,
        realmId: input.realmId,
        name: input.name,
        type,
        secretHash: null,
        redirectUris: input.redirectUris ?? [],
        postLogoutRedirectUris: input.postLogoutRedirectUris ?? [],
        grantTypes: (input.grantTypes ?? DEFAULT_GRANT_TYPES) as GrantType[],
        scopes: input.scopes ?? [...STANDARD_SCOPES],
        resources: input.resources ?? [],
        firstParty: input.firstParty ?? false,
        backchannelLogoutUri: input.backchannelLogoutUri ?? null,
        tokenEndpointAuthMethod: (input.tokenEndpointAuthMethod ??
          (type === 'public' ? 'none' : 'client_secret_basic')) as TokenEndpointAuthMethod,
        jwksUri: input.jwksUri ?? null,
        accessTokenTtlSeconds: input.accessTokenTtlSeconds ?? null,
        idTokenSignedResponseAlg: (input.idTokenSignedResponseAlg ?? 'RS256') as IdTokenAlgorithm,
        registeredBy: input.registeredBy,
        createdAt: input.createdAt,
        updatedAt: input.createdAt,
      },
      known,
    );
    return new Client(state);
  }

  static restore(state: ClientState): Client {
    return new Client(copy(state));
  }

  get clientId(): string {
    return this.state.clientId;
  }
  get realmId(): string {
    return this.state.realmId;
  }
  get name(): string {
    return this.state.name;
  }
  get type(): ClientType {
    return this.state.type;
  }
  get isConfidential(): boolean {
    return this.state.type === 'confidential';
  }
  /** The stored hash of the secret; compare with `ClientSecrets.verify`, never by hand. */
  get secretHash(): string | null {
    return this.state.secretHash;
  }
  get redirectUris(): string[] {
    return [...this.state.redirectUris];
  }
  get postLogoutRedirectUris(): string[] {
    return [...this.state.postLogoutRedirectUris];
  }
  get grantTypes(): GrantType[] {
    return [...this.state.grantTypes];
  }
  get scopes(): string[] {
    return [...this.state.scopes];
  }
  get resources(): string[] {
    return [...this.state.resources];
  }
  get firstParty(): boolean {
    return this.state.firstParty;
  }
  get backchannelLogoutUri(): string | null {
    return this.state.backchannelLogoutUri;
  }
  get tokenEndpointAuthMethod(): TokenEndpointAuthMethod {
    return this.state.tokenEndpointAuthMethod;
  }
  get jwksUri(): string | null {
    return this.state.jwksUri;
  }
  get accessTokenTtlSeconds(): number | null {
    return this.state.accessTokenTtlSeconds;
  }
  get idTokenSignedResponseAlg(): IdTokenAlgorithm {
    return this.state.idTokenSignedResponseAlg;
  }
  get registeredBy(): RegisteredBy {
    return this.state.registeredBy;
  }
  get createdAt(): Date {
    return this.state.createdAt;
  }
  get updatedAt(): Date {
    return this.state.updatedAt;
  }

  /**
   * Applies a change, then checks the whole client again. `known`: the realm's resources among
   * those the changed client names.
   * @throws DomainError VALIDATION_FAILED naming the field
   */
  update(change: ClientChange, known: readonly Resource[], now: Date): void {
    const next = { ...this.state, updatedAt: now } as unknown as Record<string, unknown>;
    for (const field of CHANGEABLE) if (change[field] !== undefined) next[field] = change[field];
    this.state = checked(next as unknown as ClientState, known);
  }

  /**
   * Sets the hash of a new secret, so the previous one stops working (creation and rotation).
   * @throws DomainError VALIDATION_FAILED (field `type`) for a public client, which holds none
   */
  setSecret(secretHash: string, now: Date): void {
    if (this.state.type !== 'confidential') throw DomainError.validation('type', 'is public: a public client holds no secret');
    this.state = { ...this.state, secretHash, updatedAt: now };
  }

  /**
   * Keeps only the resources that still exist among `known` (the realm's resources the client
   * named) and the scopes they and the OpenID scopes still offer: after a resource is deleted or
   * loses scopes. Returns whether anything changed.
   */
  reconcileResources(known: readonly Resource[], now: Date): boolean {
    const resources = this.state.resources.filter((identifier) => known.some((r) => r.identifier === identifier));
    const offered = offeredScopes(resources, known);
    const scopes = this.state.scopes.filter((scope) => offered.has(scope));
    if (resources.length === this.state.resources.length && scopes.length === this.state.scopes.length) return false;
    this.state = { ...this.state, resources, scopes, updatedAt: now };
    return true;
  }

  snapshot(): ClientState {
    return copy(this.state);
  }
}

function copy(state: ClientState): ClientState {
  return {
    ...state,
    redirectUris: [...state.redirectUris],
    postLogoutRedirectUris: [...state.postLogoutRedirectUris],
    grantTypes: [...state.grantTypes],
    scopes: [...state.scopes],
    resources: [...state.resources],
  };
}
