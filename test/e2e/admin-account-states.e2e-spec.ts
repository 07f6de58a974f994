import { ADMIN_ENV, adminApi, SignedIn, storedEvents, superAdmin } from '../support/admin-flows';
import { bearer, login, PASSWORD, register } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';

// Booting the app on a fresh database takes seconds on a busy machine.
jest.setTimeout(120_000);

const WRONG = 'definitely the wrong password';

function errorOf(res: { status: number; body: { error?: { code: string } } }) {
  return [res.status, res.body.error?.code];
}

async function failLogins(t: TestApp, email: string, n: number) {
  for (let i = 0; i < n; i += 1) expect(errorOf(await login(t, email, WRONG))).toEqual([401, 'INVALID_CREDENTIALS']);
}

async function userRow(t: TestApp, id: string) {
  const rows: { status: string; failed_login_count: number; locked_until: Date | null }[] = await t.dataSource.query(
    `SELECT status, failed_login_count, locked_until FROM users WHERE id = $1`,
    [id],
  );
  return rows[0];
}

describe('lockout with the defaults: 10 wrong passwords, 900 seconds', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    expect(t.config.lockoutMaxFailures).toBe(10);
    expect(t.config.lockoutDurationSeconds).toBe(900);
  });
  afterAll(async () => {
    await t.close();
  });

  it('locks at the 10th consecutive wrong password; the right one then gets 423 with Retry-After; the lock lifts after 900 s', async () => {
    const user = await register(t);
    await failLogins(t, user.email, 9);
    expect((await userRow(t, user.id)).status).toBe('active');
    await failLogins(t, user.email, 1);
    expect(await userRow(t, user.id)).toMatchObject({ status: 'locked', failed_login_count: 10 });

    const refused = await login(t, user.email, PASSWORD);
    expect(refused.status).toBe(423);
    expect(refused.body).toEqual({ error: { code: 'ACCOUNT_LOCKED', message: expect.any(String), status: 423 } });
    expect(refused.headers['retry-after']).toBe('900');
    expect(refused.body.tokens).toBeUndefined();

    t.clock.advance(300);
    expect((await login(t, user.email, PASSWORD)).headers['retry-after']).toBe('600');
    t.clock.advance(599);
    expect(errorOf(await login(t, user.email, PASSWORD))).toEqual([423, 'ACCOUNT_LOCKED']);
    t.clock.advance(1);
    const after = await login(t, user.email, PASSWORD);
    expect(after.status).toBe(200);
    expect(await userRow(t, user.id)).toMatchObject({ status: 'active', failed_login_count: 0, locked_until: null });

    const locked = await storedEvents(t, 'default', { userId: user.id, type: 'user.locked' });
    expect(locked).toEqual([expect.objectContaining({ details: { failures: 10, durationSeconds: 900 } })]);
  });

  it('counts only consecutive failures: a successful login resets the counter', async () => {
    const user = await register(t);
    await failLogins(t, user.email, 9);
    expect((await login(t, user.email, PASSWORD)).status).toBe(200);
    await failLogins(t, user.email, 9);
    expect((await login(t, user.email, PASSWORD)).status).toBe(200);
    expect((await userRow(t, user.id)).failed_login_count).toBe(0);
  });

  it('starts counting from zero once a lock has run out', async () => {
    const user = await register(t);
    await failLogins(t, user.email, 10);
    t.clock.advance(901);
    await failLogins(t, user.email, 1);
    expect(await userRow(t, user.id)).toMatchObject({ status: 'active', failed_login_count: 1 });
    expect((await login(t, user.email, PASSWORD)).status).toBe(200);
  });

  it('counts 20 parallel wrong passwords exactly: the 10th locks, the 10 after it count nothing, one user.locked', async () => {
    const user = await register(t);
    const results = await Promise.all(Array.from({ length: 20 }, () => login(t, user.email, WRONG)));
    // A request that read the account after the lock got 423 like every other password then (no guessing through a lock).
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(10);
    expect(statuses.filter((s) => s !== 401 && s !== 423)).toEqual([]);
    expect(await userRow(t, user.id)).toMatchObject({ status: 'locked', failed_login_count: 10 });
    const failed = await storedEvents(t, 'default', { userId: user.id, type: 'login.failed' });
    expect(failed).toHaveLength(20);
    const counted = failed
      .map((e) => e.details.failures)
      .filter((f) => f !== null)
      .sort((a, b) => Number(a) - Number(b));
    // Each failure got its own number from the single UPDATE … RETURNING: no two saw the same count.
    expect(counted).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await storedEvents(t, 'default', { userId: user.id, type: 'user.locked' })).toHaveLength(1);
    expect(errorOf(await login(t, user.email, PASSWORD))).toEqual([423, 'ACCOUNT_LOCKED']);
  });
});

