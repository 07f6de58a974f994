import { Webhook, WebhookDelivery, WebhookDeliveryStatus } from '../../domain/webhook/webhook';

export interface DeliveryQuery {
  realmId: string;
  webhookId: string;
  status?: WebhookDeliveryStatus;
  page: number;
  limit: number;
}

/**
 * Where an audit event's deliveries to the realm's subscribed webhooks are queued, in the
 * caller's batch or transaction, so that an event is never stored without them.
 */
export abstract class WebhookDeliveryQueue {
  /** One delivery of the event to each enabled webhook of its realm subscribed to its type; nothing when none is. */
  abstract queueDeliveries(event: { id: string; realmId: string; type: string; at: Date }): Promise<void>;
}

/** Webhooks of a realm and their deliveries. Secrets are stored encrypted. */
export abstract class WebhookRepository {
  abstract findById(realmId: string, id: string): Promise<Webhook | null>;
  /**
   * Inside a transaction: the webhook, its row locked until the transaction ends, so that a
   * read-change-save neither writes over a change committed meanwhile (a rotated secret, a
   * disable) nor brings back a webhook deleted meanwhile.
   */
  abstract findByIdForUpdate(realmId: string, id: string): Promise<Webhook | null>;
  /** Oldest first. */
  abstract list(realmId: string): Promise<Webhook[]>;
  /** Inserts or updates. Every instance sees a change of subscriptions within a few seconds. */
  abstract save(webhook: Webhook): Promise<void>;
  /** Removes the webhook and its deliveries, pending ones included; false when there was none. */
  abstract delete(realmId: string, id: string): Promise<boolean>;
  /** Newest first. */
  abstract listDeliveries(query: DeliveryQuery): Promise<{ deliveries: WebhookDelivery[]; total: number }>;
  abstract findDelivery(realmId: string, webhookId: string, deliveryId: string): Promise<WebhookDelivery | null>;
  /** A failed delivery becomes pending, due at `now`; null when it is not failed (any more). */
  abstract requeueFailedDelivery(realmId: string, webhookId: string, deliveryId: string, now: Date): Promise<WebhookDelivery | null>;
}
