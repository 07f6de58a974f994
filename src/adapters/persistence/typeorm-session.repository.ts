import { Injectable } from '@nestjs/common';
import { IsNull } from 'typeorm';
import { SessionEndListener } from '../../application/ports/session-end-listener';
import { SessionQuery, SessionRepository } from '../../application/ports/session.repository';
import { Session, SessionLifetime } from '../../domain/session/session';
import { SessionRecord } from './records/session.record';
import { LIVE, SESSION_COLUMNS, sessionById, toSession, toSessionRecord } from './session.mapper';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';
import { isUuid } from './typeorm-user.repository';

/**
 * The open sessions of realm $1 that ended by time at $2 (idle timeout $3, maximum lifetime $4),
 * counted in three disjoint parts — past their absolute end; else idle; else too old — so that
 * each is a range of its own index read without the table (one count over the three conditions
 * ORed is planned as a scan of all the realm's open sessions, the planner's estimate for each
 * condition coming from every session, closed ones included).
 */
const ENDED_OPEN_COUNT = `(
  (SELECT count(*) FROM sessions s WHERE s.realm_id = $1 AND s.revoked_at IS NULL AND s.expires_at <= $2)
  + (SELECT count(*) FROM sessions s WHERE s.realm_id = $1 AND s.revoked_at IS NULL
       AND s.last_active_at <= $2::timestamptz - make_interval(secs => $3) AND s.expires_at > $2)
  + (SELECT count(*) FROM sessions s WHERE s.realm_id = $1 AND s.revoked_at IS NULL
       AND s.created_at <= $2::timestamptz - make_interval(secs => $4)
       AND s.last_active_at > $2::timestamptz - make_interval(secs => $3) AND s.expires_at > $2))`;

/**
 * Every way a session ends passes through `revoke`, `revokeAllForUser` or the `save` of a flag;
 * each tells the SessionEndListener in the same transaction (the apps signed in through the
 * session lose its grants and are sent a back-channel logout).
 */
@Injectable()
export class TypeOrmSessionRepository implements SessionRepository {
  constructor(
    private readonly tx: TypeOrmTransaction,
    private readonly ends: SessionEndListener,
  ) {}

  /** Batchable (`TypeOrmTransaction.write`). */
  async insert(session: Session): Promise<void> {
    const r = toSessionRecord(session);
    await this.tx.write(
      `INSERT INTO sessions (id, realm_id, user_id, device_id, device_name, device_type, fingerprint, reference_fingerprint,
         ip, country, city, user_agent, amr, status, flag_reason, flag_score, flagged_at, created_at, last_active_at,
         expires_at, revoked_at, revoke_reason, dpop_jkt)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13::text[], $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`,
      [
        r.id,
        r.realmId,
        r.userId,
        r.deviceId,
        r.deviceName,
        r.deviceType,
        r.fingerprint,
        JSON.stringify(r.referenceFingerprint),
        r.ip,
        r.country,
        r.city,
        r.userAgent,
        r.amr,
        r.status,
        r.flagReason,
        r.flagScore,
        r.flaggedAt,
        r.createdAt,
        r.lastActiveAt,
        r.expiresAt,
        r.revokedAt,
        r.revokeReason,
        r.dpopJkt,
      ],
    );
  }

  async save(session: Session): Promise<boolean> {
    const { id, realmId, userId: _userId, createdAt: _createdAt, ...fields } = toSessionRecord(session);
    // A live copy is written only over a live row: a revocation committed since it was read stays.
    const criteria = fields.revokedAt ? { id, realmId } : { id, realmId, revokedAt: IsNull() };
    const flagged = session.status === 'flagged' && session.flag !== null;
    const write = async () => {
      const result = await this.tx.manager.getRepository(SessionRecord).update(criteria, fields);
      const saved = (result.affected ?? 0) > 0;
      // A session flagged as used from another device signs no app in: its apps' grants end as on a revocation.
      if (saved && flagged) await this.ends.sessionsEnded({ realmId, sessionIds: [id], at: session.flag!.flaggedAt });
      return saved;
    };
    return flagged ? this.tx.run(write) : write();
  }

  async setActiveOrganization(realmId: string, id: string, organizationId: string | null): Promise<boolean> {
    if (!isUuid(id)) return false;
    const rows = unwrapRows(
      await this.tx.manager.query(
        `UPDATE sessions SET active_organization_id = $3 WHERE realm_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING 1`,
        [realmId, id, organizationId],
      ),
    );
    return rows.length > 0;
  }

