import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import { Clock } from '../../application/ports/clock';
import { AppConfig } from '../../config/app-config';
import { MemoryThrottlerStorage } from './memory-throttler-storage';

/** How long to wait for Redis at start before serving with memory counters. */
const STARTUP_WAIT_MS = 2000;
/** After a failed command (Redis hung rather than gone), memory serves for this long before Redis is tried again. */
const RETRY_AFTER_FAILURE_MS = 5000;

export interface RateLimitStorageState {
  /** Where counters live right now. */
  backend: 'memory' | 'redis';
  /** True when REDIS_URL is set but Redis cannot be used (counters are per instance). */
  degraded: boolean;
}

/**
 * The throttler's storage: Redis when REDIS_URL is set, so every instance shares its counters;
 * this process's memory otherwise.
 *
 * Redis failing is a degradation, not an outage: while Redis is unreachable (or a command fails
 * or takes longer than 500 ms) requests are counted in memory, per instance — the limits still
 * hold on each instance, up to N times looser across N instances — the change is logged once and
 * /health/ready reports it (non-critical). ioredis keeps reconnecting; once Redis answers again
 * counting moves back to it. Failing closed would turn a cache outage into a login outage.
 */
@Injectable()
export class RateLimitStorage implements ThrottlerStorage, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimits');
  private readonly memory: MemoryThrottlerStorage;
  private readonly redis: ThrottlerStorageRedisService | null = null;
  private degraded = false;
  private skipRedisUntil = 0;

  constructor(config: AppConfig, clock: Clock) {
    this.memory = new MemoryThrottlerStorage(() => clock.now().getTime());
    if (!config.redisUrl) return;
    // A URL, not a client: the storage owns the connection, and we close it on shutdown.
    this.redis = new ThrottlerStorageRedisService(config.redisUrl, {
      keyPrefix: `${config.redisKeyPrefix}rl:`,
      // Never queue while disconnected: a command fails at once and the request is counted in memory.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 500,
      connectTimeout: 2000,
      retryStrategy: (attempt: number) => Math.min(attempt * 200, 2000),
    });
    const client = this.redis.redis;
    client.on('ready', () => this.recovered());
    client.on('error', (error: Error) => this.failed(error));
    client.on('close', () => this.failed(null));
  }

  async onModuleInit(): Promise<void> {
    if (!this.redis || this.redis.redis.status === 'ready') return;
    const client = this.redis.redis;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        client.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, STARTUP_WAIT_MS);
      client.once('ready', done);
    });
    if (client.status !== 'ready') this.failed(null);
  }

  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    if (this.redisUsable()) {
      try {
        const record = await this.redis!.increment(key, ttl, limit, blockDuration, throttlerName);
        if (this.degraded) this.recovered();
        return record;
      } catch (error) {
        this.skipRedisUntil = Date.now() + RETRY_AFTER_FAILURE_MS;
        this.failed(error as Error);
      }
    }
    return this.memory.increment(key, ttl, limit, blockDuration, throttlerName);
  }

  state(): RateLimitStorageState {
    if (!this.redis) return { backend: 'memory', degraded: false };
    return this.redisUsable() ? { backend: 'redis', degraded: false } : { backend: 'memory', degraded: true };
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.redis) return;
    this.redis.redis.removeAllListeners('close');
    this.redis.redis.disconnect(false);
  }

  private redisUsable(): boolean {
    return !!this.redis && this.redis.redis.status === 'ready' && Date.now() >= this.skipRedisUntil;
  }

  private failed(error: Error | null): void {
    if (this.degraded) return;
    this.degraded = true;
    // A code (ECONNREFUSED, ETIMEDOUT…) rather than the message, which may carry addresses.
    const code = (error as { code?: string } | null)?.code;
    const reason = !error ? 'connection closed' : (code ?? (/timed out/i.test(error.message) ? 'command timed out' : error.name));
    this.logger.warn(`Redis unavailable (${reason}); rate limits are counted in this instance's memory until it returns`);
  }

  private recovered(): void {
    this.skipRedisUntil = 0;
    if (!this.degraded) return;
    this.degraded = false;
    this.logger.log('Redis reachable again; rate limits are shared across instances');
  }
}
