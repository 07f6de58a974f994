import { createHash } from 'node:crypto';
import {
  calculateJwkThumbprint,
  createRemoteJWKSet,
  customFetch,
  decodeProtectedHeader,
  EmbeddedJWK,
  errors,
  jwtVerify,
  type CryptoKey,
  type FetchImplementation,
  type FlattenedJWSInput,
  type JWK,
  type JWSHeaderParameters,
  type JWTPayload,
  type RemoteJWKSet,
} from 'jose';
import { MemoryReplayCache, type ReplayCache } from './replay-cache.js';

/** Access tokens are signed with ES256 and carry the header type at+jwt (RFC 9068). */
const ACCESS_TOKEN_ALGORITHMS = ['ES256'];
const ACCESS_TOKEN_TYPE = 'at+jwt';
/** DPoP proofs: RFC 9449, the algorithms the service accepts too. */
const PROOF_ALGORITHMS = ['ES256', 'EdDSA'];
const PROOF_TYPE = 'dpop+jwt';
const MAX_JTI_LENGTH = 128;
const MAX_TOKEN_LENGTH = 8192;
/** The WWW-Authenticate parameter naming the proof algorithms. */
export const DPOP_ALGS = `algs="${PROOF_ALGORITHMS.join(' ')}"`;

export interface AccessTokenVerifierOptions {
  /**
   * The realm's issuer, `{JWT_ISSUER}/realms/{realmId}` (`JWT_ISSUER` being by default the
   * service's `API_URL`), e.g. `https://id.example.com/realms/acme`: the `iss` every token must
   * carry, and where the discovery document is (`<issuer>/.well-known/openid-configuration`).
   */
  issuer: string;
  /**
   * The realm whose tokens this backend accepts (the `realm` claim). Default: the realm the
   * issuer names. Each realm has its own issuer: a backend serving several realms makes a
   * verifier for each.
   */
  realm?: string;
  /**
   * The resource this API is (RFC 8707), as registered with `POST /v1/admin/resources`: tokens
   * must name it in `aud`. Tokens of the realm's OpenID provider carry it; tokens of the
   * service's own sign-in carry no `aud` and are then refused. Such tokens name no session: `sid`
   * is not required (it is `''` when absent). Default: no audience check.
   */
  audience?: string;
  /**
   * Where the public keys are. Default: the `jwks_uri` of the issuer's discovery document
   * (`<issuer>/.well-known/openid-configuration`), read once.
   */
  jwksUri?: string | URL;
  /** How long fetched keys are used before they are fetched again (default 10 minutes). */
  jwksMaxAgeMs?: number;
  /** A token naming an unknown `kid` fetches the keys again, at most once per this many ms (default 30 s). */
  jwksCooldownMs?: number;
  /** Allowed clock difference for `exp`, `iat` and `nbf` of access tokens, in seconds (default 5). */
  clockToleranceSeconds?: number;
  /** How far a proof's `iat` may be from now, either way, in seconds (default 60, as the service). */
  proofMaxAgeSeconds?: number;
  /** Remembers proof ids; default: in memory, per process. */
  replayCache?: ReplayCache;
  /** The current time (default: the system clock). */
  now?: () => Date;
  /** The fetch used for the discovery document and the keys (default: the global fetch). */
  fetch?: FetchImplementation;
  /** How long one fetch of the discovery document or the keys may take (default 5 s). */
  fetchTimeoutMs?: number;
  /** Where a line saying why the keys could not be had goes (default: console). */
  logger?: { warn(message: string): void };
}

/** What a backend knows about the request to check its token. */
export interface TokenRequest {
  /** The Authorization header: `Bearer <token>` or `DPoP <token>`. */
  authorization: string | string[] | undefined;
  /** The DPoP header (a proof), for DPoP tokens. */
  dpop?: string | string[] | undefined;
  /** The HTTP method, e.g. GET. */
  method: string;
  /** The URL the client called, as it called it (scheme, host, port, path); query and fragment are ignored. */
  url: string | URL;
}

