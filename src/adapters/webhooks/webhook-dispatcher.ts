import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuditLog } from '../../application/ports/audit-log';
import { Clock } from '../../application/ports/clock';
import { ResolvedAddress } from '../../application/ports/host-resolver';
import { Transaction } from '../../application/ports/transaction';
import { WebhookTargetPolicy } from '../../application/ports/webhook-target-policy';
import { AppConfig } from '../../config/app-config';
import { AuditEvent, AuditEventType, auditEventView } from '../../domain/audit/audit-event';
import { DomainError } from '../../domain/errors';
import { OutboxPump } from '../lifecycle/outbox-pump';
import { PrometheusMetrics } from '../metrics/prometheus-metrics';
import { Lease, LeasedOutbox } from '../persistence/leased-outbox';
import { WebhookRepository } from '../../application/ports/webhook.repository';
import { postWebhook, webhookSignature } from './webhook-sender';

/** Deliveries one instance sends in parallel (to different receivers). */
const DISPATCH_CONCURRENCY = 4;
const DELIVERIES_PER_WORKER_PER_PASS = 50;
const LAST_ERROR_MAX_LENGTH = 500;

export type WebhookOutcome = 'delivered' | 'retrying' | 'failed';
export type WebhookDispatchReport = Record<WebhookOutcome, number>;

interface ClaimedRow extends Record<string, unknown> {
  webhook_id: string;
  realm_id: string;
  event_id: string;
}

type ClaimedDelivery = ClaimedRow & Lease;

/** Keys of event details that are never sent, whatever an event records. */
const SECRET_KEY = /secret|password|token|fingerprint|hash/i;

function scrub(details: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(details).filter(([key]) => !SECRET_KEY.test(key)));
}

