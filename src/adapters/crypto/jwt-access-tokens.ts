import { createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { LRUCache } from 'lru-cache';
import {
  ACCESS_TOKEN_ALGORITHM,
  AccessTokenClaims,
  AccessTokens,
  realmIssuer,
  VerifiedAccessToken,
} from '../../application/ports/access-tokens';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { TypeOrmSigningKeyStore, StoredSigningKey } from '../persistence/typeorm-signing-key-store';

const ALGORITHM = ACCESS_TOKEN_ALGORITHM;
const TOKEN_TYPE = 'at+jwt';
/** A user with 32 roles of 64 characters and 1 KiB of app metadata gets tokens of about 5 KB. */
const MAX_TOKEN_LENGTH = 8192;
const KID = /^[A-Za-z0-9_-]{1,64}$/;
/** A compact JWS: three base64url segments. */
const COMPACT = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;
/** Tokens whose signature was verified, remembered (about 1 KiB each) so a client's next calls skip ECDSA. */
const VERIFIED_CACHE_SIZE = 5000;
/** Keys are re-read at least this often, so every instance follows a rotation made elsewhere. */
const KEYS_MAX_AGE_MS = 60_000;
/** Fresh reads (unknown kid, JWKS) are spaced by this much, so forged kids cannot flood the database. */
const FRESH_READ_GAP_MS = 250;

interface LoadedKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  jwk: Record<string, unknown>;
  createdAt: Date;
  retiredAt: Date | null;
}

const invalid = () => new DomainError('INVALID_TOKEN', 'The access token is invalid');

/**
 * ES256 access tokens through @nestjs/jwt. A verified token is remembered (by its exact text), so
 * a client's later calls with the same token skip the ECDSA check. Keys live in the database so every instance signs and
 * verifies with the same set. Each instance caches them for a minute, and reads them afresh when
 * a token names a kid it does not know (a key rotated on another instance) and for every JWKS
 * answer, so a rotation anywhere is served and accepted everywhere at once. A fresh read always
 * starts after the request that needs it arrived; concurrent requests share one, and fresh reads
 * are at least 250 ms apart.
 */
@Injectable()
export class JwtAccessTokens implements AccessTokens {
  private keys: Promise<LoadedKey[]> | null = null;
  private loadedAt = 0;
  /** Exact token text → its verified claims and kid; the least recently used go first. */
  private readonly verified = new LRUCache<string, { kid: string; claims: VerifiedAccessToken }>({ max: VERIFIED_CACHE_SIZE });
  private nextFreshRead: Promise<LoadedKey[]> | null = null;

  constructor(
    private readonly jwt: JwtService,
    private readonly store: TypeOrmSigningKeyStore,
    private readonly config: AppConfig,
  ) {}

  async issue(claims: AccessTokenClaims, now: Date, ttlSeconds: number): Promise<string> {
    const key = (await this.loadKeys()).find((k) => !k.retiredAt);
    if (!key) throw new Error('No current signing key');
    const iat = Math.floor(now.getTime() / 1000);
    return this.jwt.signAsync(
      { ...claims, iss: realmIssuer(this.config.issuer, claims.realm), iat, exp: iat + ttlSeconds, jti: randomUUID() },
      { privateKey: key.privateKey as unknown as string, algorithm: ALGORITHM, header: { alg: ALGORITHM, typ: TOKEN_TYPE, kid: key.kid } },
    );
  }