/** A checked access token. */
export interface VerifiedAccessToken {
  /** The user id. */
  sub: string;
  realm: string;
  /** The session id; `''` for a token of the realm's OpenID provider, which names none. */
  sid: string;
  /** The token's `scope`, split: for a resource's token, that resource's granted scopes. */
  scopes: string[];
  /** The `aud` claim as a list: a resource's token names its identifier; the service's own tokens none. */
  audience: string[];
  /** The client the token was issued to (`client_id`), for tokens of the OpenID provider. */
  clientId?: string;
  /** The user's realm roles: built in (`realm-admin`) or defined by the realm (`teacher`). */
  roles: string[];
  /** What administrators attached to the user (the `app_metadata` claim); `{}` when there is none. */
  appMetadata: Record<string, unknown>;
  /**
   * The organization the session works in (the `org` claim): its id, slug and the user's
   * organization roles there; absent when the session has chosen none.
   */
  organization?: { id: string; slug: string; roles: string[] };
  /** How the session was authenticated (RFC 8176), e.g. ["pwd","otp"]. */
  amr: string[];
  jti: string;
  iat: number;
  exp: number;
  scheme: 'Bearer' | 'DPoP';
  /** For DPoP tokens: the RFC 7638 thumbprint of the key the token is bound to. */
  jkt?: string;
  /** Every claim of the token, as signed. */
  claims: JWTPayload;
}

export type AccessTokenErrorCode = 'missing_token' | 'invalid_token' | 'invalid_dpop_proof';

/** The token was refused: answer 401 with {@link AccessTokenError.wwwAuthenticate}. */
export class AccessTokenError extends Error {
  readonly status = 401;

  constructor(
    readonly code: AccessTokenErrorCode,
    message: string,
    /** The scheme the challenge names: DPoP for bound tokens and proof problems. */
    readonly scheme: 'Bearer' | 'DPoP',
  ) {
    super(message);
    this.name = 'AccessTokenError';
  }

  /** The WWW-Authenticate header value for the 401 answer (RFC 6750 §3, RFC 9449 §7.1). */
  get wwwAuthenticate(): string {
    if (this.code === 'missing_token') return `Bearer, DPoP ${DPOP_ALGS}`;
    if (this.scheme === 'Bearer') return `Bearer error="invalid_token", error_description="${this.message}"`;
    return `DPoP error="${this.code}", error_description="${this.message}", ${DPOP_ALGS}`;
  }
}

/**
 * The issuer's keys could not be had (discovery or JWKS unreachable, not 200, not JSON, or naming
 * another issuer): not the token's fault, so answer 503 (with `Retry-After`), never 401.
 */
export class KeysUnavailableError extends Error {
  readonly status = 503;

  constructor(
    /** Why, for the log; not meant for the client. */
    readonly reason: string,
  ) {
    super(`The issuer's keys are unavailable: ${reason}`);
    this.name = 'KeysUnavailableError';
  }
}

export interface AccessTokenVerifier {
  /**
   * Checks the request's access token and, for a DPoP-bound token, its proof.
   * @throws AccessTokenError — missing_token, invalid_token (signature, issuer, realm, type,
   *   expiry, or a token sent under the wrong scheme) or invalid_dpop_proof.
   * @throws KeysUnavailableError when the issuer's keys cannot be had (answer 503, not 401).
   */
  verify(request: TokenRequest): Promise<VerifiedAccessToken>;
}

/**
 * A verifier of the service's access tokens that never calls the service except for its public
 * keys. Keys come from the JWKS, are cached, and are fetched again when a token names a `kid`
 * that is not in the cache (a rotation), at most once per cooldown.
 *
 * A token is accepted when: it is a JWS with header `typ` at+jwt and alg ES256, signed by a key
 * of the JWKS; `iss` is the issuer; `realm` is the issuer's realm; `exp` is in the future (within
 * the clock tolerance); `sub`, `sid` are strings (`sid` not when an `audience` is checked); `aud`
 * names the `audience` when one is given. A token with `cnf.jkt` is bound to a DPoP key:
 * it must come with the DPoP scheme and a proof (RFC 9449 §4.3) — header `typ` dpop+jwt, alg ES256
 * or EdDSA, a public `jwk` whose thumbprint is `cnf.jkt` and whose signature verifies; `htm` the
 * request method; `htu` the request URL without query or fragment; `iat` within the proof window;
 * `ath` the SHA-256 of the token; a `jti` not seen before within twice the window. A token
 * without `cnf` must come with the Bearer scheme.
 */
