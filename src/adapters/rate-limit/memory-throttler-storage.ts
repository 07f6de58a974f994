import type { ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';

interface Window {
  hits: number;
  expiresAt: number;
  blockedUntil: number;
}

const SWEEP_INTERVAL_MS = 60_000;

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/**
 * Rate-limit counters in this process's memory, counted exactly like the Redis script of
 * @nest-lab/throttler-storage-redis: a fixed window that starts at its first hit, and once the
 * count passes the limit a block of `blockDuration` (hits during the block keep counting, so a
 * client that hammers through its block is blocked again). Falling back from Redis to memory
 * therefore changes where counters live, not how they count.
 *
 * Time comes from `now` (the Clock port in the app), so tests move windows without sleeping.
 * `increment` never awaits before it has counted: concurrent requests are counted exactly.
 */
export class MemoryThrottlerStorage implements ThrottlerStorage {
  private readonly windows = new Map<string, Window>();
  private lastSweep = 0;

  constructor(private readonly now: () => number) {}

  increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    const now = this.now();
    this.sweep(now);
    const id = `${key}:${throttlerName}`;
    let window = this.windows.get(id);
    if (!window) {
      window = { hits: 0, expiresAt: now + ttl, blockedUntil: 0 };
      this.windows.set(id, window);
    } else if (window.expiresAt <= now) {
      window.hits = 0;
      window.expiresAt = now + ttl;
    }
    window.hits += 1;
    let isBlocked = window.blockedUntil > now;
    if (!isBlocked && window.hits > limit) {
      window.blockedUntil = now + blockDuration;
      isBlocked = true;
    }
    return Promise.resolve({
      totalHits: window.hits,
      timeToExpire: seconds(window.expiresAt - now),
      isBlocked,
      timeToBlockExpire: isBlocked ? seconds(window.blockedUntil - now) : 0,
    });
  }

  // Expired windows go at most once a minute, so memory stays bounded by the traffic of one window.
  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_INTERVAL_MS) return;
    this.lastSweep = now;
    for (const [id, window] of this.windows) {
      if (window.expiresAt <= now && window.blockedUntil <= now) this.windows.delete(id);
    }
  }
}
