/** An initial access token (RFC 7591 §3): one dynamic registration in a realm, kept only as a hash. */
export interface InitialAccessToken {
  tokenHash: string;
  realmId: string;
  createdAt: Date;
  expiresAt: Date;
}

export abstract class InitialAccessTokenRepository {
  abstract insert(token: InitialAccessToken): Promise<void>;
  /**
   * Marks the realm's token with that hash used, if it is unused and unexpired at `now`: in one
   * statement, so of two concurrent registrations presenting it exactly one gets true.
   */
  abstract consume(realmId: string, tokenHash: string, now: Date): Promise<boolean>;
}
