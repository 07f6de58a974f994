import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeferredWork } from '../../src/adapters/http/deferred-work';
import { PASSWORD, uniqueEmail } from '../support/flows';
import { freshIp, HttpResult, listenOnLoopback, send } from '../support/http-client';
import { createTestApp, TestApp } from '../support/test-app';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * Rate limits and the per-account failure limit, from distinct loopback
 * source addresses: each `freshIp()` is a client of its own, without any proxy header.
 */

const AUTH = '/api/v1/auth';
const LIMITS = {
  RATE_LIMIT_LOGIN: '3/900',
  RATE_LIMIT_REGISTER: '2/3600',
  RATE_LIMIT_REFRESH: '3/60',
  RATE_LIMIT_MFA_VERIFY: '3/60',
  RATE_LIMIT_EMAIL: '2/3600',
  REDIS_URL: '',
};

function expectLimited(res: HttpResult) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ error: { code: 'RATE_LIMITED', message: expect.any(String), status: 429 } });
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
}

describe('RL — rate limits (SECURITY.md)', () => {
  let t: TestApp;
  let base: string;
  const post = (path: string, from: string, body: unknown, headers?: Record<string, string>) =>
    send(base, 'POST', path, { from, body, headers });

  async function registered(email = uniqueEmail('rl')) {
    const res = await post(`${AUTH}/register`, freshIp(), { email, password: PASSWORD, name: 'Rate Limited' });
    expect(res.status).toBe(201);
    return { email, id: res.body.user.id as string };
  }

  beforeAll(async () => {
    t = await createTestApp({ env: LIMITS });
    base = await listenOnLoopback(t);
  });
  afterAll(() => t?.close());

  it('RL-01 limits register, login, refresh, MFA verify and resend per client IP: N+1 → 429 with Retry-After, another IP goes on', async () => {
    const user = await registered();
    const cases: { name: string; limit: number; call: (ip: string, i: number) => Promise<HttpResult>; ok: number }[] = [
      {
        name: 'register',
        limit: 2,
        call: (ip) => post(`${AUTH}/register`, ip, { email: uniqueEmail('rl1'), password: PASSWORD, name: 'Limited' }),
        ok: 201,
      },
      {
        name: 'login',
        limit: 3,
        call: (ip) => post(`${AUTH}/login`, ip, { email: user.email, password: 'not the password here' }),
        ok: 401,
      },
      // Tokens that resolve to no user are counted against the client IP.
      {
        name: 'refresh',
        limit: 3,
        call: (ip, i) => post(`${AUTH}/refresh`, ip, { refreshToken: `unknown-${i}-${'x'.repeat(40)}` }),
        ok: 401,
      },
      {
        name: 'mfa verify',
        limit: 3,
        call: (ip, i) => post(`${AUTH}/mfa/verify`, ip, { mfaToken: `unknown-${i}-${'y'.repeat(40)}`, type: 'totp', code: '123456' }),
        ok: 401,
      },
      { name: 'resend', limit: 2, call: (ip) => post(`${AUTH}/verify-email/resend`, ip, { email: user.email }), ok: 202 },
    ];
    for (const { name, limit, call, ok } of cases) {
      const ip = freshIp();
      for (let i = 0; i < limit; i++) expect([name, (await call(ip, i)).status]).toEqual([name, ok]);
      expectLimited(await call(ip, limit));
      expect([name, (await call(freshIp(), limit + 1)).status]).toEqual([name, ok]);
    }
    // A refused login never reached the password check: no audit event for it.
    const [{ n }] = await t.dataSource.query(`SELECT count(*) AS n FROM audit_events WHERE user_id = $1 AND type = 'login.failed'`, [
      user.id,
    ]);
    expect(Number(n)).toBe(4);
    await t.app.get(DeferredWork).settled();
  });

  it('RL-03 ignores X-Forwarded-For without TRUST_PROXY: one source address rotating the header is still limited', async () => {
    const ip = freshIp();
    const user = await registered();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await post(
        `${AUTH}/login`,
        ip,
        { email: user.email, password: 'wrong guess again' },
        { 'x-forwarded-for': `198.51.100.${i + 1}` },
      );
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
  });

  it('RL-04 normalises identifiers for uniqueness and the per-account counter: case, whitespace and Unicode form', async () => {
    const local = `\u00e9lodie.${Date.now().toString(36)}`;
    const canonical = `${local}@example.test`;
    const first = await post(`${AUTH}/register`, freshIp(), { email: canonical, password: PASSWORD, name: 'Élodie' });
    expect(first.status).toBe(201);
    for (const variant of [`  ${local.toUpperCase()}@EXAMPLE.TEST `, `e\u0301${local.slice(1)}@example.test`]) {
      const again = await post(`${AUTH}/register`, freshIp(), { email: variant, password: PASSWORD, name: 'Élodie' });
      expect([again.status, again.body.error.code]).toEqual([409, 'EMAIL_ALREADY_REGISTERED']);
    }
    const [{ n }] = await t.dataSource.query(`SELECT count(*) AS n FROM users WHERE email = $1`, [canonical]);
    expect(Number(n)).toBe(1);

    // Failed logins under every spelling count towards the one account (10 → locked).
    const spellings = [canonical, ` ${canonical.toUpperCase()} `, `e\u0301${canonical.slice(1)}`];
    for (let i = 0; i < 10; i++) {
      const res = await post(`${AUTH}/login`, freshIp(), { email: spellings[i % 3], password: 'definitely not it' });
      expect(res.status).toBe(401);
    }
    const locked = await post(`${AUTH}/login`, freshIp(), { email: canonical, password: PASSWORD });
    expect([locked.status, locked.body.error.code]).toEqual([423, 'ACCOUNT_LOCKED']);
    // Logging in with a variant spelling reaches the same (locked) account.
    expect((await post(`${AUTH}/login`, freshIp(), { email: spellings[2], password: PASSWORD })).status).toBe(423);
  });
});

