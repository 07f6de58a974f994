/** The RSA keys the realms' OpenID providers sign ID tokens with (RS256), beside the access tokens' ES256 keys. */
export abstract class IdTokenKeys {
  /**
   * Makes a new key current if the current one was created before `cutoff` (scheduled rotation,
   * as `AccessTokens.rotateIfOlderThan`); the previous one stays published. Returns the new kid,
   * or null when the key is recent.
   */
  abstract rotateIfOlderThan(cutoff: Date, now: Date): Promise<string | null>;
}
