import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';

/**
 * Work a request starts but does not wait for: its response goes out before the work is done,
 * so the response time says nothing about what the work found (resend and forgot
 * answer alike for known and unknown addresses). Failures are logged, never shown to the client.
 * Shutdown waits for the work in progress.
 */
@Injectable()
export class DeferredWork implements OnModuleDestroy {
  private readonly logger = new Logger('DeferredWork');
  private readonly pending = new Set<Promise<void>>();

  run(name: string, task: () => Promise<void>): void {
    // setImmediate: the response is written before the work takes the event loop.
    const done: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(task)
      .catch((error: unknown) => this.logger.error(`${name} failed: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /** Resolves once no deferred work is running. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  async onModuleDestroy(): Promise<void> {
    await this.settled();
  }
}
