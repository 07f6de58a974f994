import { Injectable } from '@nestjs/common';
import { Webhook } from '../../domain/webhook/webhook';
import { WebhookRepository } from '../ports/webhook.repository';
import { findWebhook } from './webhook-admin';

@Injectable()
export class GetWebhookUseCase {
  constructor(private readonly webhooks: WebhookRepository) {}

  /** @throws DomainError WEBHOOK_NOT_FOUND */
  execute(input: { realmId: string; id: string }): Promise<Webhook> {
    return findWebhook(this.webhooks, input.realmId, input.id);
  }
}
