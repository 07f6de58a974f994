import { DeferredWork } from '../../src/adapters/http/deferred-work';
import { OutboxDispatcher } from '../../src/adapters/mail/outbox-dispatcher';
import { createTestApp, TestApp } from '../support/test-app';
import { bearer, login, PASSWORD, register, signedInUser, uniqueEmail } from '../support/flows';
import { freshIp, listenOnLoopback, send } from '../support/http-client';
import { code, mfaToken, midStep, nextStep, userWithTotp, verify } from '../support/mfa';
import { SmtpSink } from '../support/smtp-sink';

const registerWith = (t: TestApp, password: string, email = uniqueEmail()) =>
  t.api().post('/api/v1/auth/register').send({ email, password, name: 'Pat Tester' });

describe('PW / AUTH — passwords, registration and login (SECURITY.md)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('PW-01 enforces 8–128 code points before hashing; 2 MB is refused fast (contract: 8, not 12)', async () => {
    expect((await registerWith(t, 'abcdefg')).status).toBe(400);
    for (const ok of ['Tr0ub4dor&3x!', '🔑'.repeat(12), 'q'.repeat(63) + 'w', 'q'.repeat(127) + 'w']) {
      expect((await registerWith(t, ok)).status).toBe(201);
    }
    const long = await registerWith(t, 'q'.repeat(128) + 'w');
    expect(long.status).toBe(400);
    expect(long.body.error.details[0]).toEqual({ field: 'password', message: 'must be at most 128 characters' });
    const started = Date.now();
    const huge = await registerWith(t, 'z'.repeat(2 * 1024 * 1024));
    expect(huge.status).toBe(413);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('PW-02 has no composition rules and normalises with NFKC (café precomposed vs decomposed)', async () => {
    expect((await registerWith(t, 'correct horse battery staple')).status).toBe(201);
    const email = uniqueEmail();
    expect((await registerWith(t, 'caf\u00e9 terrasse soleil', email)).status).toBe(201);
    expect((await login(t, email, 'cafe\u0301 terrasse soleil')).status).toBe(200);
  });

  it('PW-03 verifies exactly what was sent: no truncation at 72 bytes (ASCII and emoji)', async () => {
    const ascii = 'a'.repeat(72);
    const e1 = uniqueEmail();
    await register(t, e1, `${ascii}AAAA`);
    expect((await login(t, e1, `${ascii}BBBB`)).status).toBe(401);
    const emoji = '😀'.repeat(18);
    const e2 = uniqueEmail();
    await register(t, e2, emoji + '😀'.repeat(6));
    expect((await login(t, e2, emoji + '😃'.repeat(6))).status).toBe(401);
    expect((await login(t, e2, emoji + '😀'.repeat(6))).status).toBe(200);
  });

  it('PW-04 refuses common and context passwords with a reason', async () => {
    for (const [password, email] of [
      ['password1234', uniqueEmail()],
      ['qwertyuiop123', uniqueEmail()],
      ['123456789012', uniqueEmail()],
      ['alice.smith2024', 'alice.smith@example.com'],
    ]) {
      const res = await registerWith(t, password, email);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details[0].field).toBe('password');
      expect(res.body.error.details[0].message).toMatch(/common|based on/);
    }
  });

  it('PW-06 stores bcrypt hashes with cost ≥ 10 in production settings and never returns them', async () => {
    const strong = await createTestApp({ env: { BCRYPT_COST: '10' } });
    try {
      const user = await register(strong);
      const [row] = await strong.dataSource.query(`SELECT password_hash FROM users WHERE id = $1`, [user.id]);
      expect(row.password_hash).toMatch(/^\$2[aby]\$1[0-9]\$/);
      const res = await login(strong, user.email);
      expect(JSON.stringify(res.body)).not.toContain(row.password_hash);
      const me = await strong.api().get('/api/v1/auth/me').set('Authorization', `Bearer ${res.body.tokens.accessToken}`);
      expect(JSON.stringify(me.body)).not.toContain('$2');
    } finally {
      await strong.close();
    }
  });

  it('AUTH-01 answers unknown email and wrong password alike, in about the same time (real bcrypt cost)', async () => {
    // Dozens of wrong passwords for one account: the lockout (AUTH-02, where a locked account answers 423) is set out of reach.
    const timed = await createTestApp({ env: { BCRYPT_COST: '12', LOCKOUT_MAX_FAILURES: '1000' } });
    try {
      const user = await register(timed);
      const measure = async (email: string) => {
        const started = process.hrtime.bigint();
        const res = await login(timed, email, 'definitely wrong password');
        return { ms: Number(process.hrtime.bigint() - started) / 1e6, body: res.body, status: res.status };
      };
      await measure(user.email);
      // Pairs measured back to back, in alternating order, so that a burst of load from other
      // test files weighs on both sides of a pair alike; the median difference of the pairs is
      // compared with the cost of one comparison.
      const known: number[] = [];
      const gaps: number[] = [];
      for (let i = 0; i < 15; i++) {
        const ghost = uniqueEmail('ghost');
        const [a, b] = i % 2 === 0 ? [await measure(user.email), await measure(ghost)] : [null, await measure(ghost)];
        const first = a ?? (await measure(user.email));
        expect(first.status).toBe(401);
        expect(b.body).toEqual(first.body);
        known.push(first.ms);
        gaps.push(Math.abs(first.ms - b.ms));
      }
      const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
      // Without the dummy comparison an unknown email would answer a whole bcrypt comparison
      // (~180 ms at cost 12, more on a loaded machine) sooner: a gap near median(known), 100 %.
      // With it, scheduling noise on a machine busy with other test files and processes has been
      // seen at up to 26 %; half of a comparison keeps the two cases far apart.
      expect(median(gaps)).toBeLessThan(Math.max(30, 0.5 * median(known)));
    } finally {
      await timed.close();
    }
  });

  it('AUTH-03 creates a new session and new tokens on every authentication', async () => {
    const user = await signedInUser(t);
    const again = await login(t, user.email, PASSWORD);
    const sid = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid;
    const jti = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).jti;
    expect(sid(again.body.tokens.accessToken)).not.toBe(sid(user.accessToken));
    expect(jti(again.body.tokens.accessToken)).not.toBe(jti(user.accessToken));
    expect(again.body.tokens.refreshToken).not.toBe(user.refreshToken);
  });
});

