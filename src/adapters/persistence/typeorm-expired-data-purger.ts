import { setTimeout as delay } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { ExpiredDataPurger, PurgeStalledError } from '../../application/ports/expired-data-purger';
import { SessionLifetime } from '../../domain/session/session';
import { QUERY_CANCELED, sqlState } from './database-errors';
import { ENDED_OPEN } from './session.mapper';
import { TypeOrmTransaction } from './typeorm-transaction';

/** Back-channel logouts sent or given up are kept this long (a week) for diagnosis. */
const BACKCHANNEL_LOGOUT_RETENTION_MS = 7 * 86_400_000;

/**
 * How long one purge statement may run, and so hold the locks of the rows it deletes, before
 * PostgreSQL cancels it (`statement_timeout`, set for its transaction only). A cancelled
 * statement changes nothing; its rows are then taken in halves.
 */
export const PURGE_STATEMENT_TIMEOUT_MS = 80;
/** The smallest batch a cancelled purge falls back to. */
export const PURGE_MIN_BATCH = 16;
/**
 * Tries of the smallest batch before the purge gives up until the next run, with a pause before
 * each retry (a quarter second, then half a second): a stall of the disk passes, a row held by a
 * long transaction does not.
 */
export const PURGE_MIN_BATCH_TRIES = 3;
const STALL_PAUSE_MS = 250;

/**
 * Batched deletes: each call picks at most `limit` primary keys through an index and deletes
 * them in short statements, each bounded by PURGE_STATEMENT_TIMEOUT_MS. Plain SQL that runs on
 * PostgreSQL 15 and PGlite alike (the embedded database, one session at a time, does not enforce
 * the bound; nothing else waits on its locks).
 */
@Injectable()
export class TypeOrmExpiredDataPurger implements ExpiredDataPurger {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async purgeEndedSessions(endedBefore: Date, limit: number): Promise<number> {
    // Sessions that ended by time were closed — marked revoked at their end — by
    // closeEndedSessions, earlier in the same housekeeping run: every ended session is a revoked
    // one here, found through sessions_ended_idx. (Looking for open ones past their end through
    // sessions_expires_idx read the end of every closed session too: 0.3–1.3 s per batch at
    // 3,000,000 sessions.) The ORDER BY keeps the read on that index: without it the planner
    // picks a scan of the table whenever most sessions are due, and each batch reads further into
    // it, past the rows the earlier batches deleted (the last one, finding none, the whole table).
    // Refresh tokens go by ON DELETE CASCADE.
    return this.inBatches(
      limit,
      `WITH gone AS (
         DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE revoked_at < $1 ORDER BY revoked_at LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      (size) => [endedBefore, size],
    );
  }

  async closeEndedSessions(realmId: string, now: Date, lifetime: SessionLifetime, limit: number): Promise<number> {
    // Each way to end read through its own partial index; the UPDATE repeats the condition, so a
    // session a refresh touched meanwhile is checked again on its newest version.
    const idleEnd = `s.last_active_at + make_interval(secs => $3)`;
    const maxEnd = `s.created_at + make_interval(secs => $4)`;
    return this.inBatches(
      limit,
      `WITH ended AS (
         (SELECT id FROM sessions s WHERE s.realm_id = $1 AND s.revoked_at IS NULL AND s.expires_at <= $2 LIMIT $5)
         UNION
         (SELECT id FROM sessions s WHERE s.realm_id = $1 AND s.revoked_at IS NULL
             AND s.last_active_at <= $2::timestamptz - make_interval(secs => $3) LIMIT $5)
         UNION
         (SELECT id FROM sessions s WHERE s.realm_id = $1 AND s.revoked_at IS NULL
             AND s.created_at <= $2::timestamptz - make_interval(secs => $4) LIMIT $5)
         LIMIT $5
       ), closed AS (
         UPDATE sessions s SET revoked_at = least(s.expires_at, ${idleEnd}, ${maxEnd}), revoke_reason = 'expired'
         FROM ended WHERE s.id = ended.id AND ${ENDED_OPEN('$2', '$3', '$4')}
         RETURNING 1)
       SELECT count(*)::int AS n FROM closed`,
      (size) => [realmId, now, lifetime.idleTimeoutSeconds, lifetime.maxLifetimeSeconds, size],
    );
  }

  async purgeSpentOneTimeTokens(spentBefore: Date, limit: number): Promise<number> {
    return this.inBatches(
      limit,
      `WITH doomed AS (
         (SELECT token_hash FROM one_time_tokens WHERE used_at < $1 LIMIT $2)
         UNION
         (SELECT token_hash FROM one_time_tokens WHERE expires_at < $1 LIMIT $2)
         LIMIT $2
       ), gone AS (DELETE FROM one_time_tokens WHERE token_hash IN (SELECT token_hash FROM doomed) RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      (size) => [spentBefore, size],
    );
  }

