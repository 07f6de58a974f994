import { DeferredWork } from '../../src/adapters/http/deferred-work';
import speakeasy from 'speakeasy';
import { RefreshTokenRepository } from '../../src/application/ports/refresh-token.repository';
import { freshIp, HttpResult, listenOnLoopback, send } from '../support/http-client';
import { PASSWORD, uniqueEmail } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * The rate-limit table on one instance, counters in memory. The in-memory storage reads the app's Clock,
 * so windows are moved with the TestClock instead of sleeping. Each client is a distinct
 * loopback source address (no proxy header involved).
 */
const LIMITS = {
  RATE_LIMIT_LOGIN: '3/900',
  RATE_LIMIT_REGISTER: '2/3600',
  RATE_LIMIT_REFRESH: '4/60',
  RATE_LIMIT_MFA_VERIFY: '3/60',
  RATE_LIMIT_EMAIL: '2/3600',
  RATE_LIMIT_DEFAULT: '5/60',
};

const AUTH = '/api/v1/auth';

function expectLimitHeaders(res: HttpResult, limit: number, remaining: number, maxReset: number) {
  expect(res.headers['ratelimit-limit']).toBe(String(limit));
  expect(res.headers['ratelimit-remaining']).toBe(String(remaining));
  const reset = Number(res.headers['ratelimit-reset']);
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(maxReset);
}

function expectRateLimited(res: HttpResult, limit: number, retryAfter: number) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ error: { code: 'RATE_LIMITED', message: expect.any(String), status: 429 } });
  expect(res.headers['retry-after']).toBe(String(retryAfter));
  expect(res.headers['ratelimit-limit']).toBe(String(limit));
  expect(res.headers['ratelimit-remaining']).toBe('0');
  expect(res.headers['ratelimit-reset']).toBe(String(retryAfter));
  // Only the contract's headers: none of the throttler's own.
  expect(Object.keys(res.headers).filter((h) => h.startsWith('x-ratelimit') || h.startsWith('retry-after-'))).toEqual([]);
}

