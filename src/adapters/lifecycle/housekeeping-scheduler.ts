import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { HousekeepingReport, HousekeepingUseCase } from '../../application/housekeeping/housekeeping.use-case';
import { AppConfig } from '../../config/app-config';

/**
 * Runs housekeeping every HOUSEKEEPING_INTERVAL_SECONDS (0: never, in this process). The first
 * run comes after a random part of the interval (at most a minute), so instances started
 * together do not all knock on the lock at once. On shutdown it stops between two batches.
 */
@Injectable()
export class HousekeepingScheduler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Housekeeping');
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<unknown> = Promise.resolve();
  private stopping = false;

  constructor(
    private readonly housekeeping: HousekeepingUseCase,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const intervalMs = this.config.housekeepingIntervalSeconds * 1000;
    if (intervalMs <= 0) return;
    this.schedule(Math.floor(Math.random() * Math.min(intervalMs, 60_000)), intervalMs);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.current;
  }

  /** One run now (also what the timer calls); errors are logged, never thrown. */
  runOnce(): Promise<HousekeepingReport | null> {
    const run = this.housekeeping
      .execute({ shouldStop: () => this.stopping })
      .then((report) => {
        if (!report.ran) this.logger.debug('skipped: another instance is running it');
        else this.logger.log({ report }, 'housekeeping done');
        return report;
      })
      .catch((error: unknown) => {
        this.logger.error({ err: error }, 'housekeeping failed');
        return null;
      });
    this.current = run;
    return run;
  }

  private schedule(delayMs: number, intervalMs: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      void this.runOnce().finally(() => this.schedule(intervalMs, intervalMs));
    }, delayMs);
    this.timer.unref();
  }
}
