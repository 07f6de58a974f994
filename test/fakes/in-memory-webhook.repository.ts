import { DeliveryQuery, WebhookRepository } from '../../src/application/ports/webhook.repository';
import { Webhook, WebhookDelivery } from '../../src/domain/webhook/webhook';

export class InMemoryWebhookRepository extends WebhookRepository {
  private readonly rows = new Map<string, Webhook>();
  private readonly deliveries = new Map<string, WebhookDelivery & { realmId: string }>();

  constructor(webhooks: Webhook[] = []) {
    super();
    for (const webhook of webhooks) this.rows.set(webhook.id, copy(webhook));
  }

  async findById(realmId: string, id: string): Promise<Webhook | null> {
    const found = this.rows.get(id);
    return found && found.realmId === realmId ? copy(found) : null;
  }

  /** No concurrency here: the row lock is the database's business. */
  async findByIdForUpdate(realmId: string, id: string): Promise<Webhook | null> {
    return this.findById(realmId, id);
  }

  async list(realmId: string): Promise<Webhook[]> {
    return [...this.rows.values()]
      .filter((w) => w.realmId === realmId)
      .sort((a, b) => createdAt(a) - createdAt(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map(copy);
  }

  async save(webhook: Webhook): Promise<void> {
    this.rows.set(webhook.id, copy(webhook));
  }

  async delete(realmId: string, id: string): Promise<boolean> {
    const found = this.rows.get(id);
    if (!found || found.realmId !== realmId) return false;
    this.rows.delete(id);
    for (const [deliveryId, delivery] of this.deliveries) if (delivery.webhookId === id) this.deliveries.delete(deliveryId);
    return true;
  }

  async listDeliveries(query: DeliveryQuery): Promise<{ deliveries: WebhookDelivery[]; total: number }> {
    const webhook = this.rows.get(query.webhookId);
    if (!webhook || webhook.realmId !== query.realmId) return { deliveries: [], total: 0 };
    const matching = [...this.deliveries.values()]
      .filter((d) => d.webhookId === query.webhookId && (!query.status || d.status === query.status))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const start = (query.page - 1) * query.limit;
    return { deliveries: matching.slice(start, start + query.limit).map(withoutRealm), total: matching.length };
  }

  async findDelivery(realmId: string, webhookId: string, deliveryId: string): Promise<WebhookDelivery | null> {
    const found = this.deliveries.get(deliveryId);
    return found && found.realmId === realmId && found.webhookId === webhookId ? withoutRealm(found) : null;
  }

  async requeueFailedDelivery(realmId: string, webhookId: string, deliveryId: string, now: Date): Promise<WebhookDelivery | null> {
    const found = this.deliveries.get(deliveryId);
    if (!found || found.realmId !== realmId || found.webhookId !== webhookId || found.status !== 'failed') return null;
    const requeued = { ...found, status: 'pending' as const, nextAttemptAt: now };
    this.deliveries.set(deliveryId, requeued);
    return withoutRealm(requeued);
  }

  /** A delivery as the dispatcher leaves it (the database adapter queues them from audit events). */
  addDelivery(realmId: string, delivery: WebhookDelivery): void {
    this.deliveries.set(delivery.id, { ...delivery, realmId });
  }
}

function copy(webhook: Webhook): Webhook {
  return Webhook.restore(webhook.snapshot());
}

function createdAt(webhook: Webhook): number {
  return webhook.snapshot().createdAt.getTime();
}

function withoutRealm({ realmId: _realmId, ...delivery }: WebhookDelivery & { realmId: string }): WebhookDelivery {
  return { ...delivery, nextAttemptAt: delivery.status === 'pending' ? delivery.nextAttemptAt : null };
}
