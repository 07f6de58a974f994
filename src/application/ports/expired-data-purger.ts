import { SessionLifetime } from '../../domain/session/session';

/**
 * Deletes data past its retention, one small batch per call so that no statement holds locks
 * for long. Each method returns how many rows it deleted; fewer than `limit` means done.
 */
export abstract class ExpiredDataPurger {
  /**
   * Closes sessions of `realmId` that ended by time at `now` under `lifetime` (idle, or past their
   * absolute end) but were never revoked: marks them revoked at the moment they ended, so that the
   * realm's kept count of open sessions stays close to its live ones. Nothing else changes for
   * them: an ended session is refused either way, and the purge goes by the same end.
   */
  abstract closeEndedSessions(realmId: string, now: Date, lifetime: SessionLifetime, limit: number): Promise<number>;
  /**
   * Sessions revoked before `endedBefore`, together with their refresh tokens. Sessions that ended
   * by time (idle, or past their absolute lifetime) are among them once `closeEndedSessions` has
   * closed them, revoked at the moment they ended.
   */
  abstract purgeEndedSessions(endedBefore: Date, limit: number): Promise<number>;
  /** One-time tokens (email verification, password reset, MFA challenges) used or expired before `spentBefore`. */
  abstract purgeSpentOneTimeTokens(spentBefore: Date, limit: number): Promise<number>;
  /** Outbox emails delivered before `sentBefore`. Pending and failed ones are kept. */
  abstract purgeDeliveredEmails(sentBefore: Date, limit: number): Promise<number>;
  /** Webhook deliveries delivered before `deliveredBefore`. Pending and failed ones are kept. */
  abstract purgeDeliveredWebhooks(deliveredBefore: Date, limit: number): Promise<number>;
  /** Audit events that happened before `before`. */
  abstract purgeAuditEvents(before: Date, limit: number): Promise<number>;
}
