import { randomUUID } from 'node:crypto';
import { AuditEntry, AuditLog, AuditQuery } from '../../application/ports/audit-log';
import { Transaction } from '../../application/ports/transaction';
import { AuditEvent } from '../../domain/audit/audit-event';
import { WebhookDeliveryQueue } from '../../application/ports/webhook.repository';

/**
 * Writes, with every audit event, its deliveries to the realm's subscribed webhooks, atomically:
 * both go into the caller's batch or transaction, or into a batch of their own (one statement),
 * so an event is never stored without its deliveries nor a delivery without its event. Batchable
 * like the log it wraps; with no subscribed webhook it adds no write at all.
 */
export class WebhookNotifyingAuditLog implements AuditLog {
  constructor(
    private readonly inner: AuditLog,
    private readonly webhooks: WebhookDeliveryQueue,
    private readonly tx: Transaction,
  ) {}

  record(entry: AuditEntry): Promise<void> {
    const id = entry.id ?? randomUUID();
    return this.tx.batch(async () => {
      await this.inner.record({ ...entry, id });
      await this.webhooks.queueDeliveries({ id, realmId: entry.realmId, type: entry.type, at: entry.at });
    });
  }

  list(query: AuditQuery): Promise<{ events: AuditEvent[]; total: number }> {
    return this.inner.list(query);
  }
}
