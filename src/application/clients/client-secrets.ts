import { Injectable } from '@nestjs/common';
import { Client } from '../../domain/client/client';
import { SecureTokens } from '../ports/secure-tokens';

/**
 * Client secrets: 256 random bits, shown once (at creation and rotation), stored only as a hash.
 * A plain SHA-256 (`SecureTokens.hash`) suffices here, unlike for passwords: a 256-bit random
 * secret cannot be found by trying candidates against its hash, so a slow or salted hash would
 * add nothing but a cost to every token request.
 */
@Injectable()
export class ClientSecrets {
  constructor(private readonly tokens: SecureTokens) {}

  /** A new secret and the hash to store; the secret itself is answered once and kept nowhere. */
  issue(): { secret: string; hash: string } {
    const secret = this.tokens.generate();
    return { secret, hash: this.tokens.hash(secret) };
  }

  /**
   * Whether `presented` is the client's current secret, compared in constant time (for the token
   * endpoint's `client_secret_basic` and `client_secret_post`). Always false for a client without
   * a secret (a public one).
   */
  verify(client: Client, presented: string): boolean {
    const stored = client.secretHash;
    // The comparison runs even without a stored hash, so the answer takes the same time.
    const matches = this.tokens.equal(this.tokens.hash(presented), stored ?? '');
    return stored !== null && matches;
  }
}
