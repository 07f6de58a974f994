import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { AccessTokens } from '../../src/application/ports/access-tokens';
import { PASSWORD, uniqueEmail } from '../support/flows';
import { freshIp, HttpResult, listenOnLoopback, send } from '../support/http-client';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Rate limits and the rest of the shared state across instances, with real Redis and PostgreSQL
 * (CI runs these with DATABASE_URL and REDIS_URL set), and the service's behaviour when Redis is
 * unreachable or stops mid-run. Redis keeps its own time, so windows here are short and real.
 */
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const AUTH = '/api/v1/auth';

/** Decided before the suites are declared, so a missing Redis shows as skipped tests, not passes. */
function redisReachable(url: string): boolean {
  const { hostname, port } = new URL(url);
  const probe = `require('net').connect(${Number(port || 6379)}, ${JSON.stringify(hostname)})
    .on('connect', () => process.exit(0)).on('error', () => process.exit(1))`;
  return spawnSync(process.execPath, ['-e', probe], { timeout: 3000 }).status === 0;
}

const redisUp = redisReachable(REDIS_URL);
const sharedDatabase = !!process.env.DATABASE_URL; // two instances need one PostgreSQL server (PGlite is per process)
const describeWithRedis = redisUp ? describe : describe.skip;
const describeScaleOut = redisUp && sharedDatabase ? describe : describe.skip;
if (!redisUp) console.warn(`rate-limits-redis: no Redis at ${REDIS_URL}; Redis tests skipped`);
else if (!sharedDatabase) console.warn('rate-limits-redis: DATABASE_URL unset; the two-instance tests need PostgreSQL and are skipped');

const wrongLogin = (email: string) => ({ email, password: 'wrong password 123' });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const kidOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString()).kid as string;

async function redisKeys(prefix: string): Promise<string[]> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    return await redis.keys(`${prefix}*`);
  } finally {
    redis.disconnect();
  }
}

async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

async function readiness(base: string) {
  return send(base, 'GET', '/health/ready');
}

