import { randomUUID } from 'node:crypto';
import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '../../application/ports/clock';
import { ResolvedAddress } from '../../application/ports/host-resolver';
import { WebhookTargetPolicy } from '../../application/ports/webhook-target-policy';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { OutboxPump } from '../lifecycle/outbox-pump';
import { Lease, LeasedOutbox } from '../persistence/leased-outbox';
import { postWebhook } from '../webhooks/webhook-sender';
import { RealmProviders } from './realm-providers';

const DISPATCH_CONCURRENCY = 4;
const PER_WORKER_PER_PASS = 50;
const LAST_ERROR_MAX_LENGTH = 500;
/** The event a logout token carries (OpenID Back-Channel Logout 1.0 §2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

export type BackchannelOutcome = 'delivered' | 'retrying' | 'failed';

interface ClaimedRow extends Record<string, unknown> {
  realm_id: string;
  client_id: string;
  sub: string;
  sid: string;
}

/**
 * Sends the back-channel logout tokens queued when sessions end (`op_backchannel_logouts`, written
 * by the session-end listener in the session's own transaction): each row claimed with a lease
 * (`LeasedOutbox`, `OutboxPump`, as webhooks), its logout token signed by the realm's provider
 * (the library's ID token model, `typ: logout+jwt`, `aud` the client, `sub`, `sid`, `events`) at
 * the attempt, and POSTed as a form to the client's `backchannel_logout_uri` under the webhooks'
 * address rule, connecting to the address checked, redirects not followed. A failed attempt is
 * retried on WEBHOOK_RETRY_SCHEDULE.
 */
@Injectable()
export class BackchannelLogoutDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('BackchannelLogout');
  private readonly outbox: LeasedOutbox<ClaimedRow>;
  private readonly pump: OutboxPump<BackchannelOutcome>;

  constructor(
    dataSource: DataSource,
    private readonly providers: RealmProviders,
    private readonly policy: WebhookTargetPolicy,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {
    this.outbox = new LeasedOutbox<ClaimedRow>(dataSource, clock, {
      table: 'op_backchannel_logouts',
      columns: ['o.realm_id', 'o.client_id', 'o.sub', 'o.sid'],
      leaseSeconds: () => Math.max(config.outboxLeaseSeconds, Math.ceil((config.webhookTimeoutMs * 2) / 1000)),
    });
    this.pump = new OutboxPump<BackchannelOutcome>({
      name: 'BackchannelLogout',
      pollIntervalMs: config.outboxPollIntervalMs,
      concurrency: DISPATCH_CONCURRENCY,
      perWorkerPerPass: PER_WORKER_PER_PASS,
      outcomes: ['delivered', 'retrying', 'failed'],
      next: async () => {
        const row = await this.outbox.claim();
        return row ? this.attempt(row) : null;
      },
    });
  }

  onApplicationBootstrap(): void {
    this.pump.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.pump.drain();
  }

  /** Sends every logout token due now and counts the outcomes. */
  dispatchDue(): Promise<Record<BackchannelOutcome, number>> {
    return this.pump.dispatchDue();
  }

  private async attempt(row: ClaimedRow & Lease): Promise<BackchannelOutcome> {
    const startedAt = this.clock.now();
    const realm = await this.providers.realm(row.realm_id);
    if (!realm) return this.fail(row, startedAt, null, 'the realm no longer exists');
    const provider = await this.providers.providerFor(realm);
    const client = await provider.Client.find(row.client_id);
    const uri = typeof client?.backchannelLogoutUri === 'string' ? client.backchannelLogoutUri : null;
    if (!client || !uri) return this.fail(row, startedAt, null, 'the client no longer has a back-channel logout URI');
    let target: ResolvedAddress;
    try {
      target = await this.policy.check(uri);
    } catch (error) {
      const reason = error instanceof DomainError ? `refused: ${error.meta.details?.[0]?.message ?? error.message}` : String(error);
      return this.retryOrFail(row, startedAt, null, reason);
    }
    // The library's own logout token (Client.prototype.backchannelLogout), sent from here instead.
    const token = new provider.IdToken({ sub: row.sub }, { client, ctx: undefined });
    token.mask = { sub: null };
    token.set('events', { [BACKCHANNEL_LOGOUT_EVENT]: {} });
    token.set('jti', randomUUID());
    token.set('sid', row.sid);
    const body = new URLSearchParams({ logout_token: await token.issue({ use: 'logout' }) }).toString();
    let status: number;
    try {
      status = await postWebhook({
        url: uri,
        target,
        body,
        timeoutMs: this.config.webhookTimeoutMs,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'identity-service-backchannel-logout' },
      });
    } catch (error) {
      return this.retryOrFail(row, startedAt, null, error instanceof Error ? error.message : String(error));
    }
    if (status === 200 || status === 204) {
      await this.outbox.settle(
        row,
        `status = 'delivered', delivered_at = $3, last_attempt_at = $3, last_status_code = $4, last_error = NULL`,
        [this.clock.now(), status],
      );
      return 'delivered';
    }
    const reason = status >= 300 && status < 400 ? `redirect (${status}) not followed` : `answered ${status}`;
    return this.retryOrFail(row, startedAt, status, reason);
  }

  private async retryOrFail(row: ClaimedRow & Lease, at: Date, status: number | null, reason: string): Promise<BackchannelOutcome> {
    const schedule = this.config.webhookRetryScheduleSeconds;
    if (row.attempts > schedule.length) return this.fail(row, at, status, reason);
    const retryAt = new Date(this.clock.now().getTime() + schedule[row.attempts - 1] * 1000);
    await this.outbox.settle(row, `next_attempt_at = $3, last_attempt_at = $4, last_status_code = $5, last_error = $6`, [
      retryAt,
      at,
      status,
      reason.slice(0, LAST_ERROR_MAX_LENGTH),
    ]);
    this.logger.warn(`Back-channel logout ${row.id} to client ${row.client_id} failed (${reason}); retry at ${retryAt.toISOString()}`);
    return 'retrying';
  }

  private async fail(row: ClaimedRow & Lease, at: Date, status: number | null, reason: string): Promise<BackchannelOutcome> {
    await this.outbox.settle(row, `status = 'failed', last_attempt_at = $3, last_status_code = $4, last_error = $5`, [
      at,
      status,
      reason.slice(0, LAST_ERROR_MAX_LENGTH),
    ]);
    this.logger.error(`Back-channel logout ${row.id} to client ${row.client_id} failed after ${row.attempts} attempt(s): ${reason}`);
    return 'failed';
  }
}
