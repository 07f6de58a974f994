/** The signature algorithm of access tokens (also named by the discovery document). */
export const ACCESS_TOKEN_ALGORITHM = 'ES256';

/**
 * A realm's issuer: the `iss` of every token the realm issues, `{JWT_ISSUER}/realms/{realmId}`.
 * A resource server configured with one realm's issuer never accepts another realm's token.
 */
export function realmIssuer(baseIssuer: string, realmId: string): string {
  return `${baseIssuer.replace(/\/+$/, '')}/realms/${realmId}`;
}

export interface AccessTokenClaims {
  sub: string;
  realm: string;
  sid: string;
  roles: string[];
  amr: string[];
  /** The user's app metadata; absent when empty. Issued only: the service itself never reads it from a token. */
  app_metadata?: Readonly<Record<string, unknown>>;
  /** The session's active organization and the member's roles in it now; absent without one. */
  org?: { id: string; slug: string; roles: string[] };
  /** Confirmation (RFC 7800): the thumbprint of the DPoP key a sender-constrained token is bound to (RFC 9449). */
  cnf?: { jkt: string };
}

export interface VerifiedAccessToken extends AccessTokenClaims {
  jti: string;
  iat: number;
  exp: number;
}

/** Signs and verifies access tokens (asymmetric JWTs, the resource shapes). */
export abstract class AccessTokens {
  abstract issue(claims: AccessTokenClaims, now: Date, ttlSeconds: number): Promise<string>;
  /**
   * @throws DomainError TOKEN_EXPIRED when expired; INVALID_TOKEN for anything else wrong
   */
  abstract verify(token: string, now: Date): Promise<VerifiedAccessToken>;
  /** Public keys for `/.well-known/jwks.json`: the current and the previous key. */
  abstract jwks(): Promise<{ keys: Record<string, unknown>[] }>;
  /** Creates the first signing key when there is none (first start). */
  abstract ensureKey(now: Date): Promise<void>;
  /** Makes a new signing key current; the previous one stays published. */
  abstract rotate(now: Date): Promise<string>;
  /**
   * Makes a new signing key current if the current one was created before `cutoff` (scheduled
   * rotation). Concurrent callers rotate once. Returns the new kid, or null when the key is recent.
   */
  abstract rotateIfOlderThan(cutoff: Date, now: Date): Promise<string | null>;
}
