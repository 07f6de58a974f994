import { AuditEvent, AuditEventType } from '../../domain/audit/audit-event';

export interface AuditEntry {
  /** The event's id; chosen by the log when absent. */
  id?: string;
  type: AuditEventType;
  realmId: string;
  userId?: string | null;
  actorId?: string | null;
  sessionId?: string | null;
  ip?: string | null;
  at: Date;
  details?: Record<string, unknown>;
}

export interface AuditQuery {
  realmId: string;
  type?: string;
  userId?: string;
  since?: Date;
  page: number;
  limit: number;
}

/** Security and administration events. */
export abstract class AuditLog {
  /** Appends an event; inside a transaction it commits or rolls back with it. Batchable (`Transaction.batch`). */
  abstract record(entry: AuditEntry): Promise<void>;
  /** Newest first. */
  abstract list(query: AuditQuery): Promise<{ events: AuditEvent[]; total: number }>;
}