export function createAccessTokenVerifier(options: AccessTokenVerifierOptions): AccessTokenVerifier {
  const issuer = options.issuer;
  if (!issuer) throw new TypeError('issuer is required');
  const named = /\/realms\/([a-z0-9][a-z0-9-]{0,62})\/?$/.exec(issuer)?.[1];
  const configured = options.realm ?? named;
  if (!configured) throw new TypeError('issuer must be a realm’s issuer, …/realms/<realm id> (or give realm)');
  const realm: string = configured;
  const audience = options.audience;
  const keys = issuerKeys(options);
  const clockTolerance = options.clockToleranceSeconds ?? 5;
  const proofMaxAge = options.proofMaxAgeSeconds ?? 60;
  const now = options.now ?? (() => new Date());
  const replays = options.replayCache ?? new MemoryReplayCache(100_000, () => now().getTime());

  async function verify(request: TokenRequest): Promise<VerifiedAccessToken> {
    const { scheme, token } = readAuthorization(request.authorization);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer,
        typ: ACCESS_TOKEN_TYPE,
        algorithms: ACCESS_TOKEN_ALGORITHMS,
        currentDate: now(),
        clockTolerance,
        requiredClaims: ['exp', 'sub'],
        ...(audience !== undefined ? { audience } : {}),
      }));
    } catch (error) {
      if (error instanceof KeysUnavailableError) throw error;
      throw new AccessTokenError('invalid_token', describe(error), scheme);
    }
    const {
      sub,
      realm: claimedRealm,
      sid,
      roles,
      amr,
      jti,
      iat,
      exp,
      cnf,
      app_metadata,
      org,
      scope,
      aud,
      client_id,
    } = payload as JWTPayload & Record<string, unknown>;
    if (claimedRealm !== realm) throw new AccessTokenError('invalid_token', 'The token is for another realm', scheme);
    if (typeof sub !== 'string' || (typeof sid !== 'string' && audience === undefined) || typeof exp !== 'number') {
      throw new AccessTokenError('invalid_token', 'The token lacks its subject or session', scheme);
    }
    const jkt = isConfirmation(cnf) ? cnf.jkt : undefined;
    if (cnf !== undefined && jkt === undefined) throw new AccessTokenError('invalid_token', 'The token has a malformed cnf claim', scheme);
    if (jkt !== undefined && scheme !== 'DPoP') {
      // RFC 9449 §7.2: a bound token presented as a bearer token is refused.
      throw new AccessTokenError('invalid_dpop_proof', 'This token is bound to a DPoP key: use the DPoP scheme with a proof', 'DPoP');
    }
    if (jkt === undefined && scheme === 'DPoP')
      throw new AccessTokenError('invalid_token', 'This token is not bound to a DPoP key', 'DPoP');
    if (jkt !== undefined) await verifyProof(request, token, jkt);
    return {
      sub,
      realm,
      sid: typeof sid === 'string' ? sid : '',
      scopes: typeof scope === 'string' ? scope.split(' ').filter(Boolean) : [],
      audience: typeof aud === 'string' ? [aud] : stringArray(aud),
      ...(typeof client_id === 'string' ? { clientId: client_id } : {}),
      roles: stringArray(roles),
      appMetadata: isObject(app_metadata) ? app_metadata : {},
      ...(isOrganization(org) ? { organization: { id: org.id, slug: org.slug, roles: stringArray(org.roles) } } : {}),
      amr: stringArray(amr),
      jti: typeof jti === 'string' ? jti : '',
      iat: typeof iat === 'number' ? iat : 0,
      exp,
      scheme,
      ...(jkt !== undefined ? { jkt } : {}),
      claims: payload,
    };
  }

  async function verifyProof(request: TokenRequest, token: string, jkt: string): Promise<void> {
    const refuse = (message: string) => new AccessTokenError('invalid_dpop_proof', message, 'DPoP');
    const proof = single(request.dpop);
    if (!proof) throw refuse('A DPoP proof is required');
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(proof);
    } catch {
      throw refuse('The DPoP proof is not a JWT');
    }
    if (header.typ !== PROOF_TYPE) throw refuse('The DPoP proof must have typ dpop+jwt');
    if (typeof header.alg !== 'string' || !PROOF_ALGORITHMS.includes(header.alg)) throw refuse('The DPoP proof must use ES256 or EdDSA');
    const jwk = header.jwk as JWK | undefined;
    if (!jwk || typeof jwk !== 'object' || 'd' in jwk) throw refuse('The DPoP proof must carry its public key');
    let claims: JWTPayload;
    try {
      // EmbeddedJWK verifies with the header's jwk and refuses a private key there.
      ({ payload: claims } = await jwtVerify(proof, EmbeddedJWK, { typ: PROOF_TYPE, algorithms: PROOF_ALGORITHMS }));
    } catch {
      throw refuse('The DPoP proof signature is invalid');
    }
    if ((await calculateJwkThumbprint(jwk, 'sha256')) !== jkt) throw refuse('The DPoP proof is signed by another key');
    if (claims.htm !== request.method.toUpperCase()) throw refuse('The DPoP proof is for another method');
    if (typeof claims.htu !== 'string' || normaliseUrl(claims.htu) !== normaliseUrl(request.url))
      throw refuse('The DPoP proof is for another URL');
    const nowSeconds = Math.floor(now().getTime() / 1000);
    if (typeof claims.iat !== 'number' || Math.abs(nowSeconds - claims.iat) > proofMaxAge)
      throw refuse('The DPoP proof is too old or too new');
    if (claims.ath !== createHash('sha256').update(token).digest('base64url')) throw refuse('The DPoP proof is for another token');
    if (typeof claims.jti !== 'string' || claims.jti.length === 0 || claims.jti.length > MAX_JTI_LENGTH) {
      throw refuse('The DPoP proof needs a jti of at most 128 characters');
    }
    // Remembered for twice the window: a proof stays acceptable by iat for at most that long.
    const expiresAt = (claims.iat + proofMaxAge) * 1000 + proofMaxAge * 1000;
    if (!(await replays.firstUse(`${jkt}:${claims.jti}`, expiresAt))) throw refuse('The DPoP proof was already used');
  }

  return { verify };
}

