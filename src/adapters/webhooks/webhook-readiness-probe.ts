import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadinessCheck, ReadinessProbe } from '../../application/ports/readiness-probe';

/**
 * Webhook deliveries on /health/ready, as the email outbox reports itself: how many wait and how
 * many were given up on. Never critical (a receiver's outage must not take the instance out of
 * rotation), but `webhooks.failed` reads not-ok while failed deliveries exist.
 */
@Injectable()
export class WebhookReadinessProbe implements ReadinessProbe {
  constructor(private readonly dataSource: DataSource) {}

  async check(): Promise<ReadinessCheck[]> {
    try {
      const [row]: { pending: string | number; failed: string | number }[] = await this.dataSource.query(
        `SELECT (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending') AS pending,
                (SELECT count(*) FROM webhook_deliveries WHERE status = 'failed') AS failed`,
      );
      const failed = Number(row.failed);
      return [
        { name: 'webhooks.pending', ok: true, detail: Number(row.pending), critical: false },
        { name: 'webhooks.failed', ok: failed === 0, detail: failed, critical: false },
      ];
    } catch {
      return [{ name: 'webhooks', ok: false, detail: 'unavailable', critical: false }];
    }
  }
}