describe('RL-02 — per-account limit independent of the source address, kept across a restart', () => {
  let database: TestDatabase;
  let dataDir: string | null = null;

  beforeAll(async () => {
    database = await createTestDatabase();
    if (!database.databaseUrl) {
      // The embedded database on disk, so a second process life finds the same data.
      dataDir = mkdtempSync(join(tmpdir(), 'rl02-'));
      database = { ...database, dataDir };
    }
  });
  afterAll(async () => {
    await database.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('RL-02 wrong passwords for one account from 11 different addresses lock it; the lock holds after a restart', async () => {
    const first = await createTestApp({ env: { REDIS_URL: '' }, database });
    const email = uniqueEmail('rl2');
    let base = await listenOnLoopback(first);
    expect(
      (await send(base, 'POST', `${AUTH}/register`, { from: freshIp(), body: { email, password: PASSWORD, name: 'Target' } })).status,
    ).toBe(201);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      statuses.push(
        (await send(base, 'POST', `${AUTH}/login`, { from: freshIp(), body: { email, password: `guess number ${i}` } })).status,
      );
    }
    expect(statuses).toEqual(Array(10).fill(401));
    const locked = await send(base, 'POST', `${AUTH}/login`, { from: freshIp(), body: { email, password: PASSWORD } });
    expect([locked.status, locked.body.error.code]).toEqual([423, 'ACCOUNT_LOCKED']);
    await first.close();

    const second = await createTestApp({ env: { REDIS_URL: '' }, database });
    try {
      base = await listenOnLoopback(second);
      const after = await send(base, 'POST', `${AUTH}/login`, { from: freshIp(), body: { email, password: PASSWORD } });
      expect([after.status, after.body.error.code]).toEqual([423, 'ACCOUNT_LOCKED']);
      expect(Number(after.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await second.close();
    }
    // Two app starts and a dozen bcrypt checks: give a loaded machine room.
  }, 120_000);
});
