import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { WebhookRepository } from '../ports/webhook.repository';

@Injectable()
export class DeleteWebhookUseCase {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Removes the webhook; its pending deliveries are dropped, nothing more is sent to it.
   * @throws DomainError WEBHOOK_NOT_FOUND
   */
  async execute(input: { actor: AdminActor; realmId: string; id: string }): Promise<void> {
    const now = this.clock.now();
    await this.tx.run(async () => {
      if (!(await this.webhooks.delete(input.realmId, input.id))) throw new DomainError('WEBHOOK_NOT_FOUND', 'Webhook not found');
      await this.audit.record({
        type: 'webhook.deleted',
        realmId: input.realmId,
        actorId: input.actor.id,
        ip: input.actor.ip,
        at: now,
        details: { webhookId: input.id },
      });
    });
  }
}
