import { randomUUID } from 'node:crypto';
import { RedisDpopReplayStore } from '../../src/adapters/dpop/redis-dpop-replay-store';
import { AppConfig } from '../../src/config/app-config';

const REDIS_URL = process.env.REDIS_URL;

(REDIS_URL ? describe : describe.skip)('DPoP replay store on Redis', () => {
  function store(prefix = `test:${randomUUID()}:`): RedisDpopReplayStore {
    return new RedisDpopReplayStore(Object.assign(new AppConfig(), { redisUrl: REDIS_URL, redisKeyPrefix: prefix }));
  }

  it('refuses a proof id seen by another instance sharing the Redis', async () => {
    const prefix = `test:${randomUUID()}:`;
    const [a, b] = [store(prefix), store(prefix)];
    await Promise.all([a.onModuleInit(), b.onModuleInit()]);
    try {
      const jti = randomUUID();
      expect(await a.firstUse('jkt', jti, 121)).toBe(true);
      expect(await b.firstUse('jkt', jti, 121)).toBe(false);
    } finally {
      a.onApplicationShutdown();
      b.onApplicationShutdown();
    }
  });

  it('still refuses on the same instance a proof id it saw before Redis became unreachable', async () => {
    const s = store();
    await s.onModuleInit();
    const jti = randomUUID();
    expect(await s.firstUse('jkt', jti, 121)).toBe(true);
    s.onApplicationShutdown(); // the connection is gone: what this instance saw must still count
    expect(await s.firstUse('jkt', jti, 121)).toBe(false);
    expect(await s.firstUse('jkt', randomUUID(), 121)).toBe(true);
  });
});
