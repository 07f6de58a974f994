/** The `jti`s of DPoP proofs already accepted, per key, shared by every instance when it can be. */
export abstract class DpopReplayStore {
  /**
   * Records the proof `jti` of key `jkt` for `ttlSeconds`. True the first time; false when it was
   * already recorded (a replay). Atomic: of concurrent callers with the same pair, one gets true.
   */
  abstract firstUse(jkt: string, jti: string, ttlSeconds: number): Promise<boolean>;
}
