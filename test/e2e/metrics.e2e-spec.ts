import { createTestApp, TestApp } from '../support/test-app';
import { bearer, login, PASSWORD, register, signedInUser, uniqueEmail } from '../support/flows';

type Samples = Map<string, number>;

/** Parses the Prometheus text format into `name{label="value",…}` → value. */
function parse(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

async function scrape(t: TestApp): Promise<Samples> {
  const res = await t.api().get('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(res.text);
}

const value = (samples: Samples, key: string) => samples.get(key) ?? 0;

describe('GET /metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is public, ignores X-Realm-Id and answers in the Prometheus text format', async () => {
    const res = await t.api().get('/metrics').set('X-Realm-Id', 'no-such-realm');
    expect(res.status).toBe(200);
    expect(res.text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(res.text).toContain('# TYPE identity_logins_total counter');
    expect(res.text).toContain('# TYPE identity_email_outbox_backlog gauge');
    expect(res.text).toContain('process_cpu_seconds_total');
  });

  it('moves the request, login, refresh, reuse, flag and outbox metrics during a flow', async () => {
    const before = await scrape(t);

    // Logins: one success, one wrong password, one unknown user.
    const user = await signedInUser(t);
    expect((await login(t, user.email, 'not the password at all')).status).toBe(401);
    expect((await login(t, uniqueEmail('ghost'), 'not the password at all')).status).toBe(401);

    // Refresh, then reuse of the rotated token after the leeway → session revoked.
    const refreshed = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken });
    expect(refreshed.status).toBe(200);
    t.clock.advance(t.config.refreshReuseLeewaySeconds + 1);
    const reused = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken });
    expect(reused.status).toBe(401);
    expect(
      (
        await t
          .api()
          .get('/api/v1/auth/me')
          .set(...bearer(user.accessToken))
      ).status,
    ).toBe(401);

    // A session flagged by a fingerprint that no longer matches.
    const other = await register(t);
    const device = {
      ua: 'Mozilla/5.0 A',
      canvas: 'c1',
      webglRenderer: 'r1',
      audio: 'a1',
      fonts: 'f1',
      screen: '1920x1080',
      cores: 8,
      tz: 'Europe/Paris',
    };
    const stranger = {
      ua: 'curl/8',
      canvas: 'zz',
      webglRenderer: 'zz',
      audio: 'zz',
      fonts: 'zz',
      screen: '800x600',
      cores: 2,
      tz: 'Asia/Tokyo',
    };
    const signed = await login(t, other.email, PASSWORD, { deviceFingerprint: JSON.stringify(device) });
    expect(signed.status).toBe(200);
    const flagged = await t
      .api()
      .post('/api/v1/auth/refresh')
      .set('User-Agent', 'curl/8.0')
      .send({ refreshToken: signed.body.tokens.refreshToken, deviceFingerprint: JSON.stringify(stranger) });
    expect(flagged.status).toBe(401);
    expect(['REAUTHENTICATION_REQUIRED', 'MFA_REQUIRED']).toContain(flagged.body.error.code);

    // An unknown route.
    expect((await t.api().get('/api/v1/nowhere')).status).toBe(404);

    const after = await scrape(t);
    const delta = (key: string) => value(after, key) - value(before, key);

    expect(delta('identity_logins_total{outcome="success"}')).toBe(2);
    expect(delta('identity_logins_total{outcome="invalid_credentials"}')).toBe(2);
    expect(delta('identity_token_refreshes_total{outcome="success"}')).toBe(1);
    expect(delta('identity_token_refreshes_total{outcome="invalid_token"}')).toBe(1);
    expect(delta(`identity_token_refreshes_total{outcome="${flagged.body.error.code.toLowerCase()}"}`)).toBe(1);
    expect(delta('identity_refresh_token_reuse_detected_total')).toBe(1);
    expect(delta('identity_sessions_flagged_total')).toBe(1);
    expect(delta('identity_audit_events_total{type="user.registered"}')).toBe(2);
    expect(delta('identity_http_errors_total{code="INVALID_CREDENTIALS"}')).toBe(2);
    expect(delta('http_request_duration_seconds_count{method="POST",route="/api/v1/auth/login",status="200"}')).toBe(2);
    expect(delta('http_request_duration_seconds_count{method="POST",route="/api/v1/auth/login",status="401"}')).toBe(2);
    expect(delta('http_request_duration_seconds_count{method="POST",route="/api/v1/auth/register",status="201"}')).toBe(2);
    expect(delta('http_request_duration_seconds_count{method="GET",route="/api/v1/auth/me",status="401"}')).toBe(1);
    expect(delta('http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(
      value(after, 'http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/api/v1/auth/login",status="200"}'),
    ).toBeGreaterThanOrEqual(2);
    // The dispatcher is off in tests: the registrations' verification emails (and any security
    // notices) wait in the outbox, and the gauge reads exactly what the table holds.
    const [{ pending }] = await t.dataSource.query(`SELECT count(*)::int AS pending FROM email_outbox WHERE status = 'pending'`);
    expect(delta('identity_email_outbox_backlog{status="pending"}')).toBeGreaterThanOrEqual(2);
    expect(value(after, 'identity_email_outbox_backlog{status="pending"}')).toBe(pending);
    expect(value(after, 'identity_email_outbox_oldest_pending_seconds')).toBeGreaterThanOrEqual(0);
    if (t.config.databaseUrl) {
      expect(after.has('db_pool_connections{state="in_use"}')).toBe(true);
      expect(after.has('db_pool_connections{state="idle"}')).toBe(true);
      expect(after.has('db_pool_waiting_requests')).toBe(true);
    }
  });

  it('counts requests answered 429 RATE_LIMITED by route', async () => {
    const limitedApp = await createTestApp({ env: { RATE_LIMIT_LOGIN: '2/900' } });
    try {
      await countsRateLimited(limitedApp);
    } finally {
      await limitedApp.close();
    }
  });
});

async function countsRateLimited(t: TestApp): Promise<void> {
  const before = await scrape(t);
  const email = uniqueEmail('limited');
  const statuses: number[] = [];
  for (let i = 0; i < 5; i += 1) statuses.push((await login(t, email, 'wrong password here')).status);
  const limited = statuses.filter((s) => s === 429).length;
  expect(limited).toBeGreaterThan(0);
  const after = await scrape(t);
  expect(
    value(after, 'identity_rate_limited_requests_total{route="/api/v1/auth/login"}') -
      value(before, 'identity_rate_limited_requests_total{route="/api/v1/auth/login"}'),
  ).toBe(limited);
  expect(
    value(after, 'identity_http_errors_total{code="RATE_LIMITED"}') - value(before, 'identity_http_errors_total{code="RATE_LIMITED"}'),
  ).toBe(limited);
}
