import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Webhook, webhookSecretFrom } from '../../domain/webhook/webhook';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SecureTokens } from '../ports/secure-tokens';
import { Transaction } from '../ports/transaction';
import { WebhookRepository } from '../ports/webhook.repository';
import { WebhookTargetPolicy } from '../ports/webhook-target-policy';
import { acceptableDescription, acceptableEvents, acceptableUrl } from './webhook-admin';

export interface CreateWebhookInput {
  actor: AdminActor;
  realmId: string;
  url: string;
  events: string[];
  description?: string | null;
}

@Injectable()
export class CreateWebhookUseCase {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly policy: WebhookTargetPolicy,
    private readonly tokens: SecureTokens,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * Subscribes a URL to the realm's events with a new secret (returned on the webhook, shown
   * this once). The URL must resolve to public addresses only.
   * @throws DomainError VALIDATION_FAILED
   */
  async execute(input: CreateWebhookInput): Promise<Webhook> {
    const events = acceptableEvents(input.events);
    const description = acceptableDescription(input.description);
    const url = await acceptableUrl(this.policy, this.config, input.url);
    const now = this.clock.now();
    const webhook = Webhook.create({
      id: crypto.randomUUID(),
      realmId: input.realmId,
      url,
      events,
      description,
      secret: webhookSecretFrom(this.tokens.generate()),
      createdAt: now,
    });
    await this.tx.run(async () => {
      await this.webhooks.save(webhook);
      await this.audit.record({
        type: 'webhook.created',
        realmId: input.realmId,
        actorId: input.actor.id,
        ip: input.actor.ip,
        at: now,
        details: { webhookId: webhook.id, host: new URL(url).host, events },
      });
    });
    return webhook;
  }
}