describe('PW-05 — changing the password', () => {
  let sink: SmtpSink;
  let t: TestApp;
  beforeAll(async () => {
    sink = await SmtpSink.start();
    t = await createTestApp({ env: { SMTP_URL: sink.url } });
  });
  afterAll(async () => {
    await t?.close();
    await sink?.stop();
  });

  const change = (token: string, body: Record<string, unknown>) =>
    t
      .api()
      .post('/api/v1/auth/password/change')
      .set(...bearer(token))
      .send(body);

  it('PW-05 needs the current password, re-applies the policy, mails the owner and logs out the other devices', async () => {
    const laptop = await signedInUser(t);
    const phone = (await login(t, laptop.email)).body.tokens as { accessToken: string; refreshToken: string };

    const wrong = await change(laptop.accessToken, { currentPassword: 'not my password at all', newPassword: 'a fresh passphrase 2026' });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    for (const weak of ['password1234', 'short', laptop.email]) {
      const res = await change(laptop.accessToken, { currentPassword: PASSWORD, newPassword: weak });
      expect([res.status, res.body.error.code, res.body.error.details[0].field]).toEqual([400, 'VALIDATION_FAILED', 'newPassword']);
    }
    const unauthenticated = await t
      .api()
      .post('/api/v1/auth/password/change')
      .send({ currentPassword: PASSWORD, newPassword: 'a fresh passphrase 2026' });
    expect(unauthenticated.status).toBe(401);

    const ok = await change(laptop.accessToken, { currentPassword: PASSWORD, newPassword: 'a fresh passphrase 2026' });
    expect([ok.status, ok.body]).toEqual([200, { success: true }]);
    // The other device is logged out (the contract always does it); this one carries on.
    expect((await t.api().post('/api/v1/auth/refresh').send({ refreshToken: phone.refreshToken })).status).toBe(401);
    expect(
      (
        await t
          .api()
          .get('/api/v1/auth/me')
          .set(...bearer(phone.accessToken))
      ).status,
    ).toBe(401);
    expect(
      (
        await t
          .api()
          .get('/api/v1/auth/me')
          .set(...bearer(laptop.accessToken))
      ).status,
    ).toBe(200);
    expect((await t.api().post('/api/v1/auth/refresh').send({ refreshToken: laptop.refreshToken })).status).toBe(200);
    // The old password no longer works, the new one does.
    expect((await login(t, laptop.email, PASSWORD)).status).toBe(401);
    expect((await login(t, laptop.email, 'a fresh passphrase 2026')).status).toBe(200);

    await t.app.get(DeferredWork).settled();
    await t.app.get(OutboxDispatcher).dispatchDue();
    const mails = await sink.waitFor(laptop.email, 2);
    const notice = mails.find((m) => m.subject.startsWith('Your password was changed'));
    expect(notice).toBeDefined();
    expect(notice!.text).not.toContain('a fresh passphrase 2026');
  });
});