/**
 * Sends webhook deliveries with the outbox machinery the email uses (`LeasedOutbox`,
 * `OutboxPump`): each delivery is claimed with a lease, so a crash or a second instance neither
 * loses nor doubles an attempt; a failed attempt is retried on WEBHOOK_RETRY_SCHEDULE and the
 * delivery ends `failed` after the last one. Each attempt checks the URL's addresses again and
 * connects to the address it checked. A 2xx answer delivers; 410 Gone disables the webhook;
 * redirects are failures, never followed. Deliveries of a disabled webhook wait, unclaimed.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  private readonly outbox: LeasedOutbox<ClaimedRow>;
  private readonly pump: OutboxPump<WebhookOutcome>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly webhooks: WebhookRepository,
    private readonly policy: WebhookTargetPolicy,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly metrics: PrometheusMetrics,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {
    this.outbox = new LeasedOutbox<ClaimedRow>(dataSource, clock, {
      table: 'webhook_deliveries',
      columns: ['o.webhook_id', 'o.realm_id', 'o.event_id'],
      // Longer than any attempt can take, so a lease never runs out under a live attempt.
      leaseSeconds: () => Math.max(config.outboxLeaseSeconds, Math.ceil((config.webhookTimeoutMs * 2) / 1000)),
      dueFilter: 'EXISTS (SELECT 1 FROM webhooks w WHERE w.id = o.webhook_id AND w.enabled)',
    });
    this.pump = new OutboxPump<WebhookOutcome>({
      name: 'Webhooks',
      pollIntervalMs: config.outboxPollIntervalMs,
      concurrency: DISPATCH_CONCURRENCY,
      perWorkerPerPass: DELIVERIES_PER_WORKER_PER_PASS,
      outcomes: ['delivered', 'retrying', 'failed'],
      next: async () => {
        const delivery = await this.outbox.claim();
        return delivery ? this.attempt(delivery) : null;
      },
    });
  }

  onApplicationBootstrap(): void {
    this.pump.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.pump.drain();
  }

  /** Attempts every delivery due now and counts the outcomes. */
  dispatchDue(): Promise<WebhookDispatchReport> {
    return this.pump.dispatchDue();
  }

  drain(timeoutMs?: number): Promise<void> {
    return this.pump.drain(timeoutMs);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<WebhookOutcome> {
    const startedAt = this.clock.now();
    const webhook = await this.webhooks.findById(delivery.realm_id, delivery.webhook_id);
    const event = await this.event(delivery.event_id);
    if (!webhook || !event) {
      return this.fail(delivery, startedAt, null, !webhook ? 'the webhook no longer exists' : 'the event is no longer stored');
    }
    let target: ResolvedAddress;
    try {
      target = await this.policy.check(webhook.url);
    } catch (error) {
      const reason = error instanceof DomainError ? `refused: ${error.meta.details?.[0]?.message ?? error.message}` : String(error);
      return this.retryOrFail(delivery, startedAt, null, reason);
    }
    const body = JSON.stringify({
      type: event.type,
      timestamp: event.at.toISOString(),
      data: { ...auditEventView(event), details: scrub(event.details) },
    });
    // Receivers compare the signed timestamp with their own clock: the wall clock, always.
    const timestamp = Math.floor(Date.now() / 1000);
    const started = performance.now();
    let status: number;
    try {
      status = await postWebhook({
        url: webhook.url,
        target,
        body,
        timeoutMs: this.config.webhookTimeoutMs,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'identity-service-webhooks',
          'webhook-id': delivery.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': webhookSignature(webhook.signingSecrets(startedAt), delivery.id, timestamp, body),
        },
      });
    } catch (error) {
      this.metrics.observeWebhookAttempt('error', (performance.now() - started) / 1000);
      return this.retryOrFail(delivery, startedAt, null, error instanceof Error ? error.message : String(error));
    }
    this.metrics.observeWebhookAttempt(String(status), (performance.now() - started) / 1000);
    if (status >= 200 && status < 300) {
      await this.outbox.settle(
        delivery,
        `status = 'delivered', delivered_at = $3, last_attempt_at = $3, last_status_code = $4, last_error = NULL`,
        [this.clock.now(), status],
      );
      this.metrics.observeWebhookDelivery('delivered');
      return 'delivered';
    }
    if (status === 410) {
      await this.disable(delivery, startedAt);
      return this.fail(delivery, startedAt, status, 'the receiver answered 410 Gone; the webhook is disabled');
    }
    const reason = status >= 300 && status < 400 ? `redirect (${status}) not followed` : `answered ${status}`;
    return this.retryOrFail(delivery, startedAt, status, reason);
  }

  private async retryOrFail(delivery: ClaimedDelivery, at: Date, status: number | null, reason: string): Promise<WebhookOutcome> {
    const schedule = this.config.webhookRetryScheduleSeconds;
    if (delivery.attempts > schedule.length) return this.fail(delivery, at, status, reason);
    const retryAt = new Date(this.clock.now().getTime() + schedule[delivery.attempts - 1] * 1000);
    await this.outbox.settle(delivery, `next_attempt_at = $3, last_attempt_at = $4, last_status_code = $5, last_error = $6`, [
      retryAt,
      at,
      status,
      reason.slice(0, LAST_ERROR_MAX_LENGTH),
    ]);
    this.logger.warn(`Webhook delivery ${delivery.id} attempt ${delivery.attempts} failed (${reason}); retry at ${retryAt.toISOString()}`);
    this.metrics.observeWebhookDelivery('retrying');
    return 'retrying';
  }

  private async fail(delivery: ClaimedDelivery, at: Date, status: number | null, reason: string): Promise<WebhookOutcome> {
    await this.outbox.settle(delivery, `status = 'failed', last_attempt_at = $3, last_status_code = $4, last_error = $5`, [
      at,
      status,
      reason.slice(0, LAST_ERROR_MAX_LENGTH),
    ]);
    this.logger.error(`Webhook delivery ${delivery.id} failed after ${delivery.attempts} attempt(s): ${reason}`);
    this.metrics.observeWebhookDelivery('failed');
    return 'failed';
  }

  /** 410 Gone: the webhook is disabled (audited as an update without an actor). */
  private async disable(delivery: ClaimedDelivery, now: Date): Promise<void> {
    await this.tx.run(async () => {
      const webhook = await this.webhooks.findByIdForUpdate(delivery.realm_id, delivery.webhook_id);
      if (!webhook || !webhook.enabled) return;
      webhook.disable(now);
      await this.webhooks.save(webhook);
      await this.audit.record({
        type: 'webhook.updated',
        realmId: delivery.realm_id,
        at: now,
        details: { webhookId: webhook.id, changed: ['enabled'], reason: 'gone' },
      });
    });
  }

  private async event(id: string): Promise<AuditEvent | null> {
    const rows: {
      id: string;
      realmId: string;
      type: string;
      userId: string | null;
      actorId: string | null;
      sessionId: string | null;
      ip: string | null;
      at: Date;
      details: Record<string, unknown> | null;
    }[] = await this.dataSource.query(
      `SELECT id, realm_id AS "realmId", type, user_id AS "userId", actor_id AS "actorId", session_id AS "sessionId", ip, at, details
         FROM audit_events WHERE id = $1`,
      [id],
    );
    const row = rows[0];
    if (!row) return null;
    return { ...row, type: row.type as AuditEventType, at: new Date(row.at), details: row.details ?? {} };
  }
}
