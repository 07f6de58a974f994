import { Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import Redis from 'ioredis';
import { DpopReplayStore } from '../../application/ports/dpop-replay-store';
import { AppConfig } from '../../config/app-config';
import { MemoryDpopReplayStore, replayKey } from './memory-dpop-replay-store';

const STARTUP_WAIT_MS = 2000;

/**
 * Proof ids in Redis (`SET NX` with an expiry), so a proof accepted by one instance is a replay
 * on every other, and in this instance's memory too. While Redis cannot answer, memory alone
 * serves (replays are then caught per instance only) and the change is logged once: a cache
 * outage must not become a sign-in outage for DPoP clients.
 */
export class RedisDpopReplayStore implements DpopReplayStore, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('DPoP');
  private readonly memory = new MemoryDpopReplayStore();
  private readonly redis: Redis;
  private degraded = false;

  constructor(config: AppConfig) {
    this.redis = new Redis(config.redisUrl!, {
      keyPrefix: `${config.redisKeyPrefix}dpop:`,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 500,
      connectTimeout: 2000,
      retryStrategy: (attempt: number) => Math.min(attempt * 200, 2000),
    });
    this.redis.on('error', () => this.failed());
    this.redis.on('ready', () => {
      if (this.degraded) this.logger.log('Redis reachable again; DPoP proof ids are shared across instances');
      this.degraded = false;
    });
  }

  async onModuleInit(): Promise<void> {
    if (this.redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, STARTUP_WAIT_MS);
      this.redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  async firstUse(jkt: string, jti: string, ttlSeconds: number): Promise<boolean> {
    // This instance's memory always keeps its own: a replay to the same instance is caught even
    // across a Redis outage, before or after it.
    if (!(await this.memory.firstUse(jkt, jti, ttlSeconds))) return false;
    if (this.redis.status === 'ready') {
      try {
        return (await this.redis.set(replayKey(jkt, jti), '1', 'EX', ttlSeconds, 'NX')) === 'OK';
      } catch {
        this.failed();
      }
    } else {
      this.failed();
    }
    return true;
  }

  onApplicationShutdown(): void {
    this.redis.removeAllListeners('error');
    this.redis.disconnect(false);
  }

  private failed(): void {
    if (this.degraded) return;
    this.degraded = true;
    this.logger.warn('Redis unavailable; DPoP proof ids are remembered in this instance only until it returns');
  }
}
