import { Injectable } from '@nestjs/common';
import { WebhookDelivery, WebhookDeliveryStatus } from '../../domain/webhook/webhook';
import { WebhookRepository } from '../ports/webhook.repository';
import { findWebhook } from './webhook-admin';

@Injectable()
export class ListWebhookDeliveriesUseCase {
  constructor(private readonly webhooks: WebhookRepository) {}

  /**
   * A webhook's deliveries, newest first.
   * @throws DomainError WEBHOOK_NOT_FOUND
   */
  async execute(input: {
    realmId: string;
    webhookId: string;
    status?: WebhookDeliveryStatus;
    page: number;
    limit: number;
  }): Promise<{ deliveries: WebhookDelivery[]; total: number }> {
    await findWebhook(this.webhooks, input.realmId, input.webhookId);
    return this.webhooks.listDeliveries(input);
  }
}