async function until(what: string, condition: () => Promise<boolean>, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describeScaleOut('two instances sharing PostgreSQL and Redis', () => {
  const prefix = `test:${randomUUID()}:`;
  const env = { REDIS_URL, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_LOGIN: '5/900', RATE_LIMIT_REGISTER: '2/3' };
  let a: TestApp;
  let b: TestApp;
  let baseA: string;
  let baseB: string;

  beforeAll(async () => {
    a = await createTestApp({ env });
    b = await createTestApp({ env, database: a.database });
    baseA = await listenOnLoopback(a);
    baseB = await listenOnLoopback(b);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await deleteKeys(prefix);
  });

  async function register(base: string, from = freshIp()) {
    const email = uniqueEmail('scale');
    const res = await send(base, 'POST', `${AUTH}/register`, { from, body: { email, password: PASSWORD, name: 'Scale Out' } });
    expect(res.status).toBe(201);
    return email;
  }

  async function signIn(base: string, email: string, from = freshIp()) {
    const res = await send(base, 'POST', `${AUTH}/login`, { from, body: { email, password: PASSWORD } });
    expect(res.status).toBe(200);
    return res.body.tokens as { accessToken: string; refreshToken: string };
  }

  it('reports Redis as the rate-limit storage on both instances', async () => {
    for (const base of [baseA, baseB]) {
      const res = await readiness(base);
      expect(res.status).toBe(200);
      expect(res.body.checks.rateLimits).toEqual({ ok: true, detail: 'redis' });
    }
  });

  it('shares the login limit: attempts alternating between the instances hit it exactly', async () => {
    const email = await register(baseA);
    const ip = freshIp();
    const results: HttpResult[] = [];
    for (let i = 0; i < 7; i++)
      results.push(await send(i % 2 ? baseB : baseA, 'POST', `${AUTH}/login`, { from: ip, body: wrongLogin(email) }));
    expect(results.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 429, 429]);
    expect(results.slice(0, 5).map((r) => r.headers['ratelimit-remaining'])).toEqual(['4', '3', '2', '1', '0']);
    expect(results[5].headers['retry-after']).toBe('900');
    expect(results[5].body).toEqual({ error: { code: 'RATE_LIMITED', message: expect.any(String), status: 429 } });
    // Another client is unaffected on either instance.
    await signIn(baseB, email);
  });

  it('lets exactly 5 of 50 concurrent logins from one IP through, spread over both instances', async () => {
    const email = await register(baseB);
    const ip = freshIp();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => send(i % 2 ? baseB : baseA, 'POST', `${AUTH}/login`, { from: ip, body: wrongLogin(email) })),
    );
    expect(results.filter((r) => r.status === 401)).toHaveLength(5);
    expect(results.filter((r) => r.status === 429)).toHaveLength(45);
  });

  it('stores only hashed keys under the configured prefix: no address or user id in Redis', async () => {
    const ip = freshIp();
    const email = await register(baseA, ip);
    const keys = await redisKeys(prefix);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => k.startsWith(`${prefix}rl:{`))).toBe(true);
    expect(keys.some((k) => k.includes(ip) || k.includes(email))).toBe(false);
  });

  it('resets the shared window: 2 registrations per 3 s, the 3rd refused on the other instance, accepted again after Retry-After', async () => {
    const ip = freshIp();
    await register(baseA, ip);
    await register(baseB, ip);
    const limited = await send(baseA, 'POST', `${AUTH}/register`, {
      from: ip,
      body: { email: uniqueEmail('scale'), password: PASSWORD, name: 'Third' },
    });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers['retry-after']);
    expect([1, 2, 3]).toContain(retryAfter);
    await sleep(retryAfter * 1000 + 200);
    await register(baseB, ip);
  });

  it('accepts on one instance the access tokens signed by the other, and refuses them on both at once after a logout on one', async () => {
    const email = await register(baseA);
    const fromA = await signIn(baseA, email);
    expect((await send(baseB, 'GET', `${AUTH}/me`, { headers: bearer(fromA.accessToken) })).status).toBe(200);
    const fromB = await signIn(baseB, email);
    expect((await send(baseA, 'GET', `${AUTH}/me`, { headers: bearer(fromB.accessToken) })).status).toBe(200);

    const logout = await send(baseA, 'POST', `${AUTH}/logout`, { body: { refreshToken: fromA.refreshToken } });
    expect(logout.status).toBe(200);
    const me = await send(baseB, 'GET', `${AUTH}/me`, { headers: bearer(fromA.accessToken) });
    expect(me.status).toBe(401);
    expect(me.body.error.code).toBe('INVALID_TOKEN');
    const refresh = await send(baseB, 'POST', `${AUTH}/refresh`, { body: { refreshToken: fromA.refreshToken } });
    expect(refresh.status).toBe(401);
    // The other session is untouched.
    expect((await send(baseB, 'GET', `${AUTH}/me`, { headers: bearer(fromB.accessToken) })).status).toBe(200);
  });

  it('after a key rotation on one instance, the other serves the new JWKS and accepts the new tokens at once', async () => {
    const email = await register(baseA);
    const before = await send(baseB, 'GET', '/.well-known/jwks.json');
    const oldKid = before.body.keys[0].kid as string;
    // Warm B's key cache with the current key.
    const old = await signIn(baseA, email);
    expect(kidOf(old.accessToken)).toBe(oldKid);
    expect((await send(baseB, 'GET', `${AUTH}/me`, { headers: bearer(old.accessToken) })).status).toBe(200);

    const newKid = await a.app.get(AccessTokens).rotate(a.clock.now());
    expect(newKid).not.toBe(oldKid);

    const fresh = await signIn(baseA, email);
    expect(kidOf(fresh.accessToken)).toBe(newKid);
    expect((await send(baseB, 'GET', `${AUTH}/me`, { headers: bearer(fresh.accessToken) })).status).toBe(200);

    const after = await send(baseB, 'GET', '/.well-known/jwks.json');
    expect(after.status).toBe(200);
    expect(after.body.keys.map((k: { kid: string }) => k.kid)).toEqual([newKid, oldKid]);
    // Tokens signed before the rotation keep verifying on both (the previous key stays published).
    expect((await send(baseB, 'GET', `${AUTH}/me`, { headers: bearer(old.accessToken) })).status).toBe(200);
    expect((await send(baseA, 'GET', `${AUTH}/me`, { headers: bearer(old.accessToken) })).status).toBe(200);
  });
});

describe('Redis unreachable from the start (a dead port)', () => {
  let t: TestApp;
  let base: string;
  let warnings: jest.SpyInstance;

  beforeAll(async () => {
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    warnings = jest.spyOn(Logger.prototype, 'warn');
    // Starting at all (within the hook's timeout) shows a dead Redis does not hold the start up.
    t = await createTestApp({ env: { REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_LOGIN: '3/900' } });
    base = await listenOnLoopback(t);
  });
  afterAll(async () => {
    warnings.mockRestore();
    await t?.close();
  });

  it('starts anyway, logs that rate limits fall back to memory, and stays ready with a non-critical failed check', async () => {
    expect(warnings.mock.calls.some(([message]) => /Redis unavailable.*memory/.test(String(message)))).toBe(true);
    const res = await readiness(base);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.checks.rateLimits).toEqual({ ok: false, detail: 'memory (redis unreachable)' });
  });

  it('keeps answering and limiting, with counters in this instance memory (they follow the app clock)', async () => {
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await send(base, 'POST', `${AUTH}/login`, { from: ip, body: wrongLogin('nobody@example.com') })).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect((await send(base, 'POST', `${AUTH}/login`, { from: freshIp(), body: wrongLogin('nobody@example.com') })).status).toBe(401);
    t.clock.advance(900);
    expect((await send(base, 'POST', `${AUTH}/login`, { from: ip, body: wrongLogin('nobody@example.com') })).status).toBe(401);
  });
});

