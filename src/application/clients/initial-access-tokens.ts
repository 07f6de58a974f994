import { Injectable } from '@nestjs/common';
import { Clock } from '../ports/clock';
import { InitialAccessTokenRepository } from '../ports/initial-access-token.repository';
import { SecureTokens } from '../ports/secure-tokens';

/**
 * Initial access tokens (RFC 7591 §3): each allows one dynamic client registration in its realm
 * while the realm's `clientRegistration` is `token`. 256 random bits, stored as a hash.
 */
@Injectable()
export class InitialAccessTokens {
  constructor(
    private readonly repository: InitialAccessTokenRepository,
    private readonly tokens: SecureTokens,
    private readonly clock: Clock,
  ) {}

  /** A new token for the realm, valid `expiresInSeconds`; the token itself is answered once and kept nowhere. */
  async issue(realmId: string, expiresInSeconds: number): Promise<{ token: string; expiresAt: Date }> {
    const token = this.tokens.generate();
    const createdAt = this.clock.now();
    const expiresAt = new Date(createdAt.getTime() + expiresInSeconds * 1000);
    await this.repository.insert({ tokenHash: this.tokens.hash(token), realmId, createdAt, expiresAt });
    return { token, expiresAt };
  }

  /**
   * Spends the realm's token `presented` on one registration: true once for an unused, unexpired
   * token of that realm, false for anything else (unknown, another realm's, expired, used — also
   * when two registrations present it at once). Call it in the registration's transaction, so a
   * registration that fails afterwards leaves the token unused.
   */
  consume(realmId: string, presented: string): Promise<boolean> {
    return this.repository.consume(realmId, this.tokens.hash(presented), this.clock.now());
  }
}
