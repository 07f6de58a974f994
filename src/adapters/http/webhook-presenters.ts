import { Webhook, WebhookDelivery } from '../../domain/webhook/webhook';

/** HTTP shapes of webhooks and deliveries, whitelisted field by field; the secret only when asked. */
export const presentWebhooks = {
  webhook(webhook: Webhook, options: { withSecret: boolean } = { withSecret: false }) {
    const s = webhook.snapshot();
    return {
      id: s.id,
      url: s.url,
      events: s.events,
      description: s.description,
      enabled: s.enabled,
      createdAt: s.createdAt.toISOString(),
      ...(options.withSecret ? { secret: s.secret } : {}),
    };
  },

  delivery(delivery: WebhookDelivery) {
    return {
      id: delivery.id,
      eventId: delivery.eventId,
      type: delivery.type,
      status: delivery.status,
      attempts: delivery.attempts,
      lastStatusCode: delivery.lastStatusCode,
      lastError: delivery.lastError,
      lastAttemptAt: delivery.lastAttemptAt ? delivery.lastAttemptAt.toISOString() : null,
      nextAttemptAt: delivery.nextAttemptAt ? delivery.nextAttemptAt.toISOString() : null,
      createdAt: delivery.createdAt.toISOString(),
    };
  },
};
