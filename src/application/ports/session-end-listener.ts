/** Sessions that just ended, in one realm. */
export interface EndedSessions {
  realmId: string;
  sessionIds: readonly string[];
  /**
   * Set when every session of this user ended at once (a password reset or change, an
   * administrator's revoke-all, a suspension, an account takeover): what outlives a single
   * session (an app's `offline_access` grant) ends too.
   */
  allOfUser?: string;
  /** When they ended. */
  at: Date;
}

/**
 * What else ends with a session: the apps' grants made through it (the realm's OpenID provider)
 * and the back-channel logout of those apps. The session repository calls it, in the same
 * transaction, from every path that ends a session (revocation, revoke-all, a hijack flag), so no
 * use case has to remember it.
 */
export abstract class SessionEndListener {
  abstract sessionsEnded(ended: EndedSessions): Promise<void>;
}
