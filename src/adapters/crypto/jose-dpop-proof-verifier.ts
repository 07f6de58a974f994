import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { calculateJwkThumbprint, importJWK, jwtVerify, type CryptoKey, type JWK } from 'jose';
import { LRUCache } from 'lru-cache';
import { DpopExpectation, DpopProofCheck, DpopProofVerifier, DpopRefusalReason } from '../../application/ports/dpop-proof-verifier';

const MAX_PROOF_LENGTH = 8192;
const MAX_JTI_LENGTH = 128;
/** A compact JWS: three base64url segments. */
const COMPACT = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;
/** Members that only a private (or symmetric) JWK has. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'];
/** The public-key shapes each accepted algorithm takes. */
const KEY_SHAPES: Record<string, { kty: string; crv: string; members: string[] }> = {
  ES256: { kty: 'EC', crv: 'P-256', members: ['x', 'y'] },
  EdDSA: { kty: 'OKP', crv: 'Ed25519', members: ['x'] },
};
/** Imported keys by thumbprint: a client signs every proof with the same key, so it is imported once. */
const KEY_CACHE_SIZE = 10_000;

const refused = (reason: DpopRefusalReason, message: string): DpopProofCheck => ({ ok: false, reason, message });

/**
 * DPoP proofs checked with `jose`: the header is read first (typ, alg, a public `jwk` of the
 * algorithm's key type), the signature is verified with that embedded key, then the claims.
 * Keys are imported once per thumbprint, so a client's later proofs cost one signature check.
 */
@Injectable()
export class JoseDpopProofVerifier implements DpopProofVerifier {
  private readonly keys = new LRUCache<string, CryptoKey>({ max: KEY_CACHE_SIZE });

  async verify(proof: string, expected: DpopExpectation): Promise<DpopProofCheck> {
    if (typeof proof !== 'string' || proof.length > MAX_PROOF_LENGTH) return refused('malformed', 'The DPoP proof is not a JWT');
    const segments = COMPACT.exec(proof);
    const header = segments ? decodeSegment(segments[1]) : null;
    if (!header) return refused('malformed', 'The DPoP proof is not a JWT');
    if (header.typ !== 'dpop+jwt') return refused('header', 'The DPoP proof must have typ dpop+jwt');
    const alg = header.alg;
    const shape = typeof alg === 'string' && Object.hasOwn(KEY_SHAPES, alg) ? KEY_SHAPES[alg] : null;
    if (!shape) return refused('header', 'The DPoP proof must be signed with ES256 or EdDSA');
    const jwk = header.jwk;
    if (!jwk || typeof jwk !== 'object' || Array.isArray(jwk)) return refused('header', 'The DPoP proof must carry its public key (jwk)');
    const members = jwk as Record<string, unknown>;
    if (PRIVATE_MEMBERS.some((m) => m in members)) return refused('private_key', 'The DPoP proof’s jwk must be a public key');
    if (members.kty !== shape.kty || members.crv !== shape.crv || !shape.members.every((m) => typeof members[m] === 'string')) {
      return refused('header', `The DPoP proof’s jwk is not a ${shape.crv} public key`);
    }

    let jkt: string;
    let key: CryptoKey;
    let payload: Record<string, unknown>;
    try {
      jkt = await calculateJwkThumbprint(members as JWK, 'sha256');
      const cacheKey = `${alg}:${jkt}`;
      key = this.keys.get(cacheKey) ?? ((await importJWK(members as JWK, alg as string)) as CryptoKey);
      this.keys.set(cacheKey, key);
      ({ payload } = await jwtVerify(proof, key, { typ: 'dpop+jwt', algorithms: [alg as string], currentDate: expected.now }));
    } catch {
      return refused('signature', 'The DPoP proof’s signature or key is not valid');
    }

    if (payload.htm !== expected.method) return refused('htm', 'The DPoP proof’s htm is not the request method');
    if (typeof payload.htu !== 'string' || !sameUrl(payload.htu, expected.url)) {
      return refused('htu', 'The DPoP proof’s htu is not the request URL');
    }
    const iat = payload.iat;
    if (typeof iat !== 'number' || Math.abs(expected.now.getTime() / 1000 - iat) > expected.maxAgeSeconds) {
      return refused('iat', 'The DPoP proof’s iat is too far from the server time');
    }
    const jti = payload.jti;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH) {
      return refused('jti', 'The DPoP proof needs a jti of at most 128 characters');
    }
    if (expected.accessToken !== undefined) {
      const ath = createHash('sha256').update(expected.accessToken).digest('base64url');
      if (payload.ath !== ath) return refused('ath', 'The DPoP proof’s ath does not match the access token');
    }
    return { ok: true, jkt, jti };
  }
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