  async verify(token: string, now: Date): Promise<VerifiedAccessToken> {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) throw invalid();
    // A client presents the same token for its whole life: the same text verifies the same way,
    // so only the time and the key's presence are checked again.
    const known = this.verified.get(token);
    if (known && (await this.loadKeys()).some((k) => k.kid === known.kid)) {
      if (Math.floor(now.getTime() / 1000) >= known.claims.exp) throw new DomainError('TOKEN_EXPIRED', 'The access token has expired');
      return copyClaims(known.claims);
    }
    const segments = COMPACT.exec(token);
    if (!segments) throw invalid();
    const header = decodeSegment(segments[1]);
    // The header is untrusted: only our algorithm and type, and a kid used as a lookup key only.
    if (!header || header.alg !== ALGORITHM || header.typ !== TOKEN_TYPE || typeof header.kid !== 'string' || !KID.test(header.kid)) {
      throw invalid();
    }
    const key = await this.findKey(header.kid);
    if (!key) throw invalid();
    let payload: Record<string, unknown>;
    try {
      // The library checks the signature (ES256 only, so never `none` or an HMAC keyed with the
      // public key) before any claim, then nbf and exp; `iss` must be the realm's own, below.
      payload = await this.jwt.verifyAsync(token, {
        publicKey: key.publicKey as unknown as string,
        algorithms: [ALGORITHM],
        clockTimestamp: Math.floor(now.getTime() / 1000),
      });
    } catch (error) {
      if ((error as Error).name === 'TokenExpiredError') throw new DomainError('TOKEN_EXPIRED', 'The access token has expired');
      throw invalid();
    }
    const { iss, sub, realm, sid, roles, amr, jti, iat, exp, cnf } = payload;
    // The realms' OpenID providers sign their access tokens for APIs with the same keys: those
    // carry an audience and the client's id, first-party tokens never do (refused here).
    if (payload.aud !== undefined || payload.client_id !== undefined) throw invalid();
    if (
      typeof sub !== 'string' ||
      typeof realm !== 'string' ||
      iss !== realmIssuer(this.config.issuer, realm) ||
      typeof sid !== 'string' ||
      typeof jti !== 'string' ||
      typeof iat !== 'number' ||
      typeof exp !== 'number' ||
      !isStringArray(roles) ||
      !isStringArray(amr) ||
      (cnf !== undefined && !isConfirmation(cnf))
    ) {
      throw invalid();
    }
    const claims: VerifiedAccessToken = { sub, realm, sid, roles, amr, jti, iat, exp, ...(cnf ? { cnf: { jkt: cnf.jkt } } : {}) };
    this.verified.set(token, { kid: key.kid, claims: copyClaims(claims) });
    return claims;
  }

  async jwks(): Promise<{ keys: Record<string, unknown>[] }> {
    const keys = await this.freshKeys();
    return { keys: keys.map((k) => ({ ...k.jwk, kid: k.kid, alg: ALGORITHM, use: 'sig' })) };
  }

  async rotate(now: Date): Promise<string> {
    const kid = await this.store.rotate(generateKey(now));
    this.keys = null;
    return kid;
  }

  async rotateIfOlderThan(cutoff: Date, now: Date): Promise<string | null> {
    const kid = await this.store.rotateIfOlderThan(cutoff, () => generateKey(now));
    if (kid) this.keys = null;
    return kid;
  }

  /** Creates the first key when the database has none. */
  async ensureKey(now: Date): Promise<void> {
    await this.store.ensureOne(() => generateKey(now));
    this.keys = null;
  }

  private async findKey(kid: string): Promise<LoadedKey | undefined> {
    const key = (await this.loadKeys()).find((k) => k.kid === kid);
    return key ?? (await this.freshKeys()).find((k) => k.kid === kid);
  }

  /** The cached keys, re-read when older than a minute. */
  private loadKeys(): Promise<LoadedKey[]> {
    if (!this.keys || Date.now() - this.loadedAt > KEYS_MAX_AGE_MS) return this.read();
    return this.keys;
  }

  /**
   * Keys from a read that starts after this call. Callers share a read that has not started yet;
   * reads are spaced by FRESH_READ_GAP_MS.
   */
  private freshKeys(): Promise<LoadedKey[]> {
    if (this.nextFreshRead) return this.nextFreshRead;
    const wait = Math.max(0, this.loadedAt + FRESH_READ_GAP_MS - Date.now());
    const started = wait > 0 ? new Promise<void>((resolve) => setTimeout(resolve, wait).unref()) : Promise.resolve();
    const next: Promise<LoadedKey[]> = started.then(() => {
      if (this.nextFreshRead === next) this.nextFreshRead = null;
      return this.read();
    });
    this.nextFreshRead = next;
    return next;
  }

  private read(): Promise<LoadedKey[]> {
    this.loadedAt = Date.now();
    const loading = this.store.published().then((rows) => rows.map(toLoadedKey));
    loading.catch(() => {
      if (this.keys === loading) this.keys = null;
    });
    this.keys = loading;
    return loading;
  }
}

function generateKey(now: Date): StoredSigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    kid: randomUUID(),
    algorithm: ALGORITHM,
    privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicJwk: publicKey.export({ format: 'jwk' }) as Record<string, unknown>,
    createdAt: now,
    retiredAt: null,
  };
}

function toLoadedKey(row: StoredSigningKey): LoadedKey {
  const privateKey = createPrivateKey(row.privateKey);
  return {
    kid: row.kid,
    privateKey,
    publicKey: createPublicKey(privateKey),
    jwk: row.publicJwk as Record<string, unknown>,
    createdAt: row.createdAt,
    retiredAt: row.retiredAt,
  };
}

/** A JSON object segment, or null for anything else. */
function decodeSegment(segment: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A copy the caller may change without touching the cache. */
function copyClaims(claims: VerifiedAccessToken): VerifiedAccessToken {
  return { ...claims, roles: [...claims.roles], amr: [...claims.amr], ...(claims.cnf ? { cnf: { ...claims.cnf } } : {}) };
}

function isConfirmation(value: unknown): value is { jkt: string } {
  return !!value && typeof value === 'object' && typeof (value as { jkt?: unknown }).jkt === 'string';
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}
