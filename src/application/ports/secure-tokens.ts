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
}
