import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { MemoryThrottlerStorage } from '../../src/adapters/rate-limit/memory-throttler-storage';

/**
 * The rate-limit counting contract, run against the in-memory storage and the Redis script it
 * copies, so a fail-over from Redis to memory changes where counters live, not how they count.
 * Both run on real time here (Redis keeps its own), with windows of a few hundred milliseconds.
 */
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

function redisReachable(url: string): boolean {
  const { hostname, port } = new URL(url);
  const probe = `require('net').connect(${Number(port || 6379)}, ${JSON.stringify(hostname)})
    .on('connect', () => process.exit(0)).on('error', () => process.exit(1))`;
  return spawnSync(process.execPath, ['-e', probe], { timeout: 3000 }).status === 0;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function contract(name: string, setup: () => { storage: ThrottlerStorage; teardown: () => Promise<void> }) {
  describe(`throttler storage contract: ${name}`, () => {
    let storage: ThrottlerStorage;
    let teardown: () => Promise<void>;
    beforeAll(() => {
      ({ storage, teardown } = setup());
    });
    afterAll(async () => teardown());

    const key = () => randomUUID();

    it('counts hits in a window and blocks the hit that passes the limit, for the block duration', async () => {
      const k = key();
      const records = [];
      for (let i = 0; i < 4; i++) records.push(await storage.increment(k, 60_000, 3, 30_000, 'login'));
      expect(records.map((r) => [r.totalHits, r.isBlocked])).toEqual([
        [1, false],
        [2, false],
        [3, false],
        [4, true],
      ]);
      expect(records[0].timeToExpire).toBe(60);
      expect(records[0].timeToBlockExpire).toBe(0);
      expect(records[3].timeToBlockExpire).toBe(30);
    });

    it('keeps keys and limit names apart', async () => {
      const k = key();
      await storage.increment(k, 60_000, 1, 60_000, 'login');
      expect((await storage.increment(k, 60_000, 1, 60_000, 'login')).isBlocked).toBe(true);
      expect((await storage.increment(k, 60_000, 1, 60_000, 'register')).isBlocked).toBe(false);
      expect((await storage.increment(key(), 60_000, 1, 60_000, 'login')).isBlocked).toBe(false);
    });

    it('starts a new window once both the window and the block have passed', async () => {
      const k = key();
      await storage.increment(k, 300, 1, 300, 'n');
      expect((await storage.increment(k, 300, 1, 300, 'n')).isBlocked).toBe(true);
      await sleep(450);
      const after = await storage.increment(k, 300, 1, 300, 'n');
      expect([after.totalHits, after.isBlocked]).toEqual([1, false]);
    });

    it('blocks again at the end of a block when the client kept hammering through it', async () => {
      const k = key();
      await storage.increment(k, 10_000, 1, 300, 'n'); // window of 10 s, block of 0.3 s
      expect((await storage.increment(k, 10_000, 1, 300, 'n')).isBlocked).toBe(true);
      await sleep(400); // the block is over, the window is not: 3 hits > 1
      const again = await storage.increment(k, 10_000, 1, 300, 'n');
      expect([again.totalHits, again.isBlocked]).toEqual([3, true]);
    });

    it('counts concurrent hits exactly: of 50 at once, the limit passes', async () => {
      const k = key();
      const records = await Promise.all(Array.from({ length: 50 }, () => storage.increment(k, 60_000, 5, 60_000, 'login')));
      expect(records.filter((r) => !r.isBlocked)).toHaveLength(5);
      expect(records.map((r) => r.totalHits).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    });
  });
}

contract('memory', () => ({ storage: new MemoryThrottlerStorage(() => Date.now()), teardown: async () => undefined }));

if (redisReachable(REDIS_URL)) {
  const prefix = `test:${randomUUID()}:`;
  contract('redis (@nest-lab/throttler-storage-redis)', () => {
    const storage = new ThrottlerStorageRedisService(REDIS_URL, { keyPrefix: prefix });
    return {
      storage,
      teardown: async () => {
        const keys = await storage.redis.keys(`${prefix}*`);
        if (keys.length) await storage.redis.del(...keys);
        storage.onModuleDestroy();
      },
    };
  });
} else {
  describe.skip(`throttler storage contract: redis (no Redis at ${REDIS_URL})`, () => {
    it('needs a reachable Redis', () => undefined);
  });
}
