import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Webhook, webhookSecretFrom } from '../../domain/webhook/webhook';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SecureTokens } from '../ports/secure-tokens';
import { Transaction } from '../ports/transaction';
import { WebhookRepository } from '../ports/webhook.repository';
import { lockWebhook } from './webhook-admin';

@Injectable()
export class RotateWebhookSecretUseCase {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly tokens: SecureTokens,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * Gives the webhook a new secret (returned on it, shown this once). For
   * WEBHOOK_SECRET_OVERLAP_SECONDS the previous one signs too, so receivers can switch over.
   * @throws DomainError WEBHOOK_NOT_FOUND
   */
  async execute(input: { actor: AdminActor; realmId: string; id: string }): Promise<Webhook> {
    return this.tx.run(async () => {
      const webhook = await lockWebhook(this.webhooks, input.realmId, input.id);
      const now = this.clock.now();
      webhook.rotate(webhookSecretFrom(this.tokens.generate()), now, this.config.webhookSecretOverlapSeconds);
      await this.webhooks.save(webhook);
      await this.audit.record({
        type: 'webhook.secret_rotated',
        realmId: input.realmId,
        actorId: input.actor.id,
        ip: input.actor.ip,
        at: now,
        details: { webhookId: webhook.id, previousSecretValidSeconds: this.config.webhookSecretOverlapSeconds },
      });
      return webhook;
    });
  }
}
