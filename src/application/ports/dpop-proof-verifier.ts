/** The algorithms a DPoP proof may be signed with (also named by the discovery document). */
export const DPOP_PROOF_ALGORITHMS = ['ES256', 'EdDSA'];

/** What a DPoP proof must say to be accepted for one request. */
export interface DpopExpectation {
  /** The request's method (`htm`). */
  method: string;
  /** The request's URL without query or fragment (`htu`). */
  url: string;
  /** On resource requests, the access token the proof must cover (`ath`). */
  accessToken?: string;
  now: Date;
  /** How far `iat` may be from `now`, either way. */
  maxAgeSeconds: number;
}

/** Why a proof was refused, as the audit trail records it. */
export type DpopRefusalReason =
  'missing' | 'malformed' | 'header' | 'private_key' | 'signature' | 'htm' | 'htu' | 'iat' | 'jti' | 'ath' | 'other_key' | 'replay';

export type DpopProofCheck =
  | { ok: true; /** RFC 7638 SHA-256 thumbprint of the proof's key. */ jkt: string; jti: string }
  | { ok: false; reason: DpopRefusalReason; message: string };

/** Checks DPoP proofs (RFC 9449): the JWT, its embedded public key and its claims — not replay. */
export abstract class DpopProofVerifier {
  /**
   * A proof is a JWT of `typ` dpop+jwt, alg ES256 or EdDSA, signed by the public `jwk` of its
   * header (private members refused), whose `htm`, `htu`, `iat`, `jti` (≤ 128 characters) and,
   * for a resource request, `ath` match the expectation. Never throws for a bad proof.
   */
  abstract verify(proof: string, expected: DpopExpectation): Promise<DpopProofCheck>;
}
