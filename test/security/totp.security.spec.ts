import { DeferredWork } from '../../src/adapters/http/deferred-work';
import { OutboxDispatcher } from '../../src/adapters/mail/outbox-dispatcher';
import { bearer, login, PASSWORD, signedInUser } from '../support/flows';
import { auditEvents, code, midStep, mfaToken, nextStep, oathtoolTotp, userWithTotp, verify } from '../support/mfa';
import { SmtpSink } from '../support/smtp-sink';
import { createTestApp, TestApp } from '../support/test-app';

const MFA = '/api/v1/auth/mfa';

/** Delivers the outbox to the SMTP sink now (the dispatcher's polling is off in tests). */
async function deliver(t: TestApp): Promise<void> {
  await t.app.get(DeferredWork).settled();
  await t.app.get(OutboxDispatcher).dispatchDue();
}

/** A code from `secret` for now that is certainly not the right one. */
function wrongCode(t: TestApp, secret: string): string {
  const right = code(t, secret);
  return right === '000000' ? '000001' : '000000';
}

describe('TOTP — authenticator apps (SECURITY.md)', () => {
  let t: TestApp;
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await SmtpSink.start();
    t = await createTestApp({ env: { SMTP_URL: sink.url } });
  });
  afterAll(async () => {
    await t?.close();
    await sink?.stop();
  });

  it('TOTP-01 activates only after a valid code from the new secret: 000000 → 400 and login asks no MFA; oathtool code → 200', async () => {
    const { accessToken, email, id } = await signedInUser(t);
    const setup = await t
      .api()
      .post(`${MFA}/totp/setup`)
      .set(...bearer(accessToken));
    expect(setup.status).toBe(200);
    midStep(t);
    const refused = await t
      .api()
      .post(`${MFA}/totp/confirm`)
      .set(...bearer(accessToken))
      .send({ code: wrongCode(t, setup.body.secret) });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect((await login(t, email)).body).toMatchObject({ requiresMfa: false, tokens: expect.any(Object) });
    expect(await auditEvents(t, id, 'mfa.enabled')).toEqual([]);

    const confirmed = await t
      .api()
      .post(`${MFA}/totp/confirm`)
      .set(...bearer(accessToken))
      .send({ code: oathtoolTotp(setup.body.secret, t.clock.now()) });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.mfa).toEqual({ enabled: true, methods: ['totp'] });
    expect((await login(t, email)).body).toMatchObject({ requiresMfa: true, tokens: null, mfaMethods: ['totp'] });
  });

  it('TOTP-02 hands out an interoperable otpauth URI with a 160-bit CSPRNG secret, shows it once and stores it encrypted', async () => {
    const { accessToken, id } = await signedInUser(t);
    const setup = await t
      .api()
      .post(`${MFA}/totp/setup`)
      .set(...bearer(accessToken));
    const uri = new URL(setup.body.otpauthUrl);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    const secret = uri.searchParams.get('secret')!;
    expect(secret).toBe(setup.body.secret);
    expect(secret).toMatch(/^[A-Z2-7]{32,}$/); // base32: 32 characters = 160 bits
    expect(uri.searchParams.get('algorithm')).toBe('SHA1');
    expect(uri.searchParams.get('digits')).toBe('6');
    expect(uri.searchParams.get('period')).toBe('30');

    // Distinct every time (CSPRNG), and never stored as sent.
    const others = new Set<string>();
    for (let i = 0; i < 10; i++)
      others.add(
        (
          await t
            .api()
            .post(`${MFA}/totp/setup`)
            .set(...bearer(accessToken))
        ).body.secret,
      );
    expect(others.size).toBe(10);
    expect(others.has(secret)).toBe(false);
    const latest = [...others].at(-1)!;
    const [row] = await t.dataSource.query(`SELECT secret_encrypted FROM totp_credentials WHERE user_id = $1`, [id]);
    expect(row.secret_encrypted).not.toContain(latest);
    expect(row.secret_encrypted).not.toContain(Buffer.from(latest).toString('base64'));

    midStep(t);
    const confirm = await t
      .api()
      .post(`${MFA}/totp/confirm`)
      .set(...bearer(accessToken))
      .send({ code: oathtoolTotp(latest, t.clock.now()) });
    expect(confirm.status).toBe(200);
    // Shown once: status never repeats it, and a new setup is refused while TOTP is on.
    const status = await t
      .api()
      .get(MFA)
      .set(...bearer(accessToken));
    expect(status.status).toBe(200);
    expect(JSON.stringify(status.body)).not.toContain(latest);
    expect(
      (
        await t
          .api()
          .post(`${MFA}/totp/setup`)
          .set(...bearer(accessToken))
      ).status,
    ).toBe(409);
  });

  it('TOTP-03 accepts each time step once: same code on a new login → 401; 5 parallel submissions of a fresh code → one 200', async () => {
    const user = await userWithTotp(t);
    const used = code(t, user.secret);
    expect((await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: used })).status).toBe(200);
    const replay = await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: used });
    expect([replay.status, replay.body.error.code]).toEqual([401, 'INVALID_MFA_CODE']);
    expect((await auditEvents(t, user.id, 'mfa.failed')).map((e) => e.details.reason)).toEqual(['replay']);

    nextStep(t);
    const tokens: string[] = [];
    for (let i = 0; i < 5; i++) tokens.push(await mfaToken(t, user.email));
    const fresh = code(t, user.secret);
    const results = await Promise.all(tokens.map((token) => verify(t, { mfaToken: token, type: 'totp', code: fresh })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401, 401, 401]);
  });

  it('TOTP-04 accepts the current step and one step of drift either side (oathtool -N), not older or future codes', async () => {
    const user = await userWithTotp(t);
    // Two steps past the confirming code: the step before now has never been used.
    nextStep(t);
    const now = t.clock.now();
    const at = (seconds: number) => oathtoolTotp(user.secret, new Date(now.getTime() + seconds * 1000));
    for (const offset of [-90, -60, 60, 90]) {
      const res = await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: at(offset) });
      expect([offset, res.status]).toEqual([offset, 401]);
    }
    expect((await auditEvents(t, user.id, 'mfa.failed')).map((e) => e.details.reason)).toEqual([
      'wrong_code',
      'wrong_code',
      'wrong_code',
      'wrong_code',
    ]);
    expect((await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: at(-30) })).status).toBe(200);

    const ahead = await userWithTotp(t);
    nextStep(t);
    const future = oathtoolTotp(ahead.secret, new Date(t.clock.now().getTime() + 30_000));
    expect((await verify(t, { mfaToken: await mfaToken(t, ahead.email), type: 'totp', code: future })).status).toBe(200);
  });

  it('TOTP-06 removal needs the password (400 without, 401 wrong); re-enrolment needs a recent sign-in (403); the old secret dies; the owner is mailed', async () => {
    const user = await userWithTotp(t);
    const missing = await t
      .api()
      .delete(`${MFA}/totp`)
      .set(...bearer(user.accessToken))
      .send({});
    expect([missing.status, missing.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    const wrong = await t
      .api()
      .delete(`${MFA}/totp`)
      .set(...bearer(user.accessToken))
      .send({ password: 'not the password at all' });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    expect((await login(t, user.email)).body.requiresMfa).toBe(true);

    const removed = await t
      .api()
      .delete(`${MFA}/totp`)
      .set(...bearer(user.accessToken))
      .send({ password: PASSWORD });
    expect(removed.status).toBe(200);

    // A session signed in more than RECENT_AUTH_MAX_AGE_SECONDS (900) ago, kept alive by refreshes, cannot enrol a new secret.
    const stale = await login(t, user.email);
    let refreshToken = stale.body.tokens.refreshToken as string;
    let accessToken = '';
    for (let i = 0; i < 2; i++) {
      t.clock.advance(600);
      const refreshed = await t.api().post('/api/v1/auth/refresh').send({ refreshToken });
      expect(refreshed.status).toBe(200);
      ({ refreshToken, accessToken } = refreshed.body.tokens);
    }
    const forbidden = await t
      .api()
      .post(`${MFA}/totp/setup`)
      .set(...bearer(accessToken));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ error: { code: 'FORBIDDEN', message: expect.stringMatching(/recent sign-in/), status: 403 } });

    const fresh = (await login(t, user.email)).body.tokens.accessToken as string;
    const setup = await t
      .api()
      .post(`${MFA}/totp/setup`)
      .set(...bearer(fresh));
    expect(setup.status).toBe(200);
    midStep(t);
    await t
      .api()
      .post(`${MFA}/totp/confirm`)
      .set(...bearer(fresh))
      .send({ code: code(t, setup.body.secret) })
      .expect(200);
    nextStep(t);
    const old = await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: code(t, user.secret) });
    expect([old.status, old.body.error.code]).toEqual([401, 'INVALID_MFA_CODE']);
    expect((await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: code(t, setup.body.secret) })).status).toBe(200);

    await deliver(t);
    const notices = (await sink.waitFor(user.email, 3)).filter((m) => m.subject.startsWith('Security notice'));
    expect(notices.map((m) => m.text)).toEqual(
      expect.arrayContaining([expect.stringContaining('two-step sign-in is now off'), expect.stringContaining('(TOTP) was added')]),
    );
    for (const m of notices) expect(m.text).not.toContain(setup.body.secret);
  });
});

describe('TOTP-05 — guessing limit per user', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Counters in this instance's memory (they follow the test clock), even where CI provides Redis.
    t = await createTestApp({ env: { RATE_LIMIT_MFA_VERIFY: '5/60', REDIS_URL: '' } });
  });
  afterAll(() => t?.close());

  it('TOTP-05 throttles the TOTP step per user across fresh password logins: wrong codes beyond 5 a minute → 429, even the right code', async () => {
    const user = await userWithTotp(t);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: wrongCode(t, user.secret) });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(res.body.error.code).toBe('RATE_LIMITED');
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      }
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
    const right = await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: code(t, user.secret) });
    expect(right.status).toBe(429);
    // Another user is not affected; the limited user gets through once the window has passed.
    const other = await userWithTotp(t);
    expect((await verify(t, { mfaToken: await mfaToken(t, other.email), type: 'totp', code: code(t, other.secret) })).status).toBe(200);
    t.clock.advance(61);
    midStep(t);
    expect((await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: code(t, user.secret) })).status).toBe(200);
  });
});
