import { AuditEntry, AuditLog, AuditQuery } from '../../application/ports/audit-log';
import { Transaction } from '../../application/ports/transaction';
import { AuditEvent } from '../../domain/audit/audit-event';
import { PrometheusMetrics } from './prometheus-metrics';

/**
 * Counts security events for /metrics as they are written (logins by outcome, refresh-token
 * reuse, flagged sessions) once they are stored, so the use cases stay free of metrics code.
 */
export class MeteredAuditLog implements AuditLog {
  constructor(
    private readonly inner: AuditLog,
    private readonly metrics: PrometheusMetrics,
    private readonly tx: Transaction,
  ) {}

  async record(entry: AuditEntry): Promise<void> {
    await this.inner.record(entry);
    // Counted once stored: a batched write is only queued here, a transaction may still roll back.
    this.tx.afterCommit(() => this.metrics.observeAuditEvent(entry.type, entry.details));
  }

  list(query: AuditQuery): Promise<{ events: AuditEvent[]; total: number }> {
    return this.inner.list(query);
  }
}