type KeyResolver = (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>;

/**
 * The issuer's public keys, from `jwksUri` or else from the `jwks_uri` of the issuer's discovery
 * document. Every way of not getting them (unreachable, timeout, not 200, not JSON, a document
 * naming another issuer) becomes a {@link KeysUnavailableError} and one log line per reason and
 * 10 s; only "no key with this kid" is the token's fault.
 */
function issuerKeys(options: AccessTokenVerifierOptions): KeyResolver {
  const fetchImpl: FetchImplementation = options.fetch ?? ((url, init) => fetch(url, init));
  const timeoutMs = options.fetchTimeoutMs ?? 5000;
  const logger = options.logger ?? console;
  const remoteOptions = {
    cacheMaxAge: options.jwksMaxAgeMs ?? 10 * 60_000,
    cooldownDuration: options.jwksCooldownMs ?? 30_000,
    timeoutDuration: timeoutMs,
    [customFetch]: fetchImpl,
  };
  let jwksUrl = options.jwksUri ? new URL(options.jwksUri) : undefined;
  let remote: RemoteJWKSet | undefined = jwksUrl && createRemoteJWKSet(jwksUrl, remoteOptions);
  let discovering: Promise<RemoteJWKSet> | undefined;
  const logged = new Map<string, number>();

  const unavailable = (reason: string): KeysUnavailableError => {
    const at = Date.now();
    if ((logged.get(reason) ?? -Infinity) + 10_000 <= at) {
      logged.set(reason, at);
      if (logged.size > 100) logged.delete(logged.keys().next().value as string);
      logger.warn(`access-token verifier: cannot get the keys of ${options.issuer}, answering 503: ${reason}`);
    }
    return new KeysUnavailableError(reason);
  };

  async function discover(): Promise<RemoteJWKSet> {
    const url = `${options.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let response: Response;
    try {
      response = await fetchImpl(url, {
        headers: new Headers({ accept: 'application/json' }),
        method: 'GET',
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw unavailable(`discovery document ${url} unreachable (${reasonOf(error)})`);
    }
    if (response.status !== 200) throw unavailable(`discovery document ${url} answered ${response.status}, not 200`);
    let metadata: { issuer?: unknown; jwks_uri?: unknown };
    try {
      metadata = (await response.json()) as typeof metadata;
    } catch {
      throw unavailable(`discovery document ${url} is not JSON (is the issuer the identity service's API_URL?)`);
    }
    if (metadata?.issuer !== options.issuer) {
      throw unavailable(`discovery document ${url} names the issuer ${JSON.stringify(metadata?.issuer)}, not ${options.issuer}`);
    }
    if (typeof metadata.jwks_uri !== 'string' || !URL.canParse(metadata.jwks_uri)) {
      throw unavailable(`discovery document ${url} has no valid jwks_uri`);
    }
    jwksUrl = new URL(metadata.jwks_uri);
    return createRemoteJWKSet(jwksUrl, remoteOptions);
  }

  return async (header, token) => {
    if (!remote) {
      // One discovery at a time; a failed one is tried again by the next request.
      discovering ??= discover().finally(() => (discovering = undefined));
      remote = await discovering;
    }
    try {
      return await remote(header, token);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
      throw unavailable(`the keys at ${jwksUrl?.href} could not be fetched (${reasonOf(error)})`);
    }
  };
}

function reasonOf(error: unknown): string {
  // Duck-typed: fetch's errors may come from another realm (undici), where instanceof fails.
  const { name, message, cause } = (error ?? {}) as { name?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  if (error instanceof errors.JWKSTimeout || name === 'TimeoutError') return 'timed out';
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : undefined;
  const text = typeof message === 'string' ? message : String(error);
  return detail ? `${text}: ${detail}` : text;
}

function readAuthorization(header: string | string[] | undefined): { scheme: 'Bearer' | 'DPoP'; token: string } {
  const value = single(header);
  if (!value) throw new AccessTokenError('missing_token', 'An access token is required', 'Bearer');
  const match = /^(Bearer|DPoP) +([A-Za-z0-9_.~+/-]+=*)$/i.exec(value.trim());
  if (!match) throw new AccessTokenError('invalid_token', 'The Authorization header must be Bearer or DPoP with a token', 'Bearer');
  const scheme = match[1].toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer';
  if (match[2].length > MAX_TOKEN_LENGTH) throw new AccessTokenError('invalid_token', 'The token is too long', scheme);
  return { scheme, token: match[2] };
}

/** One header value; a repeated header (an array, or values joined by commas) counts as none. */
function single(value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) return value.length === 1 ? single(value[0]) : undefined;
  if (typeof value !== 'string' || value.includes(',')) return undefined;
  return value.trim() || undefined;
}

/** Scheme, host, port and path as URL parsing normalises them (RFC 9449 §4.3: no query, no fragment). */
function normaliseUrl(url: string | URL): string | undefined {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return undefined;
  }
}

function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'The token has expired';
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'iss') return 'The token is from another issuer';
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'aud') return 'The token is for another resource';
  if (error instanceof errors.JWKSNoMatchingKey) return 'The token is signed by an unknown key';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'The token signature is invalid';
  return 'The token is invalid';
}

function isConfirmation(value: unknown): value is { jkt: string } {
  return !!value && typeof value === 'object' && typeof (value as { jkt?: unknown }).jkt === 'string';
}

function isOrganization(value: unknown): value is { id: string; slug: string; roles: unknown } {
  return isObject(value) && typeof value.id === 'string' && typeof value.slug === 'string';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function stringArray(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