describe('AUTH-02 — per-account failed-attempt limit', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp({ env: { REDIS_URL: '' } });
    base = await listenOnLoopback(t);
  });
  afterAll(() => t?.close());

  const attempt = (email: string, password: string) =>
    send(base, 'POST', '/api/v1/auth/login', { from: freshIp(), body: { email, password } });

  it('AUTH-02 locks after 10 wrong passwords from rotating addresses (423 + Retry-After, right password refused too); lifts after 900 s', async () => {
    const user = await register(t);
    for (let i = 0; i < 10; i++) expect((await attempt(user.email, `wrong guess ${i}`)).status).toBe(401);
    const locked = await attempt(user.email, PASSWORD);
    expect(locked.body).toEqual({ error: { code: 'ACCOUNT_LOCKED', message: expect.any(String), status: 423 } });
    expect(locked.status).toBe(423);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(900);
    const [lockedEvent] = await t.dataSource.query(`SELECT details FROM audit_events WHERE user_id = $1 AND type = 'user.locked'`, [
      user.id,
    ]);
    expect(lockedEvent.details).toMatchObject({ failures: 10 });
    // During the lock a wrong password gets the same 423 as the right one: no guessing through the lock.
    const wrongWhileLocked = await attempt(user.email, 'yet another guess');
    expect([wrongWhileLocked.status, wrongWhileLocked.body]).toEqual([423, locked.body]);
    t.clock.advance(901);
    expect((await attempt(user.email, PASSWORD)).status).toBe(200);
  });

  it('AUTH-02 holds under a burst: of 25 parallel wrong passwords exactly 10 get 401, the rest 423', async () => {
    const user = await register(t);
    const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => attempt(user.email, `parallel guess ${i}`)));
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses).toEqual([...Array(10).fill(401), ...Array(15).fill(423)]);
    for (const res of answers.filter((r) => r.status === 423)) expect(res.body.error.code).toBe('ACCOUNT_LOCKED');
    const [row] = await t.dataSource.query(`SELECT status, failed_login_count FROM users WHERE id = $1`, [user.id]);
    expect(row).toEqual({ status: 'locked', failed_login_count: 10 });
    expect((await attempt(user.email, PASSWORD)).status).toBe(423);
  });

  it('AUTH-02 a stolen access token cannot guess through the lock: password change and factor removal answer 423 to every password', async () => {
    const owner = await userWithTotp(t);
    const token = owner.accessToken;
    for (let i = 0; i < 10; i++) expect((await attempt(owner.email, `wrong guess ${i}`)).status).toBe(401);
    const change = (currentPassword: string) =>
      t
        .api()
        .post('/api/v1/auth/password/change')
        .set(...bearer(token))
        .send({ currentPassword, newPassword: 'a fresh passphrase 2026' });
    const removeTotp = (password: string) =>
      t
        .api()
        .delete('/api/v1/auth/mfa/totp')
        .set(...bearer(token))
        .send({ password });
    for (const res of [
      await change('not the password'),
      await change(PASSWORD),
      await removeTotp('not the password'),
      await removeTotp(PASSWORD),
    ]) {
      expect([res.status, res.body.error?.code]).toEqual([423, 'ACCOUNT_LOCKED']);
    }
    const [row] = await t.dataSource.query(`SELECT status, failed_login_count FROM users WHERE id = $1`, [owner.id]);
    expect(row).toEqual({ status: 'locked', failed_login_count: 10 });
    const refusals = await t.dataSource.query(
      `SELECT details->>'passwordMatched' AS matched FROM audit_events
        WHERE user_id = $1 AND type = 'login.failed' AND details->>'reason' = 'locked' AND session_id IS NOT NULL`,
      [owner.id],
    );
    expect(refusals.map((r: { matched: string }) => r.matched).sort()).toEqual(['false', 'false', 'true', 'true']);
    t.clock.advance(901);
    expect((await attempt(owner.email, PASSWORD)).body.requiresMfa).toBe(true); // the password did not change, TOTP is still on
  });

  it('AUTH-02 counts consecutive failures: a successful login resets the counter', async () => {
    const user = await register(t);
    for (let i = 0; i < 9; i++) expect((await attempt(user.email, `wrong ${i}`)).status).toBe(401);
    expect((await attempt(user.email, PASSWORD)).status).toBe(200);
    for (let i = 0; i < 9; i++) expect((await attempt(user.email, `wrong again ${i}`)).status).toBe(401);
    expect((await attempt(user.email, PASSWORD)).status).toBe(200);
  });
});

