import { Logger } from '@nestjs/common';

export interface OutboxPumpOptions<Outcome extends string> {
  name: string;
  /** Milliseconds between polls; 0: never on its own (tests call `dispatchDue`). */
  pollIntervalMs: number;
  /** Rows one instance sends in parallel. */
  concurrency: number;
  /** Rows one worker sends per pass before yielding to the next poll. */
  perWorkerPerPass: number;
  outcomes: readonly Outcome[];
  /** Claims one due row and sends it; null when none is due. */
  next: () => Promise<Outcome | null>;
  /** An outcome after which a worker leaves the rest for the next poll (a transport outage). */
  stopsWorker?: (outcome: Outcome) => boolean;
}

/**
 * The process half of an outbox: a poll timer; passes that claim one row and, when there was
 * one, start a few parallel workers that claim and send until nothing is due, one pass at a time
 * per instance; and a drain on shutdown that lets the rows being sent finish (an unfinished one
 * keeps its lease and is sent later).
 */
export class OutboxPump<Outcome extends string> {
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | null = null;
  /** Passes of this instance run one after another. */
  private tail: Promise<unknown> = Promise.resolve();
  private stopping = false;

  constructor(private readonly options: OutboxPumpOptions<Outcome>) {
    this.logger = new Logger(options.name);
  }

  start(): void {
    if (this.options.pollIntervalMs > 0) this.schedule(0);
  }

  /** Sends every row due now (up to concurrency × perWorkerPerPass) and counts the outcomes. */
  dispatchDue(): Promise<Record<Outcome, number>> {
    const pass = this.tail.then(() => this.pass());
    this.tail = pass.catch(() => undefined);
    return pass;
  }

  /** Stops polling and waits up to `timeoutMs` for the rows being sent. */
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

  private async pass(): Promise<Record<Outcome, number>> {
    const { outcomes, concurrency, perWorkerPerPass, next, stopsWorker } = this.options;
    const report = Object.fromEntries(outcomes.map((o) => [o, 0])) as Record<Outcome, number>;
    // One claim before the workers start: a poll that finds nothing due (most polls) costs one
    // statement, not one per worker, and an outage that its message meets costs one attempt.
    const first = this.stopping ? null : await next();
    if (first === null) return report;
    report[first] += 1;
    if (stopsWorker?.(first)) return report;
    const worker = async (done: number) => {
      for (let i = done; i < perWorkerPerPass && !this.stopping; i += 1) {
        const outcome = await next();
        if (outcome === null) return;
        report[outcome] += 1;
        if (stopsWorker?.(outcome)) return;
      }
    };
    // Settle every worker before the pass ends, so passes of one instance never overlap.
    const results = await Promise.allSettled(Array.from({ length: concurrency }, (_, n) => worker(n === 0 ? 1 : 0)));
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;
    return report;
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.dispatchDue()
        .catch((error: unknown) =>
          this.logger.warn(`${this.options.name} poll failed: ${error instanceof Error ? error.message : String(error)}`),
        )
        .finally(() => this.schedule(this.options.pollIntervalMs));
    }, delayMs);
    this.timer.unref();
  }
}
