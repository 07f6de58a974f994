import { AuditEntry, AuditLog, AuditQuery } from '../../application/ports/audit-log';
import { AuditEvent } from '../../domain/audit/audit-event';
import { PrometheusMetrics } from './prometheus-metrics';

/**
 * Counts security events for /metrics as they are written (logins by outcome, refresh-token
 * reuse, flagged sessions), so the use cases stay free of metrics code.
 */
export class MeteredAuditLog implements AuditLog {
  constructor(
    private readonly inner: AuditLog,
    private readonly metrics: PrometheusMetrics,
  ) {}

  async record(entry: AuditEntry): Promise<void> {
    await this.inner.record(entry);
    this.metrics.observeAuditEvent(entry.type, entry.details);
  }

  list(query: AuditQuery): Promise<{ events: AuditEvent[]; total: number }> {
    return this.inner.list(query);
  }
}
