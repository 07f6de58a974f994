import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadinessCheck, ReadinessProbe } from '../../application/ports/readiness-probe';

/**
 * The outbox on /health/ready: how many messages wait and how many were given up on. Never
 * critical — a mail outage must not take the instance out of rotation — but `outbox.failed`
 * reads not-ok while failed messages exist, so monitoring sees them.
 */
@Injectable()
export class OutboxReadinessProbe implements ReadinessProbe {
  constructor(private readonly dataSource: DataSource) {}

  async check(): Promise<ReadinessCheck[]> {
    try {
      const [row]: { pending: string | number; failed: string | number }[] = await this.dataSource.query(
        `SELECT (SELECT count(*) FROM email_outbox WHERE status = 'pending') AS pending,
                (SELECT count(*) FROM email_outbox WHERE status = 'failed') AS failed`,
      );
      const failed = Number(row.failed);
      return [
        { name: 'outbox.pending', ok: true, detail: Number(row.pending), critical: false },
        { name: 'outbox.failed', ok: failed === 0, detail: failed, critical: false },
      ];
    } catch {
      return [{ name: 'outbox', ok: false, detail: 'unavailable', critical: false }];
    }
  }
}
