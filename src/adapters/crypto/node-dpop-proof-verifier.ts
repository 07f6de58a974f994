import { createHash, createPublicKey, KeyObject, verify as verifySignature } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { LRUCache } from 'lru-cache';
import { DpopExpectation, DpopProofCheck, DpopProofVerifier, DpopRefusalReason } from '../../application/ports/dpop-proof-verifier';

const MAX_PROOF_LENGTH = 8192;
const MAX_JTI_LENGTH = 128;
/** A compact JWS: three base64url segments. */
const COMPACT = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;
/** Members that only a private (or symmetric) JWK has. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'];
/** The public-key shape of each accepted algorithm, and how its signature is checked. */
const ALGORITHMS: Record<string, { kty: string; crv: string; members: string[]; digest: string | null; signatureBytes: number }> = {
  ES256: { kty: 'EC', crv: 'P-256', members: ['x', 'y'], digest: 'sha256', signatureBytes: 64 },
  EdDSA: { kty: 'OKP', crv: 'Ed25519', members: ['x'], digest: null, signatureBytes: 64 },
};
/** Keys by their public members: a client signs every proof with the same key, so it is imported and hashed once. */
const KEY_CACHE_SIZE = 10_000;

interface KnownKey {
  jkt: string;
  key: KeyObject;
}

const refused = (reason: DpopRefusalReason, message: string): DpopProofCheck => ({ ok: false, reason, message });

/**
 * DPoP proofs (RFC 9449). The header is read first and must hold typ dpop+jwt, ES256 or EdDSA
 * and a public `jwk` of that algorithm's key type, nothing critical; the signature is checked
 * with that embedded key, then every claim. A key seen before costs one signature check and no
 * more: its RFC 7638 thumbprint (by jose) and its imported form are cached. Node's own verify
 * is used for the signature because the WebCrypto path costs about three times the CPU, and
 * this runs on every request of a bound session.
 */
@Injectable()
export class NodeDpopProofVerifier implements DpopProofVerifier {
  private readonly keys = new LRUCache<string, KnownKey>({ max: KEY_CACHE_SIZE });