  async findById(realmId: string, id: string): Promise<Session | null> {
    if (!isUuid(id)) return null;
    const rows: SessionRecord[] = await this.tx.manager.query(
      `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.realm_id = $1 AND s.id = $2`,
      [realmId, id],
    );
    return rows[0] ? toSession(rows[0]) : null;
  }

  async isLive(realmId: string, id: string, now: Date, lifetime: SessionLifetime): Promise<boolean> {
    if (!isUuid(id)) return false;
    const rows: unknown[] = await this.tx.manager.query(
      `SELECT 1 FROM ${sessionById('$1')} s WHERE s.realm_id = $2 AND ${LIVE('$3', '$4', '$5')}`,
      [id, realmId, now, lifetime.idleTimeoutSeconds, lifetime.maxLifetimeSeconds],
    );
    return rows.length > 0;
  }

  async revoke(realmId: string, id: string, now: Date, reason: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    return this.tx.run(async () => {
      const rows = unwrapRows<{ id: string }>(
        await this.tx.manager.query(
          `UPDATE sessions SET revoked_at = $3, revoke_reason = $4 WHERE realm_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING id`,
          [realmId, id, now, reason],
        ),
      );
      if (rows.length === 0) return false;
      await this.ends.sessionsEnded({ realmId, sessionIds: [id], at: now });
      return true;
    });
  }

  async revokeAllForUser(realmId: string, userId: string, now: Date, reason: string, exceptSessionId?: string): Promise<number> {
    if (!isUuid(userId)) return 0;
    return this.tx.run(async () => {
      const rows = unwrapRows<{ id: string }>(
        await this.tx.manager.query(
          `UPDATE sessions SET revoked_at = $3, revoke_reason = $4
           WHERE realm_id = $1 AND user_id = $2 AND revoked_at IS NULL AND ($5::uuid IS NULL OR id <> $5::uuid)
           RETURNING id`,
          [realmId, userId, now, reason, exceptSessionId ?? null],
        ),
      );
      await this.ends.sessionsEnded({ realmId, sessionIds: rows.map((row) => row.id), allOfUser: userId, at: now });
      return rows.length;
    });
  }

  async list(query: SessionQuery): Promise<{ sessions: Session[]; total: number }> {
    const params: unknown[] = [query.realmId, query.now, query.lifetime.idleTimeoutSeconds, query.lifetime.maxLifetimeSeconds];
    const where = ['s.realm_id = $1', LIVE('$2', '$3', '$4')];
    if (query.userId !== undefined) {
      if (!isUuid(query.userId)) return { sessions: [], total: 0 };
      params.push(query.userId);
      where.push(`s.user_id = $${params.length}`);
    }
    if (query.status) {
      params.push(query.status);
      where.push(`s.status = $${params.length}`);
    }
    // The sessions of excluded users (a few accounts) are subtracted from a kept realm-wide count.
    let excludedLive = '';
    if (query.excludeUserIds?.length) {
      params.push(query.excludeUserIds);
      where.push(`s.user_id <> ALL($${params.length}::uuid[])`);
      excludedLive = ` - (SELECT count(*) FROM sessions s WHERE s.user_id = ANY($${params.length}::uuid[]) AND s.realm_id = $1 AND ${LIVE('$2', '$3', '$4')})`;
    }
    // Two statements rather than count(*) OVER (): the window reads every live session of the
    // realm before the page comes out. The page stops after `limit` entries of
    // sessions_realm_live_page_idx. A user's sessions are counted through their own index; the
    // whole realm's are its kept count of open sessions (migration 1764262000000) less the open
    // ones that ended by time since housekeeping last closed them (a few, through the partial
    // indexes of migration 1764263000000), instead of a count over every live session.
    const whereSql = where.join(' AND ');
    const counted = await this.tx.preparedText<{ total: string }>(
      query.userId === undefined && !query.status
        ? `SELECT (SELECT coalesce(sum(c.n), 0) FROM realm_session_counts c WHERE c.realm_id = $1) - ${ENDED_OPEN_COUNT}${excludedLive} AS total`
        : `SELECT count(*) AS total FROM sessions s WHERE ${whereSql}`,
      params,
    );
    const total = Number(counted[0].total);
    if (total === 0 || (query.page - 1) * query.limit >= total) return { sessions: [], total };
    params.push(query.limit, (query.page - 1) * query.limit);
    const rows = await this.tx.preparedText<SessionRecord>(
      `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE ${whereSql}
       ORDER BY s.created_at DESC, s.id DESC LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return { sessions: rows.map(toSession), total };
  }
}