  async purgeDeliveredEmails(sentBefore: Date, limit: number): Promise<number> {
    return this.inBatches(
      limit,
      `WITH gone AS (
         DELETE FROM email_outbox WHERE id IN (
           SELECT id FROM email_outbox WHERE status = 'sent' AND sent_at < $1 LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      (size) => [sentBefore, size],
    );
  }

  async purgeDeliveredWebhooks(deliveredBefore: Date, limit: number): Promise<number> {
    return this.inBatches(
      limit,
      `WITH gone AS (
         DELETE FROM webhook_deliveries WHERE id IN (
           SELECT id FROM webhook_deliveries WHERE status = 'delivered' AND delivered_at < $1 LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      (size) => [deliveredBefore, size],
    );
  }

  async purgeAuditEvents(before: Date, limit: number): Promise<number> {
    return this.inBatches(
      limit,
      `WITH gone AS (
         DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE at < $1 LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      (size) => [before, size],
    );
  }

  async purgeExpiredOpArtifacts(expiredBefore: Date, limit: number): Promise<number> {
    const artifacts = await this.inBatches(
      limit,
      `WITH gone AS (
         DELETE FROM op_artifacts WHERE (realm_id, model, id) IN (
           SELECT realm_id, model, id FROM op_artifacts WHERE expires_at < $1 LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      (size) => [expiredBefore, size],
    );
    if (artifacts >= limit) return artifacts;
    const logouts = await this.inBatches(
      limit - artifacts,
      `WITH gone AS (
         DELETE FROM op_backchannel_logouts WHERE id IN (
           SELECT id FROM op_backchannel_logouts WHERE status <> 'pending' AND created_at < $1 LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      (size) => [new Date(expiredBefore.getTime() - BACKCHANNEL_LOGOUT_RETENTION_MS), size],
    );
    return artifacts + logouts;
  }

  /**
   * Up to `limit` rows through `sql` (whose last parameter is the batch size), each statement
   * bounded in time. A statement cancelled by the bound is undone and retried on half as many
   * rows, down to PURGE_MIN_BATCH; the smaller size then holds for the rest of the call.
   * PURGE_MIN_BATCH_TRIES cancellations in a row at the smallest size end the call.
   */
  private async inBatches(limit: number, sql: string, params: (size: number) => unknown[]): Promise<number> {
    let done = 0;
    let size = limit;
    let stalls = 0;
    while (done < limit) {
      const want = Math.min(size, limit - done);
      let changed: number;
      try {
        changed = await this.bounded(sql, params(want));
      } catch (error) {
        if (sqlState(error) !== QUERY_CANCELED) throw error;
        if (want <= PURGE_MIN_BATCH) {
          stalls += 1;
          if (stalls >= PURGE_MIN_BATCH_TRIES) throw new PurgeStalledError(done);
          await delay(STALL_PAUSE_MS * stalls);
        }
        size = Math.max(PURGE_MIN_BATCH, Math.floor(want / 2));
        continue;
      }
      stalls = 0;
      done += changed;
      if (changed < want) break;
    }
    return done;
  }

  /** One statement in its own transaction, under `statement_timeout` for that transaction only. */
  private bounded(sql: string, params: unknown[]): Promise<number> {
    return this.tx.run(async () => {
      await this.tx.manager.query(`SELECT set_config('statement_timeout', $1, true)`, [`${PURGE_STATEMENT_TIMEOUT_MS}ms`]);
      const rows: { n: number }[] = await this.tx.manager.query(sql, params);
      return Number(rows[0]?.n ?? 0);
    });
  }
}
