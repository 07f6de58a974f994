import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '../../application/ports/clock';
import { MailTransport, UndeliverableMessageError } from '../../application/ports/mail-transport';
import { AppConfig } from '../../config/app-config';
import { OutboxPump } from '../lifecycle/outbox-pump';
import { Lease, LeasedOutbox } from '../persistence/leased-outbox';

/** Messages one instance sends in parallel. */
export const DISPATCH_CONCURRENCY = 4;
/** Messages one worker sends per pass before yielding to the next poll. */
const MESSAGES_PER_WORKER_PER_PASS = 50;
const LAST_ERROR_MAX_LENGTH = 500;

export interface DispatchReport {
  /** Accepted by the transport and marked sent. */
  sent: number;
  /** Failed this time; due again after a backoff. */
  retrying: number;
  /** Marked failed: attempts exhausted, or undeliverable. Kept in the outbox, never deleted. */
  failed: number;
}

/** A message claimed by this dispatcher until `leaseUntil`. */
export interface ClaimedMessage extends Lease {
  recipient: string;
  subject: string;
  text: string;
  html: string;
}

interface ClaimedRow extends Record<string, unknown> {
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
}

/**
 * Delivers the email outbox, with the outbox machinery shared with webhooks (`LeasedOutbox`,
 * `OutboxPump`): a message is claimed with a lease, so dispatchers of several instances never
 * take the same row and a crash between claim and delivery only delays it until the lease runs
 * out. Failures are retried with exponential backoff (capped); after the last attempt the row is
 * marked `failed` and stays in the table. Delivery is at least once: only a crash after the SMTP
 * server accepted a message but before the row was marked sent can send it twice (with the same
 * Message-ID).
 */
@Injectable()
export class OutboxDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Outbox');
  private readonly outbox: LeasedOutbox<ClaimedRow>;
  private readonly pump: OutboxPump<keyof DispatchReport>;

  constructor(
    dataSource: DataSource,
    private readonly transport: MailTransport,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {
    this.outbox = new LeasedOutbox<ClaimedRow>(dataSource, clock, {
      table: 'email_outbox',
      columns: ['o.recipient', 'o.subject', 'o.text_body', 'o.html_body'],
      leaseSeconds: () => this.config.outboxLeaseSeconds,
    });
    this.pump = new OutboxPump<keyof DispatchReport>({
      name: 'Outbox',
      pollIntervalMs: config.outboxPollIntervalMs,
      concurrency: DISPATCH_CONCURRENCY,
      perWorkerPerPass: MESSAGES_PER_WORKER_PER_PASS,
      outcomes: ['sent', 'retrying', 'failed'],
      next: async () => {
        const message = await this.claim();
        return message ? this.deliver(message) : null;
      },
      // Transport trouble: leave the rest for the next poll instead of burning their attempts.
      stopsWorker: (outcome) => outcome === 'retrying',
    });
  }

  onApplicationBootstrap(): void {
    this.pump.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.drain();
  }

  /**
   * Sends every message due now (up to a few hundred per call) and reports what happened.
   * A worker stops at its first transport failure, so an SMTP outage costs at most one attempt
   * per worker and poll (one when the pass's first message finds it), not one per queued message.
   */
  dispatchDue(): Promise<DispatchReport> {
    return this.pump.dispatchDue();
  }

  /**
   * Stops polling and waits for the messages being sent to finish (graceful shutdown). After
   * `timeoutMs` it returns anyway: an unfinished message keeps its lease and is sent later.
   */
  drain(timeoutMs = 10_000): Promise<void> {
    return this.pump.drain(timeoutMs);
  }

  /** Reserves the oldest due message for this dispatcher, counting the attempt; null when none is due. */
  async claim(): Promise<ClaimedMessage | null> {
    const row = await this.outbox.claim();
    if (!row) return null;
    return {
      id: row.id,
      recipient: row.recipient,
      subject: row.subject,
      text: row.text_body,
      html: row.html_body,
      attempts: row.attempts,
      leaseUntil: row.leaseUntil,
    };
  }

  /** Sends a claimed message and records the outcome, if this dispatcher still holds the lease. */
  async deliver(message: ClaimedMessage): Promise<keyof DispatchReport> {
    try {
      await this.transport.send({
        id: message.id,
        to: message.recipient,
        subject: message.subject,
        text: message.text,
        html: message.html,
      });
    } catch (error) {
      return this.recordFailure(message, error);
    }
    // The bodies hold live link tokens; once delivered they are not kept.
    await this.outbox.settle(message, `status = 'sent', sent_at = $3, last_error = NULL, text_body = '', html_body = ''`, [
      this.clock.now(),
    ]);
    return 'sent';
  }

  private async recordFailure(message: ClaimedMessage, error: unknown): Promise<'retrying' | 'failed'> {
    const undeliverable = error instanceof UndeliverableMessageError;
    const reason = (error instanceof Error ? error.message : String(error)).slice(0, LAST_ERROR_MAX_LENGTH);
    if (undeliverable || message.attempts >= this.config.outboxMaxAttempts) {
      await this.outbox.settle(message, `status = 'failed', last_error = $3`, [reason]);
      this.logger.error(`Email ${message.id} marked failed after ${message.attempts} attempt(s): ${reason}`);
      return 'failed';
    }
    const retryAt = new Date(this.clock.now().getTime() + this.backoffSeconds(message.attempts) * 1000);
    await this.outbox.settle(message, `next_attempt_at = $3, last_error = $4`, [retryAt, reason]);
    this.logger.warn(
      `Email ${message.id} not sent (attempt ${message.attempts} of ${this.config.outboxMaxAttempts}), retry at ${retryAt.toISOString()}: ${reason}`,
    );
    return 'retrying';
  }

  /**
   * base · 2^(attempt−1), capped, minus up to 20 % jitter so instances recovering from the same
   * outage do not retry in lockstep. Never more than the nominal delay.
   */
  backoffSeconds(attempts: number): number {
    const nominal = Math.min(this.config.outboxRetryMaxSeconds, this.config.outboxRetryBaseSeconds * 2 ** Math.min(attempts - 1, 30));
    return Math.max(1, Math.round(nominal * (1 - Math.random() * 0.2)));
  }
}
