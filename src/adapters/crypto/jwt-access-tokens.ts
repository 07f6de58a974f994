import { createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject, randomUUID, sign, verify } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AccessTokenClaims, AccessTokens, VerifiedAccessToken } from '../../application/ports/access-tokens';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { TypeOrmSigningKeyStore, StoredSigningKey } from '../persistence/typeorm-signing-key-store';

const ALGORITHM = 'ES256';
const TOKEN_TYPE = 'at+jwt';
const MAX_TOKEN_LENGTH = 4096;
const KID = /^[A-Za-z0-9_-]{1,64}$/;
/** A compact JWS: three base64url segments. */
const COMPACT = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;
/** ES256 signatures are r ‖ s, 32 bytes each (RFC 7518 §3.4). */
const SIGNATURE_BYTES = 64;
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
 * ES256 access tokens, signed and verified with node:crypto directly (RFC 7515 compact form,
 * RFC 7518 §3.4 signatures): a third of the CPU that a general JWT library spends, on a check
 * every authenticated request makes. Keys live in the database so every instance signs and
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
  /** Exact token text → its verified claims and kid; insertion order is the eviction order. */
  private readonly verified = new Map<string, { kid: string; claims: VerifiedAccessToken }>();
  private nextFreshRead: Promise<LoadedKey[]> | null = null;

  constructor(
    private readonly store: TypeOrmSigningKeyStore,
    private readonly config: AppConfig,
  ) {}

  async issue(claims: AccessTokenClaims, now: Date, ttlSeconds: number): Promise<string> {
    const key = (await this.loadKeys()).find((k) => !k.retiredAt);
    if (!key) throw new Error('No current signing key');
    const iat = Math.floor(now.getTime() / 1000);
    const header = encodeSegment({ alg: ALGORITHM, typ: TOKEN_TYPE, kid: key.kid });
    const payload = encodeSegment({ iss: this.config.issuer, ...claims, iat, exp: iat + ttlSeconds, jti: randomUUID() });
    const signingInput = `${header}.${payload}`;
    const signature = sign('sha256', Buffer.from(signingInput), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
    return `${signingInput}.${signature.toString('base64url')}`;
  }

  async verify(token: string, now: Date): Promise<VerifiedAccessToken> {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) throw invalid();
    // A client presents the same token for its whole life: the same text verifies the same way,
    // so only the time and the key's presence are checked again.
    const known = this.verified.get(token);
    if (known && (await this.loadKeys()).some((k) => k.kid === known.kid)) {
      if (Math.floor(now.getTime() / 1000) >= known.claims.exp) throw new DomainError('TOKEN_EXPIRED', 'The access token has expired');
      return { ...known.claims, roles: [...known.claims.roles], amr: [...known.claims.amr] };
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
    // The signature first: nothing of the payload is looked at before it is proven ours.
    const signature = Buffer.from(segments[3], 'base64url');
    const signingInput = Buffer.from(`${segments[1]}.${segments[2]}`);
    if (signature.length !== SIGNATURE_BYTES || !verify('sha256', signingInput, { key: key.publicKey, dsaEncoding: 'ieee-p1363' }, signature)) {
      throw invalid();
    }
    const payload = decodeSegment(segments[2]);
    if (!payload) throw invalid();
    const clock = Math.floor(now.getTime() / 1000);
    if (payload.nbf !== undefined && (typeof payload.nbf !== 'number' || payload.nbf > clock)) throw invalid();
    if (typeof payload.exp !== 'number') throw invalid();
    if (clock >= payload.exp) throw new DomainError('TOKEN_EXPIRED', 'The access token has expired');
    if (payload.iss !== this.config.issuer) throw invalid();
    const { sub, realm, sid, roles, amr, jti, iat, exp } = payload;
    if (
      typeof sub !== 'string' || typeof realm !== 'string' || typeof sid !== 'string' || typeof jti !== 'string' ||
      typeof iat !== 'number' || typeof exp !== 'number' || !isStringArray(roles) || !isStringArray(amr)
    ) {
      throw invalid();
    }
    const claims = { sub, realm, sid, roles, amr, jti, iat, exp };
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(token, { kid: key.kid, claims: { ...claims, roles: [...roles], amr: [...amr] } });
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

function encodeSegment(value: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
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

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}
