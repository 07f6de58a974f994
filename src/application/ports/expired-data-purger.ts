import { SessionLifetime } from '../../domain/session/session';

/**
 * A purge whose statements kept running past their time bound even on the smallest batch (a due
 * row held by another transaction, a stalled disk): what it did not delete waits for the next run.
 */
export class PurgeStalledError extends Error {
  /** @param deleted rows the call deleted before it stalled */
  constructor(readonly deleted: number) {
    super('A purge statement ran past its time bound on the smallest batch');
    this.name = 'PurgeStalledError';
  }
}

/**
 * Deletes data past its retention, one small batch per call so that no statement holds locks
 * for long. Each method returns how many rows it deleted; fewer than `limit` means done. A
 * statement that runs past the adapter's time bound is undone and the rows are taken in smaller
 * batches; when even the smallest one does not finish in time, the method throws
 * PurgeStalledError, which tells how many rows it deleted before.
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
  /**
   * The OpenID provider's artifacts (codes, tokens, sessions, grants…) that expired before
   * `expiredBefore`, and its back-channel logouts sent (or given up) a week before it.
   */
  abstract purgeExpiredOpArtifacts(expiredBefore: Date, limit: number): Promise<number>;
}
