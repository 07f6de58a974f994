import { Module } from '@nestjs/common';
import { WebhookDeliveryQueue, WebhookRepository } from '../application/ports/webhook.repository';
import { WebhookTargetPolicy } from '../application/ports/webhook-target-policy';
import { CreateWebhookUseCase } from '../application/webhooks/create-webhook.use-case';
import { DeleteWebhookUseCase } from '../application/webhooks/delete-webhook.use-case';
import { GetWebhookUseCase } from '../application/webhooks/get-webhook.use-case';
import { ListWebhookDeliveriesUseCase } from '../application/webhooks/list-webhook-deliveries.use-case';
import { ListWebhooksUseCase } from '../application/webhooks/list-webhooks.use-case';
import { RetryWebhookDeliveryUseCase } from '../application/webhooks/retry-webhook-delivery.use-case';
import { RotateWebhookSecretUseCase } from '../application/webhooks/rotate-webhook-secret.use-case';
import { UpdateWebhookUseCase } from '../application/webhooks/update-webhook.use-case';
import { AdminWebhooksController } from '../adapters/http/controllers/admin-webhooks.controller';
import { TypeOrmWebhookRepository } from '../adapters/persistence/typeorm-webhook.repository';
import { PublicWebhookTargetPolicy } from '../adapters/webhooks/public-webhook-target-policy';
import { WebhookDispatcher } from '../adapters/webhooks/webhook-dispatcher';
import { WebhookReadinessProbe } from '../adapters/webhooks/webhook-readiness-probe';

/**
 * Webhooks: the admin routes, the queue of deliveries written with each audit event (the audit
 * log's decorator in ObservabilityModule takes it from here through its port), the dispatcher
 * that signs and sends them, and their SSRF rule (on the outbound connector), which the other calls
 * out to addresses administrators choose follow too (clients' back-channel logout and JWKS URIs).
 */
@Module({
  controllers: [AdminWebhooksController],
  providers: [
    TypeOrmWebhookRepository,
    { provide: WebhookRepository, useExisting: TypeOrmWebhookRepository },
    { provide: WebhookDeliveryQueue, useExisting: TypeOrmWebhookRepository },
    { provide: WebhookTargetPolicy, useClass: PublicWebhookTargetPolicy },
    WebhookDispatcher,
    WebhookReadinessProbe,
    CreateWebhookUseCase,
    ListWebhooksUseCase,
    GetWebhookUseCase,
    UpdateWebhookUseCase,
    DeleteWebhookUseCase,
    RotateWebhookSecretUseCase,
    ListWebhookDeliveriesUseCase,
    RetryWebhookDeliveryUseCase,
  ],
  exports: [WebhookDeliveryQueue, WebhookReadinessProbe, WebhookTargetPolicy],
})
export class WebhooksModule {}
