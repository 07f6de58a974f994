import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Clock } from '../../application/ports/clock';
import { MailTransport, UndeliverableMessageError } from '../../application/ports/mail-transport';
import { AppConfig } from '../../config/app-config';
import { unwrapRows } from '../persistence/typeorm-user.repository';

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
export interface ClaimedMessage {
  id: string;
  recipient: string;
  subject: string;
  text: string;
  html: string;
  /** Attempts including this one. */
  attempts: number;
  leaseUntil: Date;
}

interface ClaimedRow {
  id: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  attempts: number;
}

/**
 * Delivers the email outbox.
 *
 * A message is claimed with `FOR UPDATE SKIP LOCKED` and reserved by a lease (`locked_until`),
 * so dispatchers of several instances never take the same row; a crash between claim and
 * delivery leaves the row reserved until the lease runs out, after which it is due again and
 * some dispatcher sends it. Failures are retried with exponential backoff (capped); after the
 * last attempt the row is marked `failed` and stays in the table. Delivery is at least once:
 * only a crash after the SMTP server accepted a message but before the row was marked sent can
 * send it twice (with the same Message-ID).
 */
@Injectable()
export class OutboxDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Outbox');
  private timer: NodeJS.Timeout | null = null;
  /** Passes of this instance run one after another. */
  private tail: Promise<unknown> = Promise.resolve();
  private stopping = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly transport: MailTransport,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.outboxPollIntervalMs > 0) this.schedule(0);
  }

  async onModuleDestroy(): Promise<void> {
    await this.drain();
  }

  /**
   * Sends every message due now (up to a few hundred per call) and reports what happened.
   * A worker stops at its first transport failure, so an SMTP outage costs one attempt per
   * worker and poll, not one per queued message.
   */
  dispatchDue(): Promise<DispatchReport> {
    const pass = this.tail.then(() => this.pass());
    this.tail = pass.catch(() => undefined);
    return pass;
  }

  /**
   * Stops polling and waits for the messages being sent to finish (graceful shutdown). After
   * `timeoutMs` it returns anyway: an unfinished message keeps its lease and is sent later.
   */
  async drain(timeoutMs = 10_000): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      this.tail,
      new Promise<void>((resolve) => {
        timeout = setTimeout(resolve, timeoutMs);
        timeout.unref();
      }),
    ]);
    if (timeout) clearTimeout(timeout);
  }

  /**
   * Reserves the oldest due message for this dispatcher, counting the attempt; null when none
   * is due. One statement: rows another dispatcher holds locked are skipped, rows it holds
   * leased are not due.
   */
  async claim(): Promise<ClaimedMessage | null> {
    const now = this.clock.now();
    const leaseUntil = new Date(now.getTime() + this.config.outboxLeaseSeconds * 1000);
    const rows = unwrapRows<ClaimedRow>(
      await this.dataSource.query(
        `WITH next AS (
           SELECT id FROM email_outbox
            WHERE status = 'pending' AND next_attempt_at <= $1 AND (locked_until IS NULL OR locked_until <= $1)
            ORDER BY next_attempt_at
            LIMIT 1
            FOR UPDATE SKIP LOCKED
         )
         UPDATE email_outbox o SET locked_until = $2, attempts = o.attempts + 1
           FROM next WHERE o.id = next.id
         RETURNING o.id, o.recipient, o.subject, o.text_body, o.html_body, o.attempts`,
        [now, leaseUntil],
      ),
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      recipient: row.recipient,
      subject: row.subject,
      text: row.text_body,
      html: row.html_body,
      attempts: Number(row.attempts),
      leaseUntil,
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
    await this.dataSource.query(
      `UPDATE email_outbox SET status = 'sent', sent_at = $3, locked_until = NULL, last_error = NULL, text_body = '', html_body = ''
        WHERE id = $1 AND status = 'pending' AND locked_until = $2`,
      [message.id, message.leaseUntil, this.clock.now()],
    );
    return 'sent';
  }

  private async recordFailure(message: ClaimedMessage, error: unknown): Promise<'retrying' | 'failed'> {
    const undeliverable = error instanceof UndeliverableMessageError;
    const reason = (error instanceof Error ? error.message : String(error)).slice(0, LAST_ERROR_MAX_LENGTH);
    if (undeliverable || message.attempts >= this.config.outboxMaxAttempts) {
      await this.dataSource.query(
        `UPDATE email_outbox SET status = 'failed', locked_until = NULL, last_error = $3
          WHERE id = $1 AND status = 'pending' AND locked_until = $2`,
        [message.id, message.leaseUntil, reason],
      );
      this.logger.error(`Email ${message.id} marked failed after ${message.attempts} attempt(s): ${reason}`);
      return 'failed';
    }
    const retryAt = new Date(this.clock.now().getTime() + this.backoffSeconds(message.attempts) * 1000);
    await this.dataSource.query(
      `UPDATE email_outbox SET next_attempt_at = $3, locked_until = NULL, last_error = $4
        WHERE id = $1 AND status = 'pending' AND locked_until = $2`,
      [message.id, message.leaseUntil, retryAt, reason],
    );
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

  private async pass(): Promise<DispatchReport> {
    const report: DispatchReport = { sent: 0, retrying: 0, failed: 0 };
    const worker = async () => {
      for (let i = 0; i < MESSAGES_PER_WORKER_PER_PASS && !this.stopping; i += 1) {
        const message = await this.claim();
        if (!message) return;
        const outcome = await this.deliver(message);
        report[outcome] += 1;
        // Transport trouble: leave the rest for the next poll instead of burning their attempts.
        if (outcome === 'retrying') return;
      }
    };
    // Settle every worker before the pass ends, so passes of one instance never overlap.
    const results = await Promise.allSettled(Array.from({ length: DISPATCH_CONCURRENCY }, worker));
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;
    return report;
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.dispatchDue()
        .catch((error: unknown) => this.logger.warn(`Outbox poll failed: ${error instanceof Error ? error.message : String(error)}`))
        .finally(() => this.schedule(this.config.outboxPollIntervalMs));
    }, delayMs);
    this.timer.unref();
  }
}