  async verify(proof: string, expected: DpopExpectation): Promise<DpopProofCheck> {
    if (typeof proof !== 'string' || proof.length > MAX_PROOF_LENGTH) return refused('malformed', 'The DPoP proof is not a JWT');
    const segments = COMPACT.exec(proof);
    const header = segments ? decodeSegment(segments[1]) : null;
    if (!segments || !header) return refused('malformed', 'The DPoP proof is not a JWT');
    if (header.typ !== 'dpop+jwt') return refused('header', 'The DPoP proof must have typ dpop+jwt');
    const alg = header.alg;
    const algorithm = typeof alg === 'string' && Object.hasOwn(ALGORITHMS, alg) ? ALGORITHMS[alg] : null;
    if (!algorithm) return refused('header', 'The DPoP proof must be signed with ES256 or EdDSA');
    if ('crit' in header) return refused('header', 'The DPoP proof must not have critical header parameters');
    const jwk = header.jwk;
    if (!jwk || typeof jwk !== 'object' || Array.isArray(jwk)) return refused('header', 'The DPoP proof must carry its public key (jwk)');
    const members = jwk as Record<string, unknown>;
    if (PRIVATE_MEMBERS.some((m) => m in members)) return refused('private_key', 'The DPoP proof’s jwk must be a public key');
    if (
      members.kty !== algorithm.kty ||
      members.crv !== algorithm.crv ||
      !algorithm.members.every((m) => canonicalCoordinate(members[m]))
    ) {
      return refused('header', `The DPoP proof’s jwk is not a ${algorithm.crv} public key`);
    }

    const known = await this.keyOf(alg as string, members, algorithm.members);
    if (!known) return refused('signature', 'The DPoP proof’s jwk is not a valid public key');
    const signature = Buffer.from(segments[3], 'base64url');
    const signed = Buffer.from(`${segments[1]}.${segments[2]}`, 'ascii');
    const good =
      signature.length === algorithm.signatureBytes &&
      verifySignature(algorithm.digest, signed, { key: known.key, dsaEncoding: 'ieee-p1363' }, signature);
    if (!good) return refused('signature', 'The DPoP proof’s signature is not valid');
    const payload = decodeSegment(segments[2]);
    if (!payload) return refused('malformed', 'The DPoP proof’s claims are not a JSON object');

    if (payload.htm !== expected.method) return refused('htm', 'The DPoP proof’s htm is not the request method');
    if (typeof payload.htu !== 'string' || !sameUrl(payload.htu, expected.url)) {
      return refused('htu', 'The DPoP proof’s htu is not the request URL');
    }
    const iat = payload.iat;
    if (typeof iat !== 'number' || Math.abs(expected.now.getTime() / 1000 - iat) > expected.maxAgeSeconds) {
      return refused('iat', 'The DPoP proof’s iat is too far from the server time');
    }
    if (typeof payload.exp === 'number' && payload.exp * 1000 <= expected.now.getTime()) {
      return refused('iat', 'The DPoP proof has expired');
    }
    const jti = payload.jti;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) {
      return refused('jti', 'The DPoP proof needs a jti of at most 128 characters');
    }
    if (expected.accessToken !== undefined) {
      const ath = createHash('sha256').update(expected.accessToken).digest('base64url');
      if (payload.ath !== ath) return refused('ath', 'The DPoP proof’s ath does not match the access token');
    }
    return { ok: true, jkt: known.jkt, jti };
  }

  /** The imported key and its thumbprint, cached by algorithm and public members; null for a key that does not import. */
  private async keyOf(alg: string, jwk: Record<string, unknown>, members: string[]): Promise<KnownKey | null> {
    // Members are canonical base64url (no '.'), so this names one key exactly.
    const cacheKey = [alg, ...members.map((m) => jwk[m] as string)].join('.');
    if (alg === 'EdDSA' && smallOrderEd25519(jwk.x as string)) return null;
    const cached = this.keys.get(cacheKey);
    if (cached) return cached;
    // Only the members RFC 7638 names: anything else in the header's jwk plays no part.
    const publicJwk = Object.fromEntries(['kty', 'crv', ...members].map((m) => [m, jwk[m]])) as JWK;
    try {
      const known = {
        key: createPublicKey({ key: publicJwk as never, format: 'jwk' }),
        jkt: await calculateJwkThumbprint(publicJwk, 'sha256'),
      };
      this.keys.set(cacheKey, known);
      return known;
    } catch {
      return null;
    }
  }
}

/**
 * A P-256 coordinate or an Ed25519 key: exactly 32 bytes in canonical base64url (43 characters,
 * unused bits zero). Any other spelling of the same bytes would give the same key another RFC 7638
 * thumbprint, so one private key could stand for many.
 */
function canonicalCoordinate(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value) && Buffer.from(value, 'base64url').toString('base64url') === value;
}

/**
 * The Ed25519 points of small order (and their non-canonical encodings), sign bit ignored: with
 * such a "public key" a signature that verifies for any message can be made without a private key.
 * The list libsodium refuses (`ge25519_has_small_order`).
 */
const SMALL_ORDER_ED25519 = [
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0100000000000000000000000000000000000000000000000000000000000000',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
].map((hex) => Buffer.from(hex, 'hex'));

export function smallOrderEd25519(x: string): boolean {
  const bytes = Buffer.from(x, 'base64url');
  bytes[31] &= 0x7f;
  return SMALL_ORDER_ED25519.some((point) => point.equals(bytes));
}

/** Equal as RFC 3986 normalises them (scheme, host and port case and defaults), query and fragment ignored. */
function sameUrl(claimed: string, expected: string): boolean {
  try {
    const a = new URL(claimed);
    const b = new URL(expected);
    return a.origin === b.origin && a.pathname === b.pathname;
  } catch {
    return false;
  }
}

function decodeSegment(segment: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
