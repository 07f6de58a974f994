/** An API a client may ask tokens for (RFC 8707 resource indicator). */
export interface OpResource {
  /** The resource's identifier: an absolute URI, the `aud` of its access tokens. */
  identifier: string;
  /** The scopes the API defines. */
  scopes: string[];
  /** Lifetime of its access tokens, or null for the realm's. */
  accessTokenTtlSeconds: number | null;
}

export type OpClientAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';

/** A client of the realm's OpenID provider, as the provider needs it. */
export interface OpClient {
  clientId: string;
  name: string;
  /**
   * How its secret is checked: `sha256:` and the base64url SHA-256 of the secret. A secret has at
   * least 256 random bits, so a fast hash is as good as a slow one; the secret itself is never
   * stored. Null for public clients and `private_key_jwt`.
   */
  clientSecretHash: string | null;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: string[];
  tokenEndpointAuthMethod: OpClientAuthMethod;
  jwksUri: string | null;
  /** The scopes it may ask for. */
  scopes: string[];
  idTokenSignedResponseAlg: 'RS256' | 'ES256';
  backchannelLogoutUri: string | null;
  /** Users are never asked to consent to a first-party client. */
  firstParty: boolean;
  /** Lifetime of its access tokens, or null for the resource's, else the realm's. */
  accessTokenTtlSeconds: number | null;
  /** The APIs it may ask tokens for. */
  resources: OpResource[];
}

/** The realm's registered clients, read by the OpenID provider. */
export abstract class OpClients {
  /** The client, or null when the realm has no such client. */
  abstract find(realmId: string, clientId: string): Promise<OpClient | null>;
}
