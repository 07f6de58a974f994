import { Injectable } from '@nestjs/common';
import { Webhook } from '../../domain/webhook/webhook';
import { WebhookRepository } from '../ports/webhook.repository';

@Injectable()
export class ListWebhooksUseCase {
  constructor(private readonly webhooks: WebhookRepository) {}

  /** The realm's webhooks, oldest first. */
  execute(input: { realmId: string }): Promise<Webhook[]> {
    return this.webhooks.list(input.realmId);
  }
}
