import { Injectable } from '@nestjs/common';
import { ExpiredDataPurger } from '../../application/ports/expired-data-purger';
import { SessionLifetime } from '../../domain/session/session';
import { ENDED_OPEN } from './session.mapper';
import { TypeOrmTransaction } from './typeorm-transaction';

/**
 * Batched deletes: each call picks at most `limit` primary keys through an index and deletes
 * them in one short statement. Plain SQL that runs on PostgreSQL 15 and PGlite alike.
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
    return this.count(
      `WITH gone AS (
         DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE revoked_at < $1 ORDER BY revoked_at LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [endedBefore, limit],
    );
  }

  async closeEndedSessions(realmId: string, now: Date, lifetime: SessionLifetime, limit: number): Promise<number> {
    // Each way to end read through its own partial index; the UPDATE repeats the condition, so a
    // session a refresh touched meanwhile is checked again on its newest version.
    const params = [realmId, now, lifetime.idleTimeoutSeconds, lifetime.maxLifetimeSeconds, limit];
    const idleEnd = `s.last_active_at + make_interval(secs => $3)`;
    const maxEnd = `s.created_at + make_interval(secs => $4)`;
    return this.count(
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
      params,
    );
  }

  async purgeSpentOneTimeTokens(spentBefore: Date, limit: number): Promise<number> {
    return this.count(
      `WITH doomed AS (
         (SELECT token_hash FROM one_time_tokens WHERE used_at < $1 LIMIT $2)
         UNION
         (SELECT token_hash FROM one_time_tokens WHERE expires_at < $1 LIMIT $2)
         LIMIT $2
       ), gone AS (DELETE FROM one_time_tokens WHERE token_hash IN (SELECT token_hash FROM doomed) RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [spentBefore, limit],
    );
  }

  async purgeDeliveredEmails(sentBefore: Date, limit: number): Promise<number> {
    return this.count(
      `WITH gone AS (
         DELETE FROM email_outbox WHERE id IN (
           SELECT id FROM email_outbox WHERE status = 'sent' AND sent_at < $1 LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [sentBefore, limit],
    );
  }

  async purgeDeliveredWebhooks(deliveredBefore: Date, limit: number): Promise<number> {
    return this.count(
      `WITH gone AS (
         DELETE FROM webhook_deliveries WHERE id IN (
           SELECT id FROM webhook_deliveries WHERE status = 'delivered' AND delivered_at < $1 LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [deliveredBefore, limit],
    );
  }

  async purgeAuditEvents(before: Date, limit: number): Promise<number> {
    return this.count(
      `WITH gone AS (
         DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE at < $1 LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [before, limit],
    );
  }

  private async count(sql: string, params: unknown[]): Promise<number> {
    const rows: { n: number }[] = await this.tx.manager.query(sql, params);
    return Number(rows[0]?.n ?? 0);
  }
}