describe('lockout until unlocked: LOCKOUT_MAX_FAILURES=3, LOCKOUT_DURATION_SECONDS=0', () => {
  let t: TestApp;
  let admin: SignedIn;
  beforeAll(async () => {
    t = await createTestApp({ env: { ...ADMIN_ENV, LOCKOUT_MAX_FAILURES: '3', LOCKOUT_DURATION_SECONDS: '0' } });
  });
  // Each test moves the clock; the admin signs in afresh so its token is current.
  beforeEach(async () => {
    admin = await superAdmin(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('locks at the 3rd wrong password with no Retry-After, stays locked however long, and lifts at admin unlock', async () => {
    const user = await register(t);
    await failLogins(t, user.email, 3);
    const refused = await login(t, user.email, PASSWORD);
    expect(errorOf(refused)).toEqual([423, 'ACCOUNT_LOCKED']);
    expect(refused.headers['retry-after']).toBeUndefined();
    t.clock.advance(30 * 24 * 3600);
    expect(errorOf(await login(t, user.email, PASSWORD))).toEqual([423, 'ACCOUNT_LOCKED']);
    admin = await superAdmin(t);
    expect((await adminApi(t, admin.accessToken, 'default').get(`/users/${user.id}`)).body.user.status).toBe('locked');

    const unlocked = await adminApi(t, admin.accessToken, 'default').post(`/users/${user.id}/unlock`);
    expect(unlocked.status).toBe(200);
    expect(unlocked.body.user.status).toBe('active');
    expect((await login(t, user.email, PASSWORD)).status).toBe(200);
    // The counter restarted: two more failures do not lock.
    await failLogins(t, user.email, 2);
    expect((await login(t, user.email, PASSWORD)).status).toBe(200);
    expect(await storedEvents(t, 'default', { userId: user.id, type: 'user.unlocked' })).toEqual([
      expect.objectContaining({ actor_id: admin.id }),
    ]);
  });

  it('keeps a suspended user out: login 403 ACCOUNT_SUSPENDED, refresh and access tokens refused; activate lets it back in', async () => {
    const user = await register(t);
    const first = await login(t, user.email);
    const second = await login(t, user.email);
    const api = adminApi(t, admin.accessToken, 'default');
    expect((await api.post(`/users/${user.id}/suspend`).send({ reason: 'test' })).status).toBe(200);
    expect(errorOf(await login(t, user.email, PASSWORD))).toEqual([403, 'ACCOUNT_SUSPENDED']);
    expect(errorOf(await login(t, user.email, WRONG))).toEqual([401, 'INVALID_CREDENTIALS']);
    for (const res of [first, second]) {
      expect(errorOf(await t.api().post('/api/v1/auth/refresh').send({ refreshToken: res.body.tokens.refreshToken }))).toEqual([
        401,
        'INVALID_TOKEN',
      ]);
      expect(
        errorOf(
          await t
            .api()
            .get('/api/v1/auth/me')
            .set(...bearer(res.body.tokens.accessToken)),
        ),
      ).toEqual([401, 'INVALID_TOKEN']);
    }
    // A suspended account's wrong passwords do not count towards a lock.
    expect((await userRow(t, user.id)).failed_login_count).toBe(0);
    expect((await api.post(`/users/${user.id}/activate`)).status).toBe(200);
    expect((await login(t, user.email, PASSWORD)).status).toBe(200);
    // The old tokens stay dead after reactivation.
    expect(errorOf(await t.api().post('/api/v1/auth/refresh').send({ refreshToken: first.body.tokens.refreshToken }))).toEqual([
      401,
      'INVALID_TOKEN',
    ]);
  });
});
