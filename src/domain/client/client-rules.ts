import { DomainError } from '../errors';

/** The OpenID Connect scopes any client of a realm may be allowed. */
export const STANDARD_SCOPES = ['openid', 'profile', 'email', 'offline_access', 'roles'] as const;

export const GRANT_TYPES = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'urn:ietf:params:oauth:grant-type:device_code',
] as const;
export type GrantType = (typeof GRANT_TYPES)[number];
export const DEFAULT_GRANT_TYPES: GrantType[] = ['authorization_code', 'refresh_token'];

export const CLIENT_TYPES = ['public', 'confidential'] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

export const TOKEN_ENDPOINT_AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];

export const ID_TOKEN_ALGORITHMS = ['RS256', 'ES256'] as const;
export type IdTokenAlgorithm = (typeof ID_TOKEN_ALGORITHMS)[number];

export const REGISTERED_BY = ['admin', 'dynamic'] as const;
export type RegisteredBy = (typeof REGISTERED_BY)[number];

/**
 * Lifetime of the access tokens a client or resource sets: from one minute to one day, the range
 * of the realm's own `accessTokenTtlSeconds`, so no client outlives what a realm
 * administrator may choose for the realm.
 */
export const CLIENT_ACCESS_TOKEN_TTL = { min: 60, max: 86_400 } as const;

export const MAX_NAME_LENGTH = 100;

/**
 * A display name: 1 to 100 characters (trimmed) without control characters.
 * @throws DomainError VALIDATION_FAILED (field `name`)
 */
export function assertName(value: string): string {
  const trimmed = typeof value === 'string' ? value.trim() : '';
  if ([...trimmed].length < 1 || [...trimmed].length > MAX_NAME_LENGTH || /\p{Cc}/u.test(trimmed)) {
    throw DomainError.validation('name', `must be 1 to ${MAX_NAME_LENGTH} characters without control characters`);
  }
  return trimmed;
}

/**
 * A whole number of seconds in `CLIENT_ACCESS_TOKEN_TTL`, or null (the next level decides).
 * @throws DomainError VALIDATION_FAILED (field `accessTokenTtlSeconds`)
 */
export function assertAccessTokenTtl(value: number | null): number | null {
  if (value === null) return null;
  const { min, max } = CLIENT_ACCESS_TOKEN_TTL;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw DomainError.validation('accessTokenTtlSeconds', `must be a whole number from ${min} to ${max}`);
  }
  return value;
}

/** Whether `value` is one of `allowed`. */
export function isOneOf<T extends string>(allowed: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value);
}