/**
 * A TCP relay in front of Redis: stopping it is Redis going away, for the app, mid-run; freezing
 * it is a Redis that hangs (connection open, no answers).
 */
class Relay {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private frozen = false;
  private held: (() => void)[] = [];
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      const forward = (from: net.Socket, to: net.Socket) => {
        from.on('data', (chunk: Buffer) => (this.frozen ? this.held.push(() => to.write(chunk)) : to.write(chunk)));
        from.on('end', () => to.end());
      };
      forward(client, upstream);
      forward(upstream, client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
    const held = this.held;
    this.held = [];
    for (const deliver of held) deliver();
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describeWithRedis('Redis stopping and coming back mid-run', () => {
  const prefix = `test:${randomUUID()}:`;
  const target = new URL(REDIS_URL);
  const relay = new Relay({ host: target.hostname, port: Number(target.port || 6379) });
  let t: TestApp;
  let base: string;
  let warnings: jest.SpyInstance;
  let infos: jest.SpyInstance;

  beforeAll(async () => {
    await relay.start();
    const url = new URL(REDIS_URL);
    url.host = `127.0.0.1:${relay.port}`;
    warnings = jest.spyOn(Logger.prototype, 'warn');
    infos = jest.spyOn(Logger.prototype, 'log');
    t = await createTestApp({ env: { REDIS_URL: url.toString(), REDIS_KEY_PREFIX: prefix, RATE_LIMIT_LOGIN: '4/900' } });
    base = await listenOnLoopback(t);
  });
  afterAll(async () => {
    warnings.mockRestore();
    infos.mockRestore();
    await t?.close();
    await relay.stop();
    await deleteKeys(prefix);
  });

  const rateLimits = async () => (await readiness(base)).body.checks.rateLimits as { ok: boolean; detail: string };
  const attempt = (ip: string) => send(base, 'POST', `${AUTH}/login`, { from: ip, body: wrongLogin('nobody@example.com') });

  it('falls back to memory counters while Redis is gone, and returns to the shared counters when it is back', async () => {
    expect(await rateLimits()).toEqual({ ok: true, detail: 'redis' });
    const ip = freshIp();
    expect((await attempt(ip)).headers['ratelimit-remaining']).toBe('3');
    expect((await attempt(ip)).headers['ratelimit-remaining']).toBe('2');
    expect((await redisKeys(prefix)).length).toBeGreaterThan(0);

    await relay.stop();
    await until('the degraded state', async () => !(await rateLimits()).ok);
    expect(await rateLimits()).toEqual({ ok: false, detail: 'memory (redis unreachable)' });
    expect(warnings.mock.calls.some(([message]) => /Redis unavailable/.test(String(message)))).toBe(true);
    // Still answering, now counted in memory from zero: 4 more attempts pass, the 5th is refused.
    const during: HttpResult[] = [];
    for (let i = 0; i < 5; i++) during.push(await attempt(ip));
    expect(during.map((r) => r.status)).toEqual([401, 401, 401, 401, 429]);
    expect(during[0].headers['ratelimit-remaining']).toBe('3');

    await relay.start();
    await until('Redis to be used again', async () => (await rateLimits()).ok);
    expect(infos.mock.calls.some(([message]) => /Redis reachable again/.test(String(message)))).toBe(true);
    // Back on the shared counter, which still holds the 2 attempts made before the outage.
    const after = await attempt(ip);
    expect(after.status).toBe(401);
    expect(after.headers['ratelimit-remaining']).toBe('1');
  });

  it('pays one slow request (500 ms) when Redis hangs, serves from memory for the next 5 s, and returns to Redis once it answers', async () => {
    await until('Redis in use', async () => (await rateLimits()).ok);
    const ip = freshIp();
    expect((await attempt(ip)).headers['ratelimit-remaining']).toBe('3');

    relay.freeze();
    try {
      let started = Date.now();
      const slow = await attempt(ip);
      const slowMs = Date.now() - started;
      expect(slow.status).toBe(401);
      expect(slow.headers['ratelimit-remaining']).toBe('3'); // counted in memory, from zero
      expect(slowMs).toBeGreaterThanOrEqual(450);
      expect(slowMs).toBeLessThan(3000);
      started = Date.now();
      const fast = await attempt(ip);
      expect(Date.now() - started).toBeLessThan(450);
      expect(fast.headers['ratelimit-remaining']).toBe('2');
      expect(await rateLimits()).toEqual({ ok: false, detail: 'memory (redis unreachable)' });
      expect(warnings.mock.calls.some(([message]) => /Redis unavailable \(command timed out\)/.test(String(message)))).toBe(true);
    } finally {
      relay.thaw();
    }
    await until('Redis to be used again', async () => (await rateLimits()).ok, 10_000);
    // The held command reached Redis when the relay thawed: the shared counter now holds 2.
    const after = await attempt(ip);
    expect(after.status).toBe(401);
    expect(after.headers['ratelimit-remaining']).toBe('1');
  });
});
