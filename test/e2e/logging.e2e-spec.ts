import { LOG_DESTINATION } from '../../src/adapters/http/logging/logging.module';
import { CapturedLogs, fragments } from '../support/captured-logs';
import { createTestApp, TestApp } from '../support/test-app';
import { bearer, uniqueEmail } from '../support/flows';
import { code, midStep } from '../support/mfa';
import { linkToken, SmtpSink } from '../support/smtp-sink';

describe('structured logs (SECURITY LOG-01)', () => {
  let t: TestApp;
  let sink: SmtpSink;
  const logs = new CapturedLogs();

  beforeAll(async () => {
    // The outbox is delivered for real, over SMTP, while the logs are captured.
    sink = await SmtpSink.start();
    t = await createTestApp({
      env: { LOG_LEVEL: 'trace', SMTP_URL: sink.url, OUTBOX_POLL_INTERVAL_MS: '50' },
      override: (builder) => builder.overrideProvider(LOG_DESTINATION).useValue(logs),
    });
  });
  afterAll(async () => {
    await t?.close();
    await sink?.stop();
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
    const [mail] = await sink.waitFor(email);
    const verificationToken = linkToken(mail, '/verify-email');
    const verified = track(await t.api().post('/api/v1/auth/verify-email').send({ token: verificationToken }));
    expect(verified.status).toBe(200);

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
      fragments(secret, 16)
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

  it('never logs MFA secrets, codes, recovery codes, mfaTokens or password-reset tokens', async () => {
    const email = uniqueEmail('logs-mfa');
    const password = `Mfa-secret ${Math.random().toString(36).slice(2)} pass`;
    const newPassword = `Reset-secret ${Math.random().toString(36).slice(2)} pass`;
    expect((await t.api().post('/api/v1/auth/register').send({ email, password, name: 'Mfa Logger' })).status).toBe(201);
    const first = await t.api().post('/api/v1/auth/login').send({ email, password });
    const accessToken = first.body.tokens.accessToken as string;

    midStep(t);
    const setup = await t
      .api()
      .post('/api/v1/auth/mfa/totp/setup')
      .set(...bearer(accessToken));
    expect(setup.status).toBe(200);
    const { secret, otpauthUrl } = setup.body as { secret: string; otpauthUrl: string };
    const confirmCode = code(t, secret);
    const confirmed = await t
      .api()
      .post('/api/v1/auth/mfa/totp/confirm')
      .set(...bearer(accessToken))
      .send({ code: confirmCode });
    expect(confirmed.status).toBe(200);
    const recoveryCodes = confirmed.body.recoveryCodes as string[];

    const challenged = await t.api().post('/api/v1/auth/login').send({ email, password });
    expect(challenged.body.requiresMfa).toBe(true);
    const mfaToken = challenged.body.mfaToken as string;
    const wrong = await t.api().post('/api/v1/auth/mfa/verify').send({ mfaToken, type: 'recovery', code: 'zzzz-zzzz-zzzz' });
    expect(wrong.status).toBe(401);
    const viaRecovery = await t.api().post('/api/v1/auth/mfa/verify').send({ mfaToken, type: 'recovery', code: recoveryCodes[0] });
    expect(viaRecovery.status).toBe(200);

    expect((await t.api().post('/api/v1/auth/password/forgot').send({ email })).status).toBe(202);
    const deadline = Date.now() + 10_000;
    let resetMail = sink.to(email).find((m) => m.text.includes('/reset-password?token='));
    while (!resetMail && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      resetMail = sink.to(email).find((m) => m.text.includes('/reset-password?token='));
    }
    expect(resetMail).toBeDefined();
    const resetToken = linkToken(resetMail!, '/reset-password');
    expect((await t.api().post('/api/v1/auth/password/reset').send({ token: resetToken, password: newPassword })).status).toBe(200);

    await new Promise((resolve) => setImmediate(resolve));
    const text = logs.text;
    const secrets: Record<string, string> = {
      password,
      newPassword,
      totpSecret: secret,
      otpauthUrl,
      mfaToken,
      resetToken,
      accessToken,
      ...Object.fromEntries(recoveryCodes.map((c, i) => [`recoveryCode${i}`, c])),
    };
    const leaks = Object.entries(secrets).flatMap(([name, value]) =>
      fragments(value, 16)
        .filter((piece) => text.includes(piece))
        .map(() => name),
    );
    expect([...new Set(leaks)]).toEqual([]);
    // A TOTP code is short: look for it as a JSON string, the only way a body field could appear.
    expect(text).not.toContain(`"${confirmCode}"`);
    // The emails did go out (so the delivery path ran and logged what it logs).
    expect(sink.to(email).length).toBeGreaterThanOrEqual(2);
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

  it('gives lines written while handling a request the request id, and lines of other requests theirs', async () => {
    logs.chunks.length = 0;
    const attempts = await Promise.all(
      ['first', 'second', 'third'].map((name) =>
        t
          .api()
          .post('/api/v1/auth/login')
          .set('X-Realm-Id', 'default')
          .send({ email: uniqueEmail(name), password: 'whatever it is' }),
      ),
    );
    await new Promise((resolve) => setImmediate(resolve));
    for (const res of attempts) {
      expect(res.status).toBe(401);
      const events = logs.lines().filter((line) => line.msg === 'security event' && line.requestId === res.headers['x-request-id']);
      // The audit event of this failed login, written by the use case, not by the access log.
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ level: 'warn', event: 'login.failed', outcome: 'failure' });
    }
    // Lines written outside any request carry no request id.
    const outside = logs.lines().filter((line) => line.msg !== 'request completed' && line.msg !== 'security event');
    expect(outside.every((line) => line.requestId === undefined)).toBe(true);
  });
});

describe('emails written to the log (no SMTP_URL)', () => {
  let t: TestApp;
  const logs = new CapturedLogs();

  beforeAll(async () => {
    t = await createTestApp({
      env: { LOG_LEVEL: 'info', OUTBOX_POLL_INTERVAL_MS: '50' },
      override: (builder) => builder.overrideProvider(LOG_DESTINATION).useValue(logs),
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The plain lines under `Email to <address> …:` of the newest such email, once it is written. */
  async function plainLinesTo(email: string, count: number): Promise<string[]> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const lines = logs.text.split('\n');
      const starts = lines.flatMap((line, i) => (line.startsWith(`Email to ${email} — "`) && line.endsWith('":') ? [i] : []));
      if (starts.length >= count) {
        const from = starts[count - 1] + 1;
        const end = lines.findIndex((line, i) => i >= from && !line.startsWith('    '));
        return lines.slice(from, end);
      }
      if (Date.now() > deadline) throw new Error(`no plain lines for email ${count} to ${email}:\n${logs.text}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it('shows an email code requested without returnTo as 8 digits on a plain line, and verify takes it with or without the space', async () => {
    const email = uniqueEmail('logged-code');
    expect((await t.api().post('/api/v1/auth/email-code').send({ email })).status).toBe(202);
    const [line] = await plainLinesTo(email, 1);
    const code = /^ {4}code: (\d{8})$/.exec(line)?.[1];
    expect(code).toBeDefined();
    // The JSON line carries the same code, and the email's own text its spaced form.
    const json = logs.lines().find((entry) => String(entry.msg).startsWith(`Email to ${email} `));
    expect(String(json?.msg).split('\n')[0]).toBe(`Email to ${email} — "Your sign-in code — Default" — code: ${code}`);
    expect(String(json?.msg)).toContain(`Your sign-in code is ${code!.slice(0, 4)} ${code!.slice(4)}.`);
    const signedIn = await t.api().post('/api/v1/auth/email-code/verify').send({ email, code });
    expect(signedIn.status).toBe(200);

    // A second code, typed as the email shows it.
    expect((await t.api().post('/api/v1/auth/email-code').send({ email })).status).toBe(202);
    const [second] = await plainLinesTo(email, 2);
    const spaced = second.replace(/^ {4}code: (\d{4})(\d{4})$/, '$1 $2');
    expect(spaced).toMatch(/^\d{4} \d{4}$/);
    expect((await t.api().post('/api/v1/auth/email-code/verify').send({ email, code: spaced })).status).toBe(200);
  });

  it('shows the code and then the link of an email code requested with returnTo, each on a line of its own', async () => {
    const email = uniqueEmail('logged-link');
    const codeChallenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    const returnTo = `${t.config.apiUrl}/account/email-link`;
    expect((await t.api().post('/api/v1/auth/email-code').send({ email, returnTo, codeChallenge })).status).toBe(202);
    const lines = await plainLinesTo(email, 1);
    expect(lines).toEqual([
      expect.stringMatching(/^ {4}code: \d{8}$/),
      expect.stringMatching(/^ {4}http:\/\/\S+\/account\/email-link\?email_token=[\w-]+$/),
    ]);
  });

  it('shows the link of every other email that has one on a plain line too', async () => {
    const email = uniqueEmail('logged-verify');
    expect(
      (await t.api().post('/api/v1/auth/register').send({ email, password: 'a long enough passphrase', name: 'Log Reader' })).status,
    ).toBe(201);
    expect(await plainLinesTo(email, 1)).toEqual([expect.stringMatching(/^ {4}http:\/\/localhost:\d+\/verify-email\?token=[\w-]+$/)]);
  });
});
