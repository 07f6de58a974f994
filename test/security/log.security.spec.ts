import { randomBytes } from 'node:crypto';
import { DeferredWork } from '../../src/adapters/http/deferred-work';
import { LOG_DESTINATION } from '../../src/adapters/http/logging/logging.module';
import { CapturedLogs, fragments } from '../support/captured-logs';
import { OutboxDispatcher } from '../../src/adapters/mail/outbox-dispatcher';
import { adminApi, ROOT_PASSWORD, superAdmin } from '../support/admin-flows';
import { FEDERATION_ENV, FederationHarness, providerAccount } from '../support/federation';
import { fingerprintOf, from, MAC_CHROME, WINDOWS_FIREFOX } from '../support/devices';
import { bearer, login, PASSWORD, register, uniqueEmail } from '../support/flows';
import { code, midStep, mfaToken, nextStep, verify } from '../support/mfa';
import { linkToken, SmtpSink } from '../support/smtp-sink';
import { createTestApp, TestApp } from '../support/test-app';

describe('LOG — logging (SECURITY.md)', () => {
  let t: TestApp;
  let sink: SmtpSink;
  const logs = new CapturedLogs();

  beforeAll(async () => {
    sink = await SmtpSink.start();
    t = await createTestApp({
      env: { ...FEDERATION_ENV, LOG_LEVEL: 'trace', SMTP_URL: sink.url, LOCKOUT_MAX_FAILURES: '3', TRUST_PROXY: 'loopback' },
      override: (builder) => builder.overrideProvider(LOG_DESTINATION).useValue(logs),
    });
  });
  afterAll(async () => {
    await t?.close();
    await sink?.stop();
  });

  async function deliver() {
    await t.app.get(DeferredWork).settled();
    await t.app.get(OutboxDispatcher).dispatchDue();
  }

  it('LOG-01 never logs passwords, tokens, TOTP secrets or codes, recovery codes, the admin token, email tokens, an identity provider’s client secret or an OpenID client’s secret (whole scenario, trace level)', async () => {
    const secrets: Record<string, string> = {};
    const keep = (name: string, value: string) => {
      secrets[name] = value;
      return value;
    };
    const email = uniqueEmail('log01');
    const password = keep('password', `Log01 ${Math.random().toString(36).slice(2)} secret`);
    const registered = await t.api().post('/api/v1/auth/register').send({ email, password, name: 'Log Tester' });
    expect(registered.status).toBe(201);
    await deliver();
    const verification = keep('verificationToken', linkToken((await sink.waitFor(email))[0], '/verify-email'));
    await t.api().post('/api/v1/auth/verify-email').send({ token: verification }).expect(200);
    keep('wrongPassword', `Wrong ${Math.random().toString(36).slice(2)} guess`);
    expect((await login(t, email, secrets.wrongPassword)).status).toBe(401);

    const signedIn = await login(t, email, password);
    const accessToken = keep('accessToken', signedIn.body.tokens.accessToken);
    keep('refreshToken', signedIn.body.tokens.refreshToken);
    // TOTP: secret, confirming code, recovery codes, mfaToken and the login code.
    const setup = await t
      .api()
      .post('/api/v1/auth/mfa/totp/setup')
      .set(...bearer(accessToken));
    const secret = keep('totpSecret', setup.body.secret);
    keep('otpauthUrl', setup.body.otpauthUrl);
    midStep(t);
    const confirmCode = code(t, secret);
    const confirmed = await t
      .api()
      .post('/api/v1/auth/mfa/totp/confirm')
      .set(...bearer(accessToken))
      .send({ code: confirmCode });
    expect(confirmed.status).toBe(200);
    (confirmed.body.recoveryCodes as string[]).forEach((c, i) => keep(`recoveryCode${i}`, c));
    nextStep(t);
    const pending = await login(t, email, password);
    const mfa = keep('mfaToken', pending.body.mfaToken);
    const loginCode = code(t, secret);
    const second = await verify(t, { mfaToken: mfa, type: 'totp', code: loginCode });
    expect(second.status).toBe(200);
    keep('mfaAccessToken', second.body.tokens.accessToken);
    const rotated = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: second.body.tokens.refreshToken });
    keep('rotatedRefreshToken', rotated.body.tokens.refreshToken);
    // Recovery-code login and a password reset.
    const pendingAgain = await login(t, email, password);
    const byRecovery = await verify(t, {
      mfaToken: keep('mfaToken2', pendingAgain.body.mfaToken),
      type: 'recovery',
      code: confirmed.body.recoveryCodes[0],
    });
    expect(byRecovery.status).toBe(200);
    const forgot = await t.api().post('/api/v1/auth/password/forgot').send({ email });
    expect(forgot.status).toBe(202);
    await deliver();
    const resetMail = (await sink.waitFor(email, 2)).find((m) => m.subject.startsWith('Reset your password'))!;
    const resetToken = keep('resetToken', linkToken(resetMail, '/reset-password'));
    const newPassword = keep('newPassword', `Reset ${Math.random().toString(36).slice(2)} passphrase`);
    await t.api().post('/api/v1/auth/password/reset').send({ token: resetToken, password: newPassword }).expect(200);
    // The administrator: bootstrap password and admin token.
    keep('adminPassword', ROOT_PASSWORD);
    const root = await superAdmin(t);
    keep('adminToken', root.accessToken);
    keep('adminRefreshToken', root.refreshToken);
    await adminApi(t, root.accessToken, 'default').get('/users').expect(200);
    // Careless clients: tokens in a query string, a cookie and a custom header.
    await t.api().get(`/api/v1/auth/me?access_token=${root.accessToken}`).set('Cookie', `rt=${root.refreshToken}`).set('X-Api-Key', secret);
    // An identity provider: its client secret, the state and code in the callback's URL, the login code and its verifier.
    const federation = await FederationHarness.attach(t, {
      accounts: { logger: providerAccount('log01fed') },
      clientSecret: keep('idpClientSecret', `idp-${randomBytes(24).toString('base64url')}`),
    });
    try {
      const { back, verifier } = await federation.toCallback('logger');
      const callbackParams = new URL(back).searchParams;
      keep('federationState', callbackParams.get('state')!);
      keep('providerCode', callbackParams.get('code')!);
      const loginCode = keep('loginCode', new URL((await federation.callback(back)).headers.location).searchParams.get('code')!);
      const exchanged = await federation.exchange(loginCode, keep('codeVerifier', verifier));
      expect(exchanged.status).toBe(200);
      keep('federatedAccessToken', exchanged.body.tokens.accessToken);
    } finally {
      await federation.stop();
    }

    // A client of the realm's OpenID provider: its secret as created and rotated, sent in a token request's body.
    const opClient = await adminApi(t, root.accessToken, 'default')
      .post('/clients')
      .send({ name: 'Log job', type: 'confidential', grantTypes: ['client_credentials'], scopes: ['openid'] })
      .expect(201);
    keep('opClientSecret', opClient.body.clientSecret);
    const rotatedSecret = await adminApi(t, root.accessToken, 'default')
      .post(`/clients/${opClient.body.client.clientId}/rotate-secret`)
      .send({});
    keep('opRotatedClientSecret', rotatedSecret.body.clientSecret);
    const opToken = await t
      .api()
      .post('/realms/default/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: opClient.body.client.clientId, client_secret: rotatedSecret.body.clientSecret });
    expect(opToken.status).toBe(200);
    keep('opAccessToken', opToken.body.access_token);

    await new Promise((resolve) => setImmediate(resolve));
    const [row] = await t.dataSource.query(`SELECT password_hash FROM users WHERE email = $1`, [email]);
    keep('passwordHash', row.password_hash);
    const text = logs.text;
    expect(text.length).toBeGreaterThan(1000);
    const leaks = Object.entries(secrets).filter(([, value]) => value && fragments(value).some((piece) => text.includes(piece)));
    expect(leaks.map(([name]) => name)).toEqual([]);
    // Six-digit codes as values anywhere in a line.
    for (const c of [confirmCode, loginCode]) expect(text).not.toMatch(new RegExp(`["=:]\\s*"?${c}\\b`));
  });

  it('LOG-02 writes a structured line per security event with realm, user, IP and outcome (login, lockout, MFA failure, reuse, hijack, admin)', async () => {
    logs.chunks.length = 0;
    const user = await register(t, uniqueEmail('log02'));
    const signIn = (device = MAC_CHROME, password = PASSWORD) =>
      from(t.api().post('/api/v1/auth/login'), device).send({ email: user.email, password, deviceFingerprint: fingerprintOf(device) });
    const ok = await signIn();
    expect(ok.status).toBe(200);
    // Refresh-token reuse after the leeway.
    const rotated = await from(t.api().post('/api/v1/auth/refresh'), MAC_CHROME).send({
      refreshToken: ok.body.tokens.refreshToken,
      deviceFingerprint: fingerprintOf(MAC_CHROME),
    });
    expect(rotated.status).toBe(200);
    t.clock.advance(t.config.refreshReuseLeewaySeconds + 1);
    expect((await from(t.api().post('/api/v1/auth/refresh'), MAC_CHROME).send({ refreshToken: ok.body.tokens.refreshToken })).status).toBe(
      401,
    );
    // Hijack: another device refreshes a live session.
    const live = await signIn();
    const hijack = await from(t.api().post('/api/v1/auth/refresh'), WINDOWS_FIREFOX).send({
      refreshToken: live.body.tokens.refreshToken,
      deviceFingerprint: fingerprintOf(WINDOWS_FIREFOX),
    });
    expect(hijack.status).toBe(401);
    // Lockout (LOCKOUT_MAX_FAILURES=3 here).
    for (let i = 0; i < 3; i++) expect((await signIn(MAC_CHROME, `wrong ${i} password`)).status).toBe(401);
    // MFA failure.
    const root = await superAdmin(t);
    await adminApi(t, root.accessToken, 'default').post(`/users/${user.id}/unlock`).expect(200);
    const mfaUser = await register(t, uniqueEmail('log02mfa'));
    const mfaSession = (await login(t, mfaUser.email)).body.tokens.accessToken;
    const setup = await t
      .api()
      .post('/api/v1/auth/mfa/totp/setup')
      .set(...bearer(mfaSession));
    midStep(t);
    await t
      .api()
      .post('/api/v1/auth/mfa/totp/confirm')
      .set(...bearer(mfaSession))
      .send({ code: code(t, setup.body.secret) })
      .expect(200);
    const right = code(t, setup.body.secret, 120);
    expect((await verify(t, { mfaToken: await mfaToken(t, mfaUser.email), type: 'totp', code: right })).status).toBe(401);
    // Admin action.
    await adminApi(t, root.accessToken, 'default').post(`/users/${user.id}/suspend`).send({ reason: 'log test' }).expect(200);

    await new Promise((resolve) => setImmediate(resolve));
    const events = logs.lines().filter((line) => line.msg === 'security event');
    const find = (event: string, userId = user.id) => events.filter((line) => line.event === event && line.userId === userId);
    const expectations: [string, string, string, string | null][] = [
      ['login.succeeded', 'success', user.id, MAC_CHROME.ip],
      ['login.failed', 'failure', user.id, MAC_CHROME.ip],
      ['user.locked', 'failure', user.id, MAC_CHROME.ip],
      ['refresh.reused', 'failure', user.id, MAC_CHROME.ip],
      ['session.flagged', 'failure', user.id, WINDOWS_FIREFOX.ip],
      ['mfa.failed', 'failure', mfaUser.id, null],
      ['user.unlocked', 'success', user.id, null],
      ['user.suspended', 'success', user.id, null],
    ];
    for (const [event, outcome, userId, ip] of expectations) {
      const [line] = find(event, userId);
      expect([event, line]).toEqual([
        event,
        expect.objectContaining({
          level: outcome === 'failure' ? 'warn' : 'info',
          event,
          outcome,
          realm: 'default',
          userId,
          ip: ip ?? expect.any(String),
          requestId: expect.any(String),
          at: expect.stringMatching(/Z$/),
          details: expect.any(Object),
        }),
      ]);
    }
    // Admin actions name the acting admin.
    expect(find('user.suspended')[0]).toMatchObject({ actorId: root.id, details: { reason: 'log test' } });
    expect(find('login.failed').map((l) => (l.details as { reason: string }).reason)).toEqual(expect.arrayContaining(['wrong_password']));
  });
});
