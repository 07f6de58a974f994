import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Webhook, WebhookChanges } from '../../domain/webhook/webhook';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { WebhookRepository } from '../ports/webhook.repository';
import { WebhookTargetPolicy } from '../ports/webhook-target-policy';
import { acceptableDescription, acceptableEvents, acceptableUrl, findWebhook, lockWebhook } from './webhook-admin';

export interface UpdateWebhookInput {
  actor: AdminActor;
  realmId: string;
  id: string;
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
}

@Injectable()
export class UpdateWebhookUseCase {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly policy: WebhookTargetPolicy,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * Changes the given fields; a new URL passes the same checks as at creation. Disabling stops
   * new deliveries and holds the pending ones until it is enabled again. Audited when something changed.
   * @throws DomainError WEBHOOK_NOT_FOUND | VALIDATION_FAILED
   */
  async execute(input: UpdateWebhookInput): Promise<Webhook> {
    const changes: WebhookChanges = {};
    if (input.events !== undefined) changes.events = acceptableEvents(input.events);
    if (input.description !== undefined) changes.description = acceptableDescription(input.description);
    if (input.enabled !== undefined) changes.enabled = input.enabled;
    await findWebhook(this.webhooks, input.realmId, input.id);
    if (input.url !== undefined) changes.url = await acceptableUrl(this.policy, this.config, input.url);
    return this.tx.run(async () => {
      const webhook = await lockWebhook(this.webhooks, input.realmId, input.id);
      const now = this.clock.now();
      const changed = webhook.update(changes, now);
      if (changed.length === 0) return webhook;
      await this.webhooks.save(webhook);
      await this.audit.record({
        type: 'webhook.updated',
        realmId: input.realmId,
        actorId: input.actor.id,
        ip: input.actor.ip,
        at: now,
        details: { webhookId: webhook.id, changed },
      });
      return webhook;
    });
  }
}
