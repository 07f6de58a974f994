import { Global, Module } from '@nestjs/common';
import { AuditLog } from '../application/ports/audit-log';
import { READINESS_PROBES } from '../application/ports/readiness-probe';
import { Transaction } from '../application/ports/transaction';
import { WebhookDeliveryQueue } from '../application/ports/webhook.repository';
import { LoggedAuditLog } from '../adapters/audit/logged-audit-log';
import { HealthController } from '../adapters/http/controllers/health.controller';
import { MetricsController } from '../adapters/http/controllers/metrics.controller';
import { LoggingModule } from '../adapters/http/logging/logging.module';
import { OutboxReadinessProbe } from '../adapters/mail/outbox-readiness-probe';
import { MeteredAuditLog } from '../adapters/metrics/metered-audit-log';
import { PrometheusMetrics } from '../adapters/metrics/prometheus-metrics';
import { TypeOrmAuditLog } from '../adapters/persistence/typeorm-audit-log';
import { TypeOrmReadinessProbe } from '../adapters/persistence/typeorm-readiness-probe';
import { RateLimitStorageProbe } from '../adapters/rate-limit/rate-limit-storage.probe';
import { WebhookNotifyingAuditLog } from '../adapters/webhooks/webhook-notifying-audit-log';
import { WebhookReadinessProbe } from '../adapters/webhooks/webhook-readiness-probe';
import { MailModule } from './mail.module';
import { RateLimitModule } from './rate-limit.module';
import { WebhooksModule } from './webhooks.module';

/** Logs, metrics, the audit trail (stored, counted and logged) and the health endpoints. */
@Global()
@Module({
  imports: [LoggingModule, MailModule, RateLimitModule, WebhooksModule],
  controllers: [HealthController, MetricsController],
  providers: [
    PrometheusMetrics,
    {
      provide: AuditLog,
      inject: [TypeOrmAuditLog, WebhookDeliveryQueue, PrometheusMetrics, Transaction],
      // Each event is stored with its webhook deliveries (WebhooksModule), then counted and logged.
      useFactory: (log: TypeOrmAuditLog, webhooks: WebhookDeliveryQueue, metrics: PrometheusMetrics, tx: Transaction) =>
        new LoggedAuditLog(new MeteredAuditLog(new WebhookNotifyingAuditLog(log, webhooks, tx), metrics, tx), tx),
    },
    {
      provide: READINESS_PROBES,
      inject: [TypeOrmReadinessProbe, OutboxReadinessProbe, WebhookReadinessProbe, RateLimitStorageProbe],
      useFactory: (...probes: unknown[]) => probes,
    },
  ],
  exports: [LoggingModule, PrometheusMetrics, AuditLog],
})
export class ObservabilityModule {}