describe('rate limits on one instance', () => {
  let t: TestApp;
  let base: string;

  const post = (path: string, from: string, body: unknown, headers?: Record<string, string>) =>
    send(base, 'POST', path, { from, body, headers });
  const get = (path: string, from: string, headers?: Record<string, string>) => send(base, 'GET', path, { from, headers });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  async function registerFrom(from = freshIp(), email = uniqueEmail('rl')) {
    const res = await post(`${AUTH}/register`, from, { email, password: PASSWORD, name: 'Rate Limited' });
    expect(res.status).toBe(201);
    return { email, id: res.body.user.id as string };
  }

  /** A registered user, signed in from `from`. */
  async function signedIn(from = freshIp()) {
    const user = await registerFrom();
    const res = await post(`${AUTH}/login`, from, { email: user.email, password: PASSWORD });
    expect(res.status).toBe(200);
    return { ...user, accessToken: res.body.tokens.accessToken as string, refreshToken: res.body.tokens.refreshToken as string };
  }

  async function auditCount(userId: string, type: string): Promise<number> {
    const rows: { n: string }[] = await t.dataSource.query(`SELECT count(*) AS n FROM audit_events WHERE user_id = $1 AND type = $2`, [
      userId,
      type,
    ]);
    return Number(rows[0].n);
  }

  beforeAll(async () => {
    // REDIS_URL is blanked: these counters live in this instance's memory even when CI provides Redis.
    t = await createTestApp({ env: { ...LIMITS, REDIS_URL: '' } });
    base = await listenOnLoopback(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('POST /login — 3 per 900 s by client IP', () => {
    it('answers the 4th attempt from one IP with 429 RATE_LIMITED and Retry-After, even with the right password; the limited request never reaches the login', async () => {
      const user = await registerFrom();
      const ip = freshIp();
      for (let i = 0; i < 3; i++) {
        const res = await post(`${AUTH}/login`, ip, { email: user.email, password: 'wrong password 123' });
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('INVALID_CREDENTIALS');
        expectLimitHeaders(res, 3, 2 - i, 900);
      }
      const limited = await post(`${AUTH}/login`, ip, { email: user.email, password: PASSWORD });
      expectRateLimited(limited, 3, 900);
      expect(await auditCount(user.id, 'login.failed')).toBe(3);
      expect(await auditCount(user.id, 'login.succeeded')).toBe(0);

      // Another client IP is unaffected.
      const other = await post(`${AUTH}/login`, freshIp(), { email: user.email, password: PASSWORD });
      expect(other.status).toBe(200);
      expectLimitHeaders(other, 3, 2, 900);

      // The window resets.
      t.clock.advance(900);
      const after = await post(`${AUTH}/login`, ip, { email: user.email, password: PASSWORD });
      expect(after.status).toBe(200);
      expectLimitHeaders(after, 3, 2, 900);
    });

    it('lets exactly the limit through when 50 logins from one IP arrive at once', async () => {
      const user = await registerFrom();
      const ip = freshIp();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          post(`${AUTH}/login`, ip, { email: user.email, password: i % 2 ? PASSWORD : 'wrong password 123' }),
        ),
      );
      const through = results.filter((r) => r.status !== 429);
      expect(through).toHaveLength(3);
      expect(through.every((r) => r.status === 200 || r.status === 401)).toBe(true);
      expect(results.filter((r) => r.status === 429)).toHaveLength(47);
    });

    it('ignores X-Forwarded-For without TRUST_PROXY: rotating it from one socket address still hits the limit', async () => {
      const user = await registerFrom();
      const ip = freshIp();
      const statuses: number[] = [];
      for (let i = 1; i <= 4; i++) {
        const res = await post(
          `${AUTH}/login`,
          ip,
          { email: user.email, password: 'wrong password 123' },
          { 'x-forwarded-for': `198.51.100.${i}` },
        );
        statuses.push(res.status);
      }
      expect(statuses).toEqual([401, 401, 401, 429]);
    });
  });

  describe('POST /register — 2 per 3600 s by client IP', () => {
    it('refuses the 3rd registration from one IP without creating the user, not another IP, and resets after the window', async () => {
      const ip = freshIp();
      await registerFrom(ip);
      const second = await post(`${AUTH}/register`, ip, { email: uniqueEmail('rl'), password: PASSWORD, name: 'Second' });
      expect(second.status).toBe(201);
      expectLimitHeaders(second, 2, 0, 3600);
      const email = uniqueEmail('rl-limited');
      const limited = await post(`${AUTH}/register`, ip, { email, password: PASSWORD, name: 'Third' });
      expectRateLimited(limited, 2, 3600);
      expect(await t.dataSource.query(`SELECT id FROM users WHERE email = $1`, [email])).toHaveLength(0);

      const other = await post(`${AUTH}/register`, freshIp(), { email, password: PASSWORD, name: 'Elsewhere' });
      expect(other.status).toBe(201);

      t.clock.advance(3600);
      const after = await post(`${AUTH}/register`, ip, { email: uniqueEmail('rl'), password: PASSWORD, name: 'Later' });
      expect(after.status).toBe(201);
    });
  });

  describe('POST /refresh — 4 per 60 s by the user of the refresh token', () => {
    // Hijack detection compares the client's /24, so one user's traffic stays inside one /24.
    const subnet = (n: number) => `127.0.200.${n}`;

    it('limits one user whatever the IP, leaves another user on the same IP alone, and does not spend the refused token', async () => {
      const alice = await signedIn(subnet(1));
      const bob = await signedIn(subnet(1));
      let token = alice.refreshToken;
      for (let i = 0; i < 4; i++) {
        const res = await post(`${AUTH}/refresh`, subnet(2), { refreshToken: token });
        expect(res.status).toBe(200);
        expectLimitHeaders(res, 4, 3 - i, 60);
        token = res.body.tokens.refreshToken;
      }
      // Keyed by user: a new IP does not help.
      expectRateLimited(await post(`${AUTH}/refresh`, subnet(3), { refreshToken: token }), 4, 60);
      // Bob shares the IP, not the counter.
      const bobs = await post(`${AUTH}/refresh`, subnet(2), { refreshToken: bob.refreshToken });
      expect(bobs.status).toBe(200);
      expectLimitHeaders(bobs, 4, 3, 60);

      t.clock.advance(60);
      // The token refused with 429 was never presented to the rotation: it still works.
      const after = await post(`${AUTH}/refresh`, subnet(2), { refreshToken: token });
      expect(after.status).toBe(200);
    });

    it('counts unknown tokens against the client IP, without touching the users behind that IP', async () => {
      const carol = await signedIn(subnet(4));
      const attacker = subnet(5);
      for (let i = 0; i < 4; i++) {
        const res = await post(`${AUTH}/refresh`, attacker, { refreshToken: `unknown-token-${i}-${'x'.repeat(40)}` });
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('INVALID_TOKEN');
      }
      expectRateLimited(await post(`${AUTH}/refresh`, attacker, { refreshToken: `unknown-token-9-${'x'.repeat(40)}` }), 4, 60);
      expect((await post(`${AUTH}/refresh`, attacker, { refreshToken: carol.refreshToken })).status).toBe(200);
    });

    it('looks the refresh token up once per request: the limiter and the rotation share the lookup', async () => {
      const dave = await signedIn(subnet(6));
      const repository = t.app.get(RefreshTokenRepository);
      const lookups = jest.spyOn(repository, 'findWithSession');
      try {
        const res = await post(`${AUTH}/refresh`, subnet(6), { refreshToken: dave.refreshToken });
        expect(res.status).toBe(200);
        expect(lookups).toHaveBeenCalledTimes(1);
      } finally {
        lookups.mockRestore();
      }
    });
  });

  describe('POST /mfa/verify — 3 per 60 s by the user behind the mfaToken', () => {
    async function mfaUser() {
      const user = await signedIn();
      const setup = await post(`${AUTH}/mfa/totp/setup`, freshIp(), undefined, bearer(user.accessToken));
      expect(setup.status).toBe(200);
      const secret = setup.body.secret as string;
      const code = speakeasy.totp({ secret, encoding: 'base32', time: Math.floor(t.clock.now().getTime() / 1000) });
      const confirm = await post(`${AUTH}/mfa/totp/confirm`, freshIp(), { code }, bearer(user.accessToken));
      expect(confirm.status).toBe(200);
      return { ...user, secret };
    }

    async function mfaToken(email: string): Promise<string> {
      const res = await post(`${AUTH}/login`, freshIp(), { email, password: PASSWORD });
      expect(res.body.requiresMfa).toBe(true);
      return res.body.mfaToken;
    }

    it('limits wrong codes per user across fresh mfaTokens and IPs, spares other users, and resets after the window', async () => {
      const erin = await mfaUser();
      const frank = await mfaUser();
      const ip = freshIp();
      const first = await mfaToken(erin.email);
      for (let i = 0; i < 3; i++) {
        const res = await post(`${AUTH}/mfa/verify`, ip, { mfaToken: first, code: '000000', type: 'totp' });
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('INVALID_MFA_CODE');
        expectLimitHeaders(res, 3, 2 - i, 60);
      }
      expectRateLimited(await post(`${AUTH}/mfa/verify`, ip, { mfaToken: first, code: '000000', type: 'totp' }), 3, 60);
      // A fresh password login does not buy new guesses (keyed by the user, not the mfaToken or the IP).
      const second = await mfaToken(erin.email);
      expectRateLimited(await post(`${AUTH}/mfa/verify`, freshIp(), { mfaToken: second, code: '000000', type: 'totp' }), 3, 60);
      // Frank, on the same IP, is unaffected.
      const franks = await post(`${AUTH}/mfa/verify`, ip, { mfaToken: await mfaToken(frank.email), code: '000000', type: 'totp' });
      expect(franks.status).toBe(401);
      expectLimitHeaders(franks, 3, 2, 60);

      t.clock.advance(60);
      const code = speakeasy.totp({ secret: erin.secret, encoding: 'base32', time: Math.floor(t.clock.now().getTime() / 1000) });
      const after = await post(`${AUTH}/mfa/verify`, ip, { mfaToken: second, code, type: 'totp' });
      expect(after.status).toBe(200);
      expect(after.body.tokens.accessToken).toEqual(expect.any(String));
    });

    it('counts unknown mfaTokens against the client IP', async () => {
      const ip = freshIp();
      for (let i = 0; i < 3; i++) {
        const res = await post(`${AUTH}/mfa/verify`, ip, { mfaToken: `no-such-token-${i}`, code: '123456', type: 'totp' });
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('INVALID_TOKEN');
      }
      expectRateLimited(await post(`${AUTH}/mfa/verify`, ip, { mfaToken: 'no-such-token-9', code: '123456', type: 'totp' }), 3, 60);
      expect((await post(`${AUTH}/mfa/verify`, freshIp(), { mfaToken: 'no-such-token-9', code: '123456', type: 'totp' })).status).toBe(401);
    });
  });

  describe('POST /password/forgot and /verify-email/resend — 2 per 3600 s by client IP, shared', () => {
    it('counts both routes together, queues nothing for a refused request, spares other IPs and resets', async () => {
      const user = await registerFrom();
      const ip = freshIp();
      const outbox = async () =>
        Number((await t.dataSource.query(`SELECT count(*) AS n FROM email_outbox WHERE recipient = $1`, [user.email]))[0].n);
      const forgot = await post(`${AUTH}/password/forgot`, ip, { email: user.email });
      expect(forgot.status).toBe(202);
      expectLimitHeaders(forgot, 2, 1, 3600);
      const resend = await post(`${AUTH}/verify-email/resend`, ip, { email: user.email });
      expect(resend.status).toBe(202);
      expectLimitHeaders(resend, 2, 0, 3600);
      // Forgot and resend answer before their work is done (no timing oracle): wait for it.
      await t.app.get(DeferredWork).settled();
      const queued = await outbox();
      expect(queued).toBe(3);
      expectRateLimited(await post(`${AUTH}/password/forgot`, ip, { email: user.email }), 2, 3600);
      expectRateLimited(await post(`${AUTH}/verify-email/resend`, ip, { email: uniqueEmail('nobody') }), 2, 3600);
      await t.app.get(DeferredWork).settled();
      expect(await outbox()).toBe(queued);

      expect((await post(`${AUTH}/password/forgot`, freshIp(), { email: user.email })).status).toBe(202);

      t.clock.advance(3600);
      expect((await post(`${AUTH}/password/forgot`, ip, { email: user.email })).status).toBe(202);
    });
  });

  describe('everything else — 5 per 60 s by user when authenticated, else by client IP', () => {
    it('limits an authenticated user across IPs and routes, not another user on the same IP', async () => {
      const gina = await signedIn();
      const hank = await signedIn();
      const ip = freshIp();
      for (let i = 0; i < 5; i++) {
        const res = await get(i % 2 ? `${AUTH}/me` : `${AUTH}/sessions`, ip, bearer(gina.accessToken));
        expect(res.status).toBe(200);
        expectLimitHeaders(res, 5, 4 - i, 60);
      }
      expectRateLimited(await get(`${AUTH}/me`, freshIp(), bearer(gina.accessToken)), 5, 60);
      const hanks = await get(`${AUTH}/me`, ip, bearer(hank.accessToken));
      expect(hanks.status).toBe(200);
      expectLimitHeaders(hanks, 5, 4, 60);

      t.clock.advance(60);
      expect((await get(`${AUTH}/me`, ip, bearer(gina.accessToken))).status).toBe(200);
    });

    it('limits anonymous requests by client IP', async () => {
      const ip = freshIp();
      for (let i = 0; i < 5; i++) {
        const res = await post(`${AUTH}/logout`, ip, { refreshToken: `not-a-token-${i}-${'y'.repeat(40)}` });
        expect(res.status).toBe(401);
        expectLimitHeaders(res, 5, 4 - i, 60);
      }
      expectRateLimited(await post(`${AUTH}/logout`, ip, { refreshToken: `not-a-token-9-${'y'.repeat(40)}` }), 5, 60);
      expect((await get('/.well-known/jwks.json', ip)).status).toBe(429);
      expect((await get('/.well-known/jwks.json', freshIp())).status).toBe(200);

      t.clock.advance(60);
      expect((await get('/.well-known/jwks.json', ip)).status).toBe(200);
    });
  });
});

describe('rate limits behind a trusted proxy (TRUST_PROXY=loopback)', () => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { ...LIMITS, REDIS_URL: '', TRUST_PROXY: 'loopback' } });
    base = await listenOnLoopback(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  const attempt = (xff: string) =>
    send(base, 'POST', `${AUTH}/login`, {
      from: '127.0.0.1',
      body: { email: 'nobody@example.com', password: 'wrong password 123' },
      headers: { 'x-forwarded-for': xff },
    });

  it('keys on the right-most untrusted X-Forwarded-For address: clients behind the proxy are told apart, and prepending addresses does not escape the limit', async () => {
    expect((await attempt('203.0.113.7')).status).toBe(401);
    expect((await attempt('198.51.100.1, 203.0.113.7')).status).toBe(401);
    expect((await attempt('198.51.100.2, 203.0.113.7')).status).toBe(401);
    expectRateLimited(await attempt('198.51.100.3, 203.0.113.7'), 3, 900);
    // A different client behind the same proxy has its own counter.
    expect((await attempt('203.0.113.8')).status).toBe(401);
  });
});
