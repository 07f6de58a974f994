/** Opaque secrets for clients, and how they are kept: only as hashes. */
export abstract class SecureTokens {
  /** 256 bits from a CSPRNG, base64url. */
  abstract generate(): string;
  /** One-way hash for storage and lookup. */
  abstract hash(token: string): string;
  /**
   * The deterministic successor of a refresh token: an HMAC under a server-side secret kept in
   * the database, so every instance derives the same token and no client can.
   */
  abstract successorOf(token: string): Promise<string>;
  /** Constant-time equality of two secrets. */
  abstract equal(a: string, b: string): boolean;
  /** `digits` decimal digits from a CSPRNG, uniformly distributed (leading zeros kept). */
  abstract numericCode(digits: number): string;
  /**
   * An HMAC of `value` under a server-side secret kept in the database: for short secrets (an
   * 8-digit code), whose plain hash anyone holding the table could reverse by trying them all.
   */
  abstract keyedHash(value: string): Promise<string>;
  /** The PKCE S256 challenge of a code verifier (RFC 7636 §4.2): base64url SHA-256, no padding. */
  abstract pkceChallenge(verifier: string): string;
}
