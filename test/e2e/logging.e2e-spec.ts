import { Writable } from 'node:stream';
import { LOG_DESTINATION } from '../../src/adapters/http/logging/logging.module';
import { createTestApp, TestApp } from '../support/test-app';
import { bearer, uniqueEmail } from '../support/flows';

/** Collects every log line the app writes. */
class CapturedLogs extends Writable {
  readonly chunks: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.chunks.push(chunk.toString('utf8'));
    done();
  }
  get text(): string {
    return this.chunks.join('');
  }
  lines(): Record<string, unknown>[] {
    return this.text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

/** Pieces of a secret long enough to be unambiguous: the whole, and 16-character windows of it. */
function fragments(secret: string): string[] {
  const out = [secret];
  for (let i = 0; i + 16 <= secret.length; i += 8) out.push(secret.slice(i, i + 16));
  return out;
}

describe('structured logs (contract §1, SECURITY LOG-01)', () => {
  let t: TestApp;
  const logs = new CapturedLogs();

  beforeAll(async () => {
    t = await createTestApp({
      env: { LOG_LEVEL: 'trace' },
      override: (builder) => builder.overrideProvider(LOG_DESTINATION).useValue(logs),
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('never logs a password, token or verification secret during a full flow, and logs every request id', async () => {
    const email = uniqueEmail('logs');
    const password = `Log-secret ${Math.random().toString(36).slice(2)} pass`;
    const wrongPassword = `Wrong-guess ${Math.random().toString(36).slice(2)} pass`;
    const requestIds: string[] = [];
    const track = <R extends { headers: Record<string, string> }>(res: R): R => {
      requestIds.push(res.headers['x-request-id']);
      return res;
    };

    const registered = track(await t.api().post('/api/v1/auth/register').send({ email, password, name: 'Log Tester' }));
    expect(registered.status).toBe(201);
    const [mail] = await t.dataSource.query(`SELECT text_body FROM email_outbox WHERE recipient = $1`, [email]);
    const verificationToken = /token=([A-Za-z0-9_-]+)/.exec(mail.text_body as string)![1];
    const verified = track(await t.api().post('/api/v1/auth/verify-email').send({ token: verificationToken }));
    expect([200, 404]).toContain(verified.status); // 404 until the email endpoints exist

    const failed = track(await t.api().post('/api/v1/auth/login').send({ email, password: wrongPassword }));
    expect(failed.status).toBe(401);
    const fingerprint = JSON.stringify({ canvas: `canvas-${Math.random().toString(36).slice(2)}-hash`, screen: '1920x1080' });
    const signedIn = track(
      await t
        .api()
        .post('/api/v1/auth/login')
        .set('X-Request-Id', 'client-chosen-id-123')
        .send({ email, password, deviceFingerprint: fingerprint }),
    );
    expect(signedIn.status).toBe(200);
    const { accessToken, refreshToken } = signedIn.body.tokens as { accessToken: string; refreshToken: string };

    const refreshed = track(await t.api().post('/api/v1/auth/refresh').send({ refreshToken, deviceFingerprint: fingerprint }));
    expect(refreshed.status).toBe(200);
    const next = refreshed.body.tokens as { accessToken: string; refreshToken: string };

    const me = track(
      await t
        .api()
        .get(`/api/v1/auth/me?access_token=${next.accessToken}`)
        .set(...bearer(next.accessToken))
        .set('Cookie', `refresh=${next.refreshToken}`),
    );
    expect(me.status).toBe(200);
    const badBearer = track(
      await t
        .api()
        .get('/api/v1/auth/me')
        .set(...bearer(`${accessToken}x`)),
    );
    expect(badBearer.status).toBe(401);
    const unsupported = track(await t.api().post('/api/v1/auth/login').set('Content-Type', 'text/plain').send(`password=${password}`));
    expect(unsupported.status).toBe(415);
    const loggedOut = track(await t.api().post('/api/v1/auth/logout').send({ refreshToken: next.refreshToken }));
    expect(loggedOut.status).toBe(200);
    const afterLogout = track(await t.api().post('/api/v1/auth/refresh').send({ refreshToken: next.refreshToken }));
    expect(afterLogout.status).toBe(401);

    // Give the last "finish" handlers a tick to write.
    await new Promise((resolve) => setImmediate(resolve));
    const text = logs.text;
    const [hashRow] = await t.dataSource.query(`SELECT password_hash FROM users WHERE email = $1`, [email]);
    const secrets: Record<string, string> = {
      password,
      wrongPassword,
      verificationToken,
      accessToken,
      refreshToken,
      rotatedAccessToken: next.accessToken,
      rotatedRefreshToken: next.refreshToken,
      passwordHash: hashRow.password_hash as string,
      fingerprintCanvas: JSON.parse(fingerprint).canvas,
    };
    const leaks = Object.entries(secrets).flatMap(([name, secret]) =>
      fragments(secret)
        .filter((piece) => text.includes(piece))
        .map(() => name),
    );
    expect([...new Set(leaks)]).toEqual([]);

    const lines = logs.lines();
    expect(lines.length).toBeGreaterThanOrEqual(requestIds.length);
    const logged = new Set(lines.map((line) => line.requestId));
    expect(requestIds.filter((id) => !logged.has(id))).toEqual([]);
    expect(requestIds).toContain('client-chosen-id-123');
  });

  it('writes one JSON access-log line per request with request id, realm, route, status and duration', async () => {
    logs.chunks.length = 0;
    const res = await t
      .api()
      .post('/api/v1/auth/login')
      .set('X-Realm-Id', 'default')
      .send({ email: uniqueEmail('nobody'), password: 'whatever it is' });
    expect(res.status).toBe(401);
    await new Promise((resolve) => setImmediate(resolve));
    const entries = logs.lines().filter((line) => line.requestId === res.headers['x-request-id'] && line.msg === 'request completed');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      level: 'info',
      service: 'identity-service',
      requestId: res.headers['x-request-id'],
      realm: 'default',
      route: '/api/v1/auth/login',
      req: { method: 'POST', path: '/api/v1/auth/login', ip: expect.any(String) },
      res: { statusCode: 401 },
      durationMs: expect.any(Number),
      time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect(JSON.stringify(entries[0])).not.toMatch(/headers|body/);
  });
});
