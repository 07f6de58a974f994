import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AuditEntry, AuditLog, AuditQuery } from '../../application/ports/audit-log';
import { AuditEvent, AuditEventType } from '../../domain/audit/audit-event';
import { AuditEventRecord } from './records/audit-event.record';
import { TypeOrmTransaction } from './typeorm-transaction';
import { isUuid } from './typeorm-user.repository';

@Injectable()
export class TypeOrmAuditLog implements AuditLog {
  constructor(private readonly tx: TypeOrmTransaction) {}

  /** Batchable (`TypeOrmTransaction.write`). */
  async record(entry: AuditEntry): Promise<void> {
    await this.tx.write(
      `INSERT INTO audit_events (id, realm_id, type, user_id, actor_id, session_id, ip, at, details)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)`,
      [
        entry.id ?? randomUUID(),
        entry.realmId,
        entry.type,
        entry.userId ?? null,
        entry.actorId ?? null,
        entry.sessionId ?? null,
        entry.ip ?? null,
        entry.at,
        JSON.stringify(entry.details ?? {}),
      ],
    );
  }

  async list(query: AuditQuery): Promise<{ events: AuditEvent[]; total: number }> {
    const params: unknown[] = [query.realmId];
    const where = ['realm_id = $1'];
    if (query.type) {
      params.push(query.type);
      where.push(`type = $${params.length}`);
    }
    if (query.userId !== undefined) {
      if (!isUuid(query.userId)) return { events: [], total: 0 };
      params.push(query.userId);
      where.push(`user_id = $${params.length}`);
    }
    if (query.since) {
      params.push(query.since);
      where.push(`at >= $${params.length}`);
    }
    // Narrowed to a user or a time, the count reads an index range of those events; by realm (and
    // type) alone it would read every event of the realm, so it sums the kept counts instead
    // (written by triggers with the events, migration 1764262000000).
    const counted: { total: string }[] = await this.tx.manager.query(
      query.userId === undefined && !query.since
        ? `SELECT coalesce(sum(n), 0) AS total FROM audit_event_counts WHERE ${where.join(' AND ')}`
        : `SELECT count(*) AS total FROM audit_events WHERE ${where.join(' AND ')}`,
      params,
    );
    params.push(query.limit, (query.page - 1) * query.limit);
    const rows: AuditEventRecord[] = await this.tx.manager.query(
      `SELECT id, realm_id AS "realmId", type, user_id AS "userId", actor_id AS "actorId", session_id AS "sessionId",
              ip, at, details
       FROM audit_events WHERE ${where.join(' AND ')} ORDER BY at DESC, id DESC
       LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return {
      total: Number(counted[0].total),
      events: rows.map((r) => ({
        ...r,
        type: r.type as AuditEventType,
        at: new Date(r.at),
        details: (r.details ?? {}) as Record<string, unknown>,
      })),
    };
  }
}