describe('AUTH-04 — the MFA challenge token', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('AUTH-04 password alone yields only a short-lived, single-use mfaToken bound to user and realm, dead after 5 wrong codes', async () => {
    const user = await userWithTotp(t);
    const first = await login(t, user.email);
    expect(first.body).toEqual({
      user: { id: user.id, email: user.email, emailVerified: false, mfaEnabled: true },
      tokens: null,
      requiresMfa: true,
      mfaToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      mfaMethods: ['totp'],
    });
    const token = first.body.mfaToken as string;
    // Not an access token, not a refresh token.
    const asBearer = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(token));
    expect([asBearer.status, asBearer.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const asRefresh = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: token });
    expect([asRefresh.status, asRefresh.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    // Bound to its realm.
    const elsewhere = await t
      .api()
      .post('/api/v1/auth/mfa/verify')
      .set('X-Realm-Id', 'master')
      .send({ mfaToken: token, type: 'totp', code: code(t, user.secret) });
    expect([elsewhere.status, elsewhere.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    // Single use.
    expect((await verify(t, { mfaToken: token, type: 'totp', code: code(t, user.secret) })).status).toBe(200);
    nextStep(t);
    const reused = await verify(t, { mfaToken: token, type: 'totp', code: code(t, user.secret) });
    expect([reused.status, reused.body.error.code]).toEqual([401, 'INVALID_TOKEN']);

    // At most 5 minutes.
    const slow = await mfaToken(t, user.email);
    t.clock.advance(301);
    const expired = await verify(t, { mfaToken: slow, type: 'totp', code: code(t, user.secret) });
    expect([expired.status, expired.body.error.code]).toEqual([401, 'TOKEN_EXPIRED']);

    // Five wrong codes kill the challenge: the right code is refused afterwards.
    midStep(t);
    const guessed = await mfaToken(t, user.email);
    const right = code(t, user.secret);
    const wrong = right === '000000' ? '000001' : '000000';
    for (let i = 0; i < 5; i++)
      expect((await verify(t, { mfaToken: guessed, type: 'totp', code: wrong })).body.error.code).toBe('INVALID_MFA_CODE');
    const dead = await verify(t, { mfaToken: guessed, type: 'totp', code: right });
    expect([dead.status, dead.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    // Stored only as a hash.
    const rows: { token_hash: string }[] = await t.dataSource.query(
      `SELECT token_hash FROM one_time_tokens WHERE kind = 'mfa' AND user_id = $1`,
      [user.id],
    );
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(rows.map((r) => r.token_hash)).not.toContain(guessed);
  });
});
