import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { WebhookDelivery } from '../../domain/webhook/webhook';
import { Clock } from '../ports/clock';
import { WebhookRepository } from '../ports/webhook.repository';
import { findWebhook } from './webhook-admin';

@Injectable()
export class RetryWebhookDeliveryUseCase {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * Queues a failed delivery again, due now, with the same id: one more attempt.
   * @throws DomainError WEBHOOK_NOT_FOUND | NOT_FOUND (no such delivery) | VALIDATION_FAILED (not failed)
   */
  async execute(input: { realmId: string; webhookId: string; deliveryId: string }): Promise<WebhookDelivery> {
    await findWebhook(this.webhooks, input.realmId, input.webhookId);
    const requeued = await this.webhooks.requeueFailedDelivery(input.realmId, input.webhookId, input.deliveryId, this.clock.now());
    if (requeued) return requeued;
    const delivery = await this.webhooks.findDelivery(input.realmId, input.webhookId, input.deliveryId);
    if (!delivery) throw new DomainError('NOT_FOUND', 'Delivery not found');
    throw DomainError.validation('deliveryId', `is ${delivery.status}; only a failed delivery can be retried`);
  }
}
