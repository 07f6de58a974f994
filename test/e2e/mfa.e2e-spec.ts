import { createTestApp, TestApp } from '../support/test-app';
import { bearer, login, PASSWORD, register, signedInUser, uniqueEmail } from '../support/flows';
import {
  addSoftKey,
  auditEvents,
  code,
  decodeJwt,
  midStep,
  mfaToken,
  nextStep,
  oathtoolTotp,
  userWithSoftKey,
  userWithTotp,
  verify,
  webauthnAnswer,
} from '../support/mfa';
import { SoftAuthenticator } from '../support/soft-authenticator';

jest.setTimeout(60_000);

const MFA = '/api/v1/auth/mfa';

function expectError(res: { status: number; body: Record<string, unknown> }, status: number, code: string) {
  expect({ status: res.status, code: (res.body.error as { code?: string } | undefined)?.code }).toEqual({ status, code });
  expect(Object.keys(res.body)).toEqual(['error']);
  expect(res.body.error).toMatchObject({ code, status, message: expect.any(String) });
}

async function notices(t: TestApp, email: string): Promise<string[]> {
  const rows: { text_body: string }[] = await t.dataSource.query(
    `SELECT text_body FROM email_outbox WHERE recipient = $1 AND subject LIKE '%Security notice%' ORDER BY created_at`,
    [email],
  );
  return rows.map((r) => r.text_body);
}

async function sessionCount(t: TestApp, userId: string): Promise<number> {
  const rows: { n: string }[] = await t.dataSource.query(`SELECT count(*) AS n FROM sessions WHERE user_id = $1`, [userId]);
  return Number(rows[0].n);
}

describe('MFA: TOTP, WebAuthn, recovery codes and the second login step', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /mfa', () => {
    it('shows a new user without factors, and never a secret once TOTP is on', async () => {
      const { accessToken } = await signedInUser(t);
      const before = await t
        .api()
        .get(MFA)
        .set(...bearer(accessToken));
      expect(before.status).toBe(200);
      expect(before.body).toEqual({ enabled: false, methods: [], webauthnCredentials: [], recoveryCodesRemaining: 0 });

      const user = await userWithTotp(t);
      const after = await t
        .api()
        .get(MFA)
        .set(...bearer(user.accessToken));
      expect(after.body).toEqual({ enabled: true, methods: ['totp'], webauthnCredentials: [], recoveryCodesRemaining: 10 });
      expect(JSON.stringify(after.body)).not.toContain(user.secret);
    });

    it('lists WebAuthn credentials with name and dates', async () => {
      const user = await userWithSoftKey(t);
      const res = await t
        .api()
        .get(MFA)
        .set(...bearer(user.accessToken));
      expect(res.body).toEqual({
        enabled: true,
        methods: ['webauthn'],
        webauthnCredentials: [
          {
            id: user.credentialId,
            name: 'Test key',
            passkey: false,
            disabled: false,
            createdAt: expect.stringMatching(/Z$/),
            lastUsedAt: null,
          },
        ],
        recoveryCodesRemaining: 10,
      });
    });

    it.each([
      ['GET', MFA],
      ['POST', `${MFA}/totp/setup`],
      ['POST', `${MFA}/totp/confirm`],
      ['DELETE', `${MFA}/totp`],
      ['POST', `${MFA}/webauthn/register/options`],
      ['POST', `${MFA}/webauthn/register/verify`],
      ['DELETE', `${MFA}/webauthn/abc`],
      ['POST', `${MFA}/recovery-codes`],
    ])('%s %s without an access token → 401 INVALID_TOKEN', async (method, path) => {
      const req = method === 'GET' ? t.api().get(path) : method === 'DELETE' ? t.api().delete(path) : t.api().post(path);
      expectError(await req, 401, 'INVALID_TOKEN');
    });

    it('an expired access token → 401 TOKEN_EXPIRED', async () => {
      const { accessToken } = await signedInUser(t);
      t.clock.advance(901);
      expectError(
        await t
          .api()
          .get(MFA)
          .set(...bearer(accessToken)),
        401,
        'TOKEN_EXPIRED',
      );
    });

    it('refuses an mfaToken used as a bearer token', async () => {
      const user = await userWithTotp(t);
      const token = await mfaToken(t, user.email);
      expectError(
        await t
          .api()
          .get(MFA)
          .set(...bearer(token)),
        401,
        'INVALID_TOKEN',
      );
    });
  });

  describe('TOTP enrolment', () => {
    it('setup returns a 160-bit base32 secret, an interoperable otpauth URL naming the realm, and a PNG QR code; the secret is stored encrypted', async () => {
      const { accessToken, id, email } = await signedInUser(t);
      const res = await t
        .api()
        .post(`${MFA}/totp/setup`)
        .set(...bearer(accessToken));
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['otpauthUrl', 'qrCode', 'secret']);
      expect(res.body.secret).toMatch(/^[A-Z2-7]{32}$/);
      const url = new URL(res.body.otpauthUrl);
      expect(url.protocol).toBe('otpauth:');
      expect(url.host).toBe('totp');
      expect(decodeURIComponent(url.pathname)).toBe(`/Default:${email}`);
      expect(Object.fromEntries(url.searchParams)).toEqual({
        secret: res.body.secret,
        issuer: 'Default',
        algorithm: 'SHA1',
        digits: '6',
        period: '30',
      });
      expect(res.body.qrCode).toMatch(/^data:image\/png;base64,/);
      const png = Buffer.from(res.body.qrCode.slice('data:image/png;base64,'.length), 'base64');
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));

      const rows: { secret_encrypted: string; confirmed_at: Date | null }[] = await t.dataSource.query(
        `SELECT secret_encrypted, confirmed_at FROM totp_credentials WHERE user_id = $1`,
        [id],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].confirmed_at).toBeNull();
      expect(rows[0].secret_encrypted).not.toContain(res.body.secret);
      expect(rows[0].secret_encrypted).toMatch(/^v1\./);
      // Pending only: login still asks for the password alone.
      expect((await login(t, email)).body.requiresMfa).toBe(false);
    });

    it('a second setup replaces a pending secret: codes of the first no longer confirm', async () => {
      const { accessToken } = await signedInUser(t);
      const first = await t
        .api()
        .post(`${MFA}/totp/setup`)
        .set(...bearer(accessToken));
      const second = await t
        .api()
        .post(`${MFA}/totp/setup`)
        .set(...bearer(accessToken));
      expect(second.body.secret).not.toBe(first.body.secret);
      midStep(t);
      const stale = await t
        .api()
        .post(`${MFA}/totp/confirm`)
        .set(...bearer(accessToken))
        .send({ code: code(t, first.body.secret) });
      expectError(stale, 400, 'VALIDATION_FAILED');
      const ok = await t
        .api()
        .post(`${MFA}/totp/confirm`)
        .set(...bearer(accessToken))
        .send({ code: code(t, second.body.secret) });
      expect(ok.status).toBe(200);
    });

    it('confirm with a wrong code → 400 VALIDATION_FAILED on `code`, and MFA stays off', async () => {
      const { accessToken, email } = await signedInUser(t);
      const setup = await t
        .api()
        .post(`${MFA}/totp/setup`)
        .set(...bearer(accessToken));
      midStep(t);
      const right = code(t, setup.body.secret);
      const wrong = right === '000000' ? '000001' : '000000';
      const res = await t
        .api()
        .post(`${MFA}/totp/confirm`)
        .set(...bearer(accessToken))
        .send({ code: wrong });
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(res.body.error.details).toEqual([{ field: 'code', message: expect.any(String) }]);
      expect((await login(t, email)).body.requiresMfa).toBe(false);
    });

    it.each([
      ['a missing code', {}],
      ['a non-string code', { code: 123456 }],
      ['an unknown field', { code: '123456', secret: 'X' }],
    ])('confirm with %s → 400 VALIDATION_FAILED', async (_what, body) => {
      const { accessToken } = await signedInUser(t);
      await t
        .api()
        .post(`${MFA}/totp/setup`)
        .set(...bearer(accessToken));
      expectError(
        await t
          .api()
          .post(`${MFA}/totp/confirm`)
          .set(...bearer(accessToken))
          .send(body),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('confirm without a pending setup → 409 INVALID_USER_STATE', async () => {
      const { accessToken } = await signedInUser(t);
      expectError(
        await t
          .api()
          .post(`${MFA}/totp/confirm`)
          .set(...bearer(accessToken))
          .send({ code: '123456' }),
        409,
        'INVALID_USER_STATE',
      );
    });

    it('confirm activates TOTP, returns 10 distinct recovery codes once, audits mfa.enabled; login then asks for the second factor', async () => {
      const { accessToken, email, id } = await signedInUser(t);
      const setup = await t
        .api()
        .post(`${MFA}/totp/setup`)
        .set(...bearer(accessToken));
      midStep(t);
      const res = await t
        .api()
        .post(`${MFA}/totp/confirm`)
        .set(...bearer(accessToken))
        .send({ code: code(t, setup.body.secret) });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ mfa: { enabled: true, methods: ['totp'] }, recoveryCodes: expect.any(Array) });
      expect(res.body.recoveryCodes).toHaveLength(10);
      expect(new Set(res.body.recoveryCodes).size).toBe(10);
      for (const c of res.body.recoveryCodes) expect(c).toMatch(/^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/);
      const stored: { code_hash: string }[] = await t.dataSource.query(`SELECT code_hash FROM recovery_codes WHERE user_id = $1`, [id]);
      expect(stored).toHaveLength(10);
      for (const row of stored) for (const c of res.body.recoveryCodes) expect(row.code_hash).not.toContain(c.replace(/-/g, ''));
      expect((await auditEvents(t, id, 'mfa.enabled'))[0].details).toMatchObject({ method: 'totp' });
      const mails = await notices(t, email);
      expect(mails).toHaveLength(1);
      expect(mails[0]).toContain('authenticator app (TOTP) was added');
      for (const c of res.body.recoveryCodes) expect(mails[0]).not.toContain(c);

      const signIn = await login(t, email);
      expect(signIn.status).toBe(200);
      expect(signIn.body).toEqual({
        user: { id, email, emailVerified: false, mfaEnabled: true },
        tokens: null,
        requiresMfa: true,
        mfaToken: expect.any(String),
        mfaMethods: ['totp'],
      });

      expectError(
        await t
          .api()
          .post(`${MFA}/totp/setup`)
          .set(...bearer(accessToken)),
        409,
        'INVALID_USER_STATE',
      );
      expectError(
        await t
          .api()
          .post(`${MFA}/totp/confirm`)
          .set(...bearer(accessToken))
          .send({ code: '123456' }),
        409,
        'INVALID_USER_STATE',
      );
    });

    it('the code that confirmed the secret cannot complete a login (its step is used up)', async () => {
      const { accessToken, email } = await signedInUser(t);
      const setup = await t
        .api()
        .post(`${MFA}/totp/setup`)
        .set(...bearer(accessToken));
      midStep(t);
      const confirming = code(t, setup.body.secret);
      await t
        .api()
        .post(`${MFA}/totp/confirm`)
        .set(...bearer(accessToken))
        .send({ code: confirming })
        .expect(200);
      const token = await mfaToken(t, email);
      expectError(await verify(t, { mfaToken: token, type: 'totp', code: confirming }), 401, 'INVALID_MFA_CODE');
    });

    it('accepts codes generated by oathtool from the otpauth secret, at confirmation and at login', async () => {
      const { accessToken, email } = await signedInUser(t);
      const setup = await t
        .api()
        .post(`${MFA}/totp/setup`)
        .set(...bearer(accessToken));
      const secret = new URL(setup.body.otpauthUrl).searchParams.get('secret')!;
      midStep(t);
      const confirm = await t
        .api()
        .post(`${MFA}/totp/confirm`)
        .set(...bearer(accessToken))
        .send({ code: oathtoolTotp(secret, t.clock.now()) });
      expect(confirm.status).toBe(200);
      nextStep(t);
      const token = await mfaToken(t, email);
      const res = await verify(t, { mfaToken: token, type: 'totp', code: oathtoolTotp(secret, t.clock.now()) });
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.tokens.accessToken).amr).toEqual(['pwd', 'otp']);
    });
  });

  describe('POST /mfa/verify with TOTP', () => {
    it('opens the session only now, with amr [pwd, otp], stamps lastLoginAt and audits mfa.succeeded and login.succeeded', async () => {
      const user = await userWithTotp(t);
      const sessionsBefore = await sessionCount(t, user.id);
      const token = await mfaToken(t, user.email);
      expect(await sessionCount(t, user.id)).toBe(sessionsBefore);
      const res = await verify(t, { mfaToken: token, type: 'totp', code: code(t, user.secret) });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        user: { id: user.id, email: user.email, emailVerified: false, mfaEnabled: true },
        tokens: { accessToken: expect.any(String), refreshToken: expect.any(String), expiresIn: 900, tokenType: 'Bearer' },
      });
      expect(await sessionCount(t, user.id)).toBe(sessionsBefore + 1);
      const claims = decodeJwt(res.body.tokens.accessToken);
      expect(claims).toMatchObject({ sub: user.id, realm: 'default', amr: ['pwd', 'otp'] });
      const me = await t
        .api()
        .get('/api/v1/auth/me')
        .set(...bearer(res.body.tokens.accessToken));
      expect(me.status).toBe(200);
      expect(me.body.user.lastLoginAt).not.toBeNull();
      expect(me.body.user.mfa).toEqual({ enabled: true, methods: ['totp'] });
      const succeeded = await auditEvents(t, user.id, 'mfa.succeeded');
      expect(succeeded).toHaveLength(1);
      expect(succeeded[0].details).toMatchObject({ type: 'totp', purpose: 'login' });
      expect((await auditEvents(t, user.id, 'login.succeeded')).at(-1)!.details).toEqual({ method: 'password', amr: ['pwd', 'otp'] });
      const refreshed = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: res.body.tokens.refreshToken });
      expect(refreshed.status).toBe(200);
    });

    it('an mfaToken works once: after success it is INVALID_TOKEN', async () => {
      const user = await userWithTotp(t);
      const token = await mfaToken(t, user.email);
      await verify(t, { mfaToken: token, type: 'totp', code: code(t, user.secret) }).expect(200);
      nextStep(t);
      expectError(await verify(t, { mfaToken: token, type: 'totp', code: code(t, user.secret) }), 401, 'INVALID_TOKEN');
    });

    it('wrong code → 401 INVALID_MFA_CODE and mfa.failed; the 5th wrong code kills the mfaToken', async () => {
      const user = await userWithTotp(t);
      const token = await mfaToken(t, user.email);
      const right = code(t, user.secret);
      const wrong = right === '000000' ? '000001' : '000000';
      for (let i = 1; i <= 5; i += 1) {
        expectError(await verify(t, { mfaToken: token, type: 'totp', code: wrong }), 401, 'INVALID_MFA_CODE');
      }
      // Dead: even the right code is refused now.
      expectError(await verify(t, { mfaToken: token, type: 'totp', code: right }), 401, 'INVALID_TOKEN');
      const failed = await auditEvents(t, user.id, 'mfa.failed');
      expect(failed).toHaveLength(5);
      expect(failed.map((e) => e.details.attempts).sort()).toEqual([1, 2, 3, 4, 5]);
      // A fresh login still works with the right code.
      const fresh = await mfaToken(t, user.email);
      expect((await verify(t, { mfaToken: fresh, type: 'totp', code: right })).status).toBe(200);
    });

    it('says a code used to confirm the setup is already used when it is tried again at sign-in', async () => {
      const user = await userWithTotp(t);
      // userWithTotp confirmed the setup with the previous step's code, still inside the ±1 step window.
      const confirming = code(t, user.secret, -30);
      const res = await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: confirming });
      expect([res.status, res.body.error?.code, res.body.error?.message]).toEqual([
        401,
        'INVALID_MFA_CODE',
        'This code has already been used; wait for the next one',
      ]);
    });

    it('replay: a code accepted once is refused for a new login in the same window, and so is an older step', async () => {
      const user = await userWithTotp(t);
      const used = code(t, user.secret);
      const previous = code(t, user.secret, -30);
      await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: used }).expect(200);
      const replayed = await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: used });
      expectError(replayed, 401, 'INVALID_MFA_CODE');
      expect(replayed.body.error.message).toBe('This code has already been used; wait for the next one');
      expectError(await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: previous }), 401, 'INVALID_MFA_CODE');
      const reasons = (await auditEvents(t, user.id, 'mfa.failed')).map((e) => e.details.reason);
      expect(reasons).toEqual(['replay', 'replay']);
    });

    it('concurrent submissions of one code (five logins at once): exactly one succeeds', async () => {
      const user = await userWithTotp(t);
      const tokens = [];
      for (let i = 0; i < 5; i += 1) tokens.push(await mfaToken(t, user.email));
      const fresh = code(t, user.secret);
      const results = await Promise.all(tokens.map((mfa) => verify(t, { mfaToken: mfa, type: 'totp', code: fresh })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 401, 401, 401, 401]);
      for (const r of results.filter((x) => x.status === 401)) expect(r.body.error.code).toBe('INVALID_MFA_CODE');
    });

    it('concurrent submissions of one code on one mfaToken: exactly one succeeds', async () => {
      const user = await userWithTotp(t);
      const token = await mfaToken(t, user.email);
      const fresh = code(t, user.secret);
      const results = await Promise.all([1, 2].map(() => verify(t, { mfaToken: token, type: 'totp', code: fresh })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
    });

    it.each([
      ['the previous step', -30, 200],
      ['the next step', 30, 200],
      ['three steps back', -90, 401],
      ['three steps ahead', 90, 401],
      ['two steps back', -60, 401],
    ])('window ±1 step: a code of %s → %s', async (_what, offset, status) => {
      const user = await userWithTotp(t);
      // Two steps past the confirming code, so the previous step has never been used.
      nextStep(t);
      const token = await mfaToken(t, user.email);
      const res = await verify(t, { mfaToken: token, type: 'totp', code: code(t, user.secret, offset) });
      expect(res.status).toBe(status);
      if (status === 401) expect(res.body.error.code).toBe('INVALID_MFA_CODE');
    });

    it.each([
      ['a 5-digit code', '12345'],
      ['letters', 'abcdef'],
      ['a padded number', ' 1234 '],
    ])('refuses %s as INVALID_MFA_CODE', async (_what, bad) => {
      const user = await userWithTotp(t);
      expectError(await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: bad }), 401, 'INVALID_MFA_CODE');
    });

    it('unknown mfaToken → 401 INVALID_TOKEN; expired → 401 TOKEN_EXPIRED', async () => {
      expectError(await verify(t, { mfaToken: 'x'.repeat(43), type: 'totp', code: '123456' }), 401, 'INVALID_TOKEN');
      const user = await userWithTotp(t);
      const token = await mfaToken(t, user.email);
      t.clock.advance(301);
      expectError(await verify(t, { mfaToken: token, type: 'totp', code: code(t, user.secret) }), 401, 'TOKEN_EXPIRED');
    });

    it.each([
      ['an unknown type', { type: 'sms', code: '123456' }],
      ['a missing code', { type: 'totp' }],
      ['an unknown field', { type: 'totp', code: '123456', remember: true }],
    ])('refuses %s with 400 VALIDATION_FAILED', async (_what, body) => {
      expectError(await verify(t, { mfaToken: 'x'.repeat(43), ...body }), 400, 'VALIDATION_FAILED');
    });

    it('a TOTP code for a user who only has a security key is a wrong code', async () => {
      const user = await userWithSoftKey(t);
      expectError(await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: '123456' }), 401, 'INVALID_MFA_CODE');
    });

    it('the mfaToken is tied to the device of the login: another device gets INVALID_TOKEN and the token dies', async () => {
      const user = await userWithTotp(t);
      const laptop = JSON.stringify({
        canvas: 'c1',
        webglRenderer: 'w1',
        audio: 'a1',
        fonts: 'f1',
        screen: '1920x1080',
        cores: 8,
        tz: 'Europe/Paris',
      });
      const other = JSON.stringify({
        canvas: 'c2',
        webglRenderer: 'w2',
        audio: 'a2',
        fonts: 'f2',
        screen: '390x844',
        cores: 4,
        tz: 'Asia/Tokyo',
      });
      const token = await mfaToken(t, user.email, { deviceFingerprint: laptop });
      const stolen = await verify(t, { mfaToken: token, type: 'totp', code: code(t, user.secret), deviceFingerprint: other });
      expectError(stolen, 401, 'INVALID_TOKEN');
      expectError(
        await verify(t, { mfaToken: token, type: 'totp', code: code(t, user.secret), deviceFingerprint: laptop }),
        401,
        'INVALID_TOKEN',
      );
      expect((await auditEvents(t, user.id, 'mfa.failed'))[0].details).toMatchObject({ reason: 'device_mismatch' });
      // The same device, with or without repeating its fingerprint, is fine.
      const again = await mfaToken(t, user.email, { deviceFingerprint: laptop });
      expect((await verify(t, { mfaToken: again, type: 'totp', code: code(t, user.secret) })).status).toBe(200);
    });
  });

  describe('recovery codes', () => {
    it('a recovery code completes a login once (amr [pwd, otp]); the second use is refused', async () => {
      const user = await userWithTotp(t);
      const [first] = user.recoveryCodes;
      const res = await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'recovery', code: first.toUpperCase() });
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.tokens.accessToken).amr).toEqual(['pwd', 'otp']);
      expectError(await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'recovery', code: first }), 401, 'INVALID_MFA_CODE');
      const status = await t
        .api()
        .get(MFA)
        .set(...bearer(user.accessToken));
      expect(status.body.recoveryCodesRemaining).toBe(9);
      expectError(
        await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'recovery', code: 'aaaa-bbbb-cccc-dddd' }),
        401,
        'INVALID_MFA_CODE',
      );
    });

    it('a recovery code of another user does not work', async () => {
      const alice = await userWithTotp(t);
      const bob = await userWithTotp(t);
      expectError(
        await verify(t, { mfaToken: await mfaToken(t, bob.email), type: 'recovery', code: alice.recoveryCodes[0] }),
        401,
        'INVALID_MFA_CODE',
      );
    });

    it('one recovery code submitted twice at once: exactly one login succeeds', async () => {
      const user = await userWithTotp(t);
      const tokens = [await mfaToken(t, user.email), await mfaToken(t, user.email), await mfaToken(t, user.email)];
      const results = await Promise.all(tokens.map((mfa) => verify(t, { mfaToken: mfa, type: 'recovery', code: user.recoveryCodes[1] })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401]);
    });

    it('POST /mfa/recovery-codes: wrong password → 401 INVALID_CREDENTIALS; right → 10 new codes, the old ones stop working', async () => {
      const user = await userWithTotp(t);
      expectError(
        await t
          .api()
          .post(`${MFA}/recovery-codes`)
          .set(...bearer(user.accessToken))
          .send({ password: 'wrong password 123' }),
        401,
        'INVALID_CREDENTIALS',
      );
      expectError(
        await t
          .api()
          .post(`${MFA}/recovery-codes`)
          .set(...bearer(user.accessToken))
          .send({}),
        400,
        'VALIDATION_FAILED',
      );
      const res = await t
        .api()
        .post(`${MFA}/recovery-codes`)
        .set(...bearer(user.accessToken))
        .send({ password: PASSWORD });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['recoveryCodes']);
      expect(res.body.recoveryCodes).toHaveLength(10);
      expect(res.body.recoveryCodes.filter((c: string) => user.recoveryCodes.includes(c))).toEqual([]);
      expect((await notices(t, user.email)).at(-1)).toContain('New recovery codes were generated');
      expectError(
        await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'recovery', code: user.recoveryCodes[2] }),
        401,
        'INVALID_MFA_CODE',
      );
      expect((await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'recovery', code: res.body.recoveryCodes[0] })).status).toBe(
        200,
      );
    });

    it('POST /mfa/recovery-codes without MFA → 409 INVALID_USER_STATE', async () => {
      const { accessToken } = await signedInUser(t);
      expectError(
        await t
          .api()
          .post(`${MFA}/recovery-codes`)
          .set(...bearer(accessToken))
          .send({ password: PASSWORD }),
        409,
        'INVALID_USER_STATE',
      );
    });
  });

  describe('DELETE /mfa/totp', () => {
    it('needs the password; removing the last factor turns MFA off, deletes the recovery codes and audits mfa.disabled', async () => {
      const user = await userWithTotp(t);
      expectError(
        await t
          .api()
          .delete(`${MFA}/totp`)
          .set(...bearer(user.accessToken))
          .send({ password: 'not the password 1' }),
        401,
        'INVALID_CREDENTIALS',
      );
      expectError(
        await t
          .api()
          .delete(`${MFA}/totp`)
          .set(...bearer(user.accessToken))
          .send({}),
        400,
        'VALIDATION_FAILED',
      );
      expect((await login(t, user.email)).body.requiresMfa).toBe(true);

      const res = await t
        .api()
        .delete(`${MFA}/totp`)
        .set(...bearer(user.accessToken))
        .send({ password: PASSWORD });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ mfa: { enabled: false, methods: [] } });
      const signIn = await login(t, user.email);
      expect(signIn.body.requiresMfa).toBe(false);
      expect(signIn.body.user.mfaEnabled).toBe(false);
      const status = await t
        .api()
        .get(MFA)
        .set(...bearer(user.accessToken));
      expect(status.body).toEqual({ enabled: false, methods: [], webauthnCredentials: [], recoveryCodesRemaining: 0 });
      expect((await auditEvents(t, user.id, 'mfa.disabled'))[0].details).toEqual({ method: 'totp', mfaEnabled: false });
      expect((await notices(t, user.email)).at(-1)).toContain('two-step sign-in is now off');
      expectError(
        await t
          .api()
          .delete(`${MFA}/totp`)
          .set(...bearer(user.accessToken))
          .send({ password: PASSWORD }),
        404,
        'NOT_FOUND',
      );
    });

    it('after re-enrolling, codes of the old secret no longer work', async () => {
      const user = await userWithTotp(t);
      await t
        .api()
        .delete(`${MFA}/totp`)
        .set(...bearer(user.accessToken))
        .send({ password: PASSWORD })
        .expect(200);
      const setup = await t
        .api()
        .post(`${MFA}/totp/setup`)
        .set(...bearer(user.accessToken));
      midStep(t);
      await t
        .api()
        .post(`${MFA}/totp/confirm`)
        .set(...bearer(user.accessToken))
        .send({ code: code(t, setup.body.secret) })
        .expect(200);
      nextStep(t);
      expectError(
        await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: code(t, user.secret) }),
        401,
        'INVALID_MFA_CODE',
      );
      expect((await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: code(t, setup.body.secret) })).status).toBe(
        200,
      );
    });

    it('with a security key left, MFA stays on with the key and keeps the recovery codes', async () => {
      const user = await userWithTotp(t);
      const key = await addSoftKey(t, user.accessToken, 'Backup key');
      expect(key.body.recoveryCodes).toBeUndefined();
      expect(key.body.mfa).toEqual({ enabled: true, methods: ['totp', 'webauthn'] });
      const res = await t
        .api()
        .delete(`${MFA}/totp`)
        .set(...bearer(user.accessToken))
        .send({ password: PASSWORD });
      expect(res.body).toEqual({ mfa: { enabled: true, methods: ['webauthn'] } });
      expect(
        (
          await t
            .api()
            .get(MFA)
            .set(...bearer(user.accessToken))
        ).body.recoveryCodesRemaining,
      ).toBe(10);
      expect((await login(t, user.email)).body.mfaMethods).toEqual(['webauthn']);
    });
  });

  describe('WebAuthn registration', () => {
    it('options: creation options for the configured RP, user verification required, a fresh ≥16-byte challenge each time, existing keys excluded', async () => {
      const user = await userWithSoftKey(t);
      const a = await t
        .api()
        .post(`${MFA}/webauthn/register/options`)
        .set(...bearer(user.accessToken))
        .send({ name: 'Second' });
      const b = await t
        .api()
        .post(`${MFA}/webauthn/register/options`)
        .set(...bearer(user.accessToken));
      expect(a.status).toBe(200);
      expect(a.body).toMatchObject({
        rp: { id: 'localhost', name: expect.any(String) },
        user: { name: user.email, id: expect.any(String) },
        challenge: expect.any(String),
        pubKeyCredParams: expect.arrayContaining([{ alg: -7, type: 'public-key' }]),
        attestation: 'none',
        authenticatorSelection: expect.objectContaining({ userVerification: 'required' }),
        excludeCredentials: [{ id: user.credentialId, type: 'public-key', transports: ['usb'] }],
      });
      expect(Buffer.from(a.body.challenge, 'base64url').length).toBeGreaterThanOrEqual(16);
      expect(b.body.challenge).not.toBe(a.body.challenge);
    });

    it.each([
      ['an empty name', { name: '   ' }],
      ['a 65-character name', { name: 'n'.repeat(65) }],
      ['an unknown field', { name: 'ok', userId: 'x' }],
    ])('options with %s → 400 VALIDATION_FAILED', async (_what, body) => {
      const { accessToken } = await signedInUser(t);
      expectError(
        await t
          .api()
          .post(`${MFA}/webauthn/register/options`)
          .set(...bearer(accessToken))
          .send(body),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('verify stores the credential with its name, returns recovery codes for the first factor, audits mfa.enabled', async () => {
      const { accessToken, id, email } = await signedInUser(t);
      const options = await t
        .api()
        .post(`${MFA}/webauthn/register/options`)
        .set(...bearer(accessToken))
        .send({ name: 'YubiKey' });
      const key = new SoftAuthenticator();
      const res = await t
        .api()
        .post(`${MFA}/webauthn/register/verify`)
        .set(...bearer(accessToken))
        .send({ response: key.attestation(options.body) });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        credential: { id: key.id, name: 'YubiKey', createdAt: expect.stringMatching(/Z$/) },
        mfa: { enabled: true, methods: ['webauthn'] },
        recoveryCodes: expect.any(Array),
      });
      expect(res.body.recoveryCodes).toHaveLength(10);
      expect((await auditEvents(t, id, 'mfa.enabled'))[0].details).toMatchObject({ method: 'webauthn', credentialId: key.id });
      expect(await notices(t, email)).toEqual([expect.stringContaining('("YubiKey") was added')]);
      expect((await login(t, email)).body).toMatchObject({ requiresMfa: true, mfaMethods: ['webauthn'] });
      const second = await addSoftKey(t, accessToken, 'Phone');
      expect(second.body).toEqual({
        credential: { id: second.authenticator.id, name: 'Phone', createdAt: expect.any(String) },
        mfa: { enabled: true, methods: ['webauthn'] },
      });
    });

    it('a name given at verify wins over the one given with the options', async () => {
      const { accessToken } = await signedInUser(t);
      const options = await t
        .api()
        .post(`${MFA}/webauthn/register/options`)
        .set(...bearer(accessToken))
        .send({ name: 'First name' });
      const key = new SoftAuthenticator();
      const res = await t
        .api()
        .post(`${MFA}/webauthn/register/verify`)
        .set(...bearer(accessToken))
        .send({ response: key.attestation(options.body), name: 'Final name' });
      expect(res.body.credential.name).toBe('Final name');
    });

    it('refuses a wrong origin, a replayed challenge, an unknown challenge and a missing user verification with 400 VALIDATION_FAILED', async () => {
      const { accessToken } = await signedInUser(t);
      const register = async (tamper: Parameters<SoftAuthenticator['attestation']>[1] = {}, key = new SoftAuthenticator()) => {
        const options = await t
          .api()
          .post(`${MFA}/webauthn/register/options`)
          .set(...bearer(accessToken));
        const response = key.attestation(options.body, tamper);
        return {
          response,
          res: await t
            .api()
            .post(`${MFA}/webauthn/register/verify`)
            .set(...bearer(accessToken))
            .send({ response }),
        };
      };
      expectError((await register({ origin: 'http://localhost:3001' })).res, 400, 'VALIDATION_FAILED');
      expectError((await register({ origin: 'https://evil.test' })).res, 400, 'VALIDATION_FAILED');
      expectError((await register({ rpId: 'evil.test' })).res, 400, 'VALIDATION_FAILED');
      expectError((await register({ type: 'webauthn.get' })).res, 400, 'VALIDATION_FAILED');
      expectError((await register({ userVerified: false })).res, 400, 'VALIDATION_FAILED');
      const ok = await register();
      expect(ok.res.status).toBe(200);
      // The same attestation again: its challenge is used up.
      expectError(
        await t
          .api()
          .post(`${MFA}/webauthn/register/verify`)
          .set(...bearer(accessToken))
          .send({ response: ok.response }),
        400,
        'VALIDATION_FAILED',
      );
      // A challenge the server never issued.
      const forged = new SoftAuthenticator().attestation({ challenge: Buffer.alloc(32, 7).toString('base64url') });
      expectError(
        await t
          .api()
          .post(`${MFA}/webauthn/register/verify`)
          .set(...bearer(accessToken))
          .send({ response: forged }),
        400,
        'VALIDATION_FAILED',
      );
      expectError(
        await t
          .api()
          .post(`${MFA}/webauthn/register/verify`)
          .set(...bearer(accessToken))
          .send({ response: 'text' }),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('a challenge expires with the ceremony timeout (5 minutes)', async () => {
      const { accessToken } = await signedInUser(t);
      const options = await t
        .api()
        .post(`${MFA}/webauthn/register/options`)
        .set(...bearer(accessToken));
      t.clock.advance(301);
      const res = await t
        .api()
        .post(`${MFA}/webauthn/register/verify`)
        .set(...bearer(accessToken))
        .send({ response: new SoftAuthenticator().attestation(options.body) });
      expectError(res, 400, 'VALIDATION_FAILED');
    });

    it("a challenge is bound to the user who asked for it: alice's options in bob's registration → 400", async () => {
      const alice = await signedInUser(t);
      const bob = await signedInUser(t);
      const options = await t
        .api()
        .post(`${MFA}/webauthn/register/options`)
        .set(...bearer(alice.accessToken));
      const res = await t
        .api()
        .post(`${MFA}/webauthn/register/verify`)
        .set(...bearer(bob.accessToken))
        .send({ response: new SoftAuthenticator().attestation(options.body) });
      expectError(res, 400, 'VALIDATION_FAILED');
    });

    it('a credential id is unique across users: the same authenticator cannot be registered by bob', async () => {
      const alice = await userWithSoftKey(t);
      const bob = await signedInUser(t);
      const options = await t
        .api()
        .post(`${MFA}/webauthn/register/options`)
        .set(...bearer(bob.accessToken));
      const res = await t
        .api()
        .post(`${MFA}/webauthn/register/verify`)
        .set(...bearer(bob.accessToken))
        .send({ response: alice.authenticator.attestation(options.body) });
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(
        (
          await t
            .api()
            .get(MFA)
            .set(...bearer(bob.accessToken))
        ).body.enabled,
      ).toBe(false);
    });
  });

  describe('WebAuthn as the second login step', () => {
    it('POST /mfa/webauthn/options answers request options bound to the mfaToken; verify opens a session with amr [pwd, hwk]', async () => {
      const user = await userWithSoftKey(t);
      const token = await mfaToken(t, user.email);
      const { options, assertion } = await webauthnAnswer(t, token, user.authenticator);
      expect(options).toMatchObject({
        challenge: expect.any(String),
        rpId: 'localhost',
        userVerification: 'required',
        allowCredentials: [{ id: user.credentialId, type: 'public-key', transports: ['usb'] }],
      });
      const res = await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(assertion) });
      expect(res.status).toBe(200);
      expect(res.body.user).toEqual({ id: user.id, email: user.email, emailVerified: false, mfaEnabled: true });
      expect(decodeJwt(res.body.tokens.accessToken).amr).toEqual(['pwd', 'hwk']);
      const status = await t
        .api()
        .get(MFA)
        .set(...bearer(user.accessToken));
      expect(status.body.webauthnCredentials[0].lastUsedAt).toEqual(expect.stringMatching(/Z$/));
      const stored: { counter: string }[] = await t.dataSource.query(`SELECT counter FROM webauthn_credentials WHERE id = $1`, [
        user.credentialId,
      ]);
      expect(Number(stored[0].counter)).toBe(user.authenticator.counter);
    });

    it('options: unknown mfaToken → 401 INVALID_TOKEN, expired → 401 TOKEN_EXPIRED, no key registered → 400 VALIDATION_FAILED', async () => {
      expectError(
        await t
          .api()
          .post(`${MFA}/webauthn/options`)
          .send({ mfaToken: 'y'.repeat(43) }),
        401,
        'INVALID_TOKEN',
      );
      expectError(await t.api().post(`${MFA}/webauthn/options`).send({}), 400, 'VALIDATION_FAILED');
      const totpOnly = await userWithTotp(t);
      expectError(
        await t
          .api()
          .post(`${MFA}/webauthn/options`)
          .send({ mfaToken: await mfaToken(t, totpOnly.email) }),
        400,
        'VALIDATION_FAILED',
      );
      const user = await userWithSoftKey(t);
      const token = await mfaToken(t, user.email);
      t.clock.advance(301);
      expectError(await t.api().post(`${MFA}/webauthn/options`).send({ mfaToken: token }), 401, 'TOKEN_EXPIRED');
    });

    it('refuses an assertion from a wrong origin with INVALID_MFA_CODE', async () => {
      const user = await userWithSoftKey(t);
      const token = await mfaToken(t, user.email);
      const { assertion } = await webauthnAnswer(t, token, user.authenticator, { origin: 'http://localhost:3001' });
      expectError(await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(assertion) }), 401, 'INVALID_MFA_CODE');
      expect((await auditEvents(t, user.id, 'mfa.failed'))[0].details).toMatchObject({ type: 'webauthn', reason: 'origin' });
    });

    it.each([
      ['another RP id', { rpId: 'evil.test' }],
      ['no user verification', { userVerified: false }],
      ['no user presence', { userPresent: false }],
      ['a registration type', { type: 'webauthn.create' }],
    ])('refuses an assertion with %s', async (_what, tamper) => {
      const user = await userWithSoftKey(t);
      const token = await mfaToken(t, user.email);
      const { assertion } = await webauthnAnswer(t, token, user.authenticator, tamper);
      expectError(await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(assertion) }), 401, 'INVALID_MFA_CODE');
    });

    it('an untampered hand-made assertion is the control: it passes', async () => {
      const user = await userWithSoftKey(t);
      const token = await mfaToken(t, user.email);
      const { assertion } = await webauthnAnswer(t, token, user.authenticator);
      expect((await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(assertion) })).status).toBe(200);
    });

    it('replayed challenge: an assertion accepted once is refused in a later login, and a challenge answers only once', async () => {
      const user = await userWithSoftKey(t);
      const first = await mfaToken(t, user.email);
      const { assertion } = await webauthnAnswer(t, first, user.authenticator);
      await verify(t, { mfaToken: first, type: 'webauthn', code: JSON.stringify(assertion) }).expect(200);

      const second = await mfaToken(t, user.email);
      await t.api().post(`${MFA}/webauthn/options`).send({ mfaToken: second }).expect(200);
      expectError(await verify(t, { mfaToken: second, type: 'webauthn', code: JSON.stringify(assertion) }), 401, 'INVALID_MFA_CODE');
      expect((await auditEvents(t, user.id, 'mfa.failed'))[0].details).toMatchObject({ reason: 'challenge' });

      // One challenge, one answer: after a failed answer the valid one needs new options.
      const third = await mfaToken(t, user.email);
      const { options, assertion: bad } = await webauthnAnswer(t, third, user.authenticator, { origin: 'https://evil.test' });
      expectError(await verify(t, { mfaToken: third, type: 'webauthn', code: JSON.stringify(bad) }), 401, 'INVALID_MFA_CODE');
      const good = user.authenticator.assertion(options);
      expectError(await verify(t, { mfaToken: third, type: 'webauthn', code: JSON.stringify(good) }), 401, 'INVALID_MFA_CODE');
      // Without options at all there is no challenge to answer.
      expectError(
        await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'webauthn', code: JSON.stringify(good) }),
        401,
        'INVALID_MFA_CODE',
      );
    });

    it("alice's assertion in bob's login is refused", async () => {
      const alice = await userWithSoftKey(t);
      const bob = await userWithSoftKey(t);
      const token = await mfaToken(t, bob.email);
      const { options } = await webauthnAnswer(t, token, bob.authenticator);
      const res = await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(alice.authenticator.assertion(options)) });
      expectError(res, 401, 'INVALID_MFA_CODE');
    });

    it('counter regression: a cloned authenticator is refused, and audited as such', async () => {
      const user = await userWithSoftKey(t);
      const clone = user.authenticator.clone();
      for (let i = 0; i < 2; i += 1) {
        const token = await mfaToken(t, user.email);
        const { assertion } = await webauthnAnswer(t, token, user.authenticator);
        await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(assertion) }).expect(200);
      }
      const token = await mfaToken(t, user.email);
      const { assertion } = await webauthnAnswer(t, token, clone);
      expect(clone.counter).toBeLessThan(user.authenticator.counter);
      expectError(await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(assertion) }), 401, 'INVALID_MFA_CODE');
      const failed = await auditEvents(t, user.id, 'mfa.failed');
      expect(failed[0].details).toMatchObject({
        reason: 'counter_regression',
        credentialId: user.credentialId,
        storedCounter: 2,
        receivedCounter: 1,
      });
      // An equal counter is a regression too (another user: the first regression disabled this key).
      const other = await userWithSoftKey(t);
      const used = await mfaToken(t, other.email);
      const once = await webauthnAnswer(t, used, other.authenticator);
      await verify(t, { mfaToken: used, type: 'webauthn', code: JSON.stringify(once.assertion) }).expect(200);
      const again = await mfaToken(t, other.email);
      const same = await webauthnAnswer(t, again, other.authenticator, { counter: other.authenticator.counter });
      expectError(await verify(t, { mfaToken: again, type: 'webauthn', code: JSON.stringify(same.assertion) }), 401, 'INVALID_MFA_CODE');
      expect((await auditEvents(t, other.id, 'mfa.failed'))[0].details).toMatchObject({
        reason: 'counter_regression',
        storedCounter: 1,
        receivedCounter: 1,
        credentialDisabled: true,
      });
    });

    it('malformed answers are wrong codes and count towards the five', async () => {
      const user = await userWithSoftKey(t);
      const token = await mfaToken(t, user.email);
      for (const bad of ['{', '"text"', '{}', JSON.stringify({ id: 'nope', response: {} })]) {
        await t.api().post(`${MFA}/webauthn/options`).send({ mfaToken: token }).expect(200);
        expectError(await verify(t, { mfaToken: token, type: 'webauthn', code: bad }), 401, 'INVALID_MFA_CODE');
      }
      expectError(await verify(t, { mfaToken: token, type: 'webauthn', code: '[]' }), 401, 'INVALID_MFA_CODE');
      expectError(await t.api().post(`${MFA}/webauthn/options`).send({ mfaToken: token }), 401, 'INVALID_TOKEN');
    });
  });

  describe('DELETE /mfa/webauthn/:credentialId', () => {
    it('needs the password, only removes own credentials, and a removed key no longer signs in', async () => {
      const user = await userWithSoftKey(t);
      const extra = await addSoftKey(t, user.accessToken, 'Spare');
      const other = await userWithSoftKey(t);
      const del = (id: string, password: unknown) =>
        t
          .api()
          .delete(`${MFA}/webauthn/${encodeURIComponent(id)}`)
          .set(...bearer(user.accessToken))
          .send({ password });
      expectError(await del(user.credentialId, 'wrong password 99'), 401, 'INVALID_CREDENTIALS');
      expectError(await del(other.credentialId, PASSWORD), 404, 'NOT_FOUND');
      expectError(await del('unknown-id', PASSWORD), 404, 'NOT_FOUND');
      expectError(
        await t
          .api()
          .delete(`${MFA}/webauthn/${user.credentialId}`)
          .set(...bearer(user.accessToken))
          .send({}),
        400,
        'VALIDATION_FAILED',
      );

      const res = await del(extra.authenticator.id, PASSWORD);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ mfa: { enabled: true, methods: ['webauthn'] } });
      expect((await auditEvents(t, user.id, 'mfa.disabled'))[0].details).toEqual({
        method: 'webauthn',
        credentialId: extra.authenticator.id,
        mfaEnabled: true,
      });
      expect((await notices(t, user.email)).at(-1)).toContain('security key or passkey was removed');

      const token = await mfaToken(t, user.email);
      const { assertion } = await webauthnAnswer(t, token, extra.authenticator);
      expectError(await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(assertion) }), 401, 'INVALID_MFA_CODE');

      const last = await del(user.credentialId, PASSWORD);
      expect(last.body).toEqual({ mfa: { enabled: false, methods: [] } });
      expect((await login(t, user.email)).body.requiresMfa).toBe(false);
      expect(
        (
          await t
            .api()
            .get(MFA)
            .set(...bearer(user.accessToken))
        ).body.recoveryCodesRemaining,
      ).toBe(0);
    });
  });

  describe('MFA_REQUIRED: re-verification of a flagged session', () => {
    const laptop = JSON.stringify({
      canvas: 'c-laptop',
      webglRenderer: 'w-laptop',
      audio: 'a-laptop',
      fonts: 'f-laptop',
      screen: '2560x1440',
      cores: 12,
      tz: 'Europe/Berlin',
    });
    const intruder = JSON.stringify({
      canvas: 'c-x',
      webglRenderer: 'w-x',
      audio: 'a-x',
      fonts: 'f-x',
      screen: '800x600',
      cores: 2,
      tz: 'America/Lima',
    });

    it('a refresh from another device gets 401 MFA_REQUIRED with an mfaToken; verifying it restores the SAME session for that device and kills older refresh tokens', async () => {
      const user = await userWithTotp(t);
      const token = await mfaToken(t, user.email, { deviceFingerprint: laptop });
      const signedIn = await verify(t, { mfaToken: token, type: 'totp', code: code(t, user.secret), deviceFingerprint: laptop });
      expect(signedIn.status).toBe(200);
      const sid = decodeJwt(signedIn.body.tokens.accessToken).sid;

      const refused = await t
        .api()
        .post('/api/v1/auth/refresh')
        .set('User-Agent', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0')
        .send({ refreshToken: signedIn.body.tokens.refreshToken, deviceFingerprint: intruder });
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({
        error: { code: 'MFA_REQUIRED', message: expect.any(String), status: 401, mfaToken: expect.any(String) },
      });

      nextStep(t);
      const reverified = await verify(t, {
        mfaToken: refused.body.error.mfaToken,
        type: 'totp',
        code: code(t, user.secret),
        deviceFingerprint: intruder,
      }).set('User-Agent', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0');
      expect(reverified.status).toBe(200);
      expect(reverified.body.user).toEqual({ id: user.id, email: user.email, emailVerified: false, mfaEnabled: true });
      expect(decodeJwt(reverified.body.tokens.accessToken)).toMatchObject({ sid, amr: ['pwd', 'otp'] });
      expect((await auditEvents(t, user.id, 'mfa.succeeded')).at(-1)!.details).toMatchObject({ purpose: 'reverify', type: 'totp' });

      const rows: { status: string; flag_reason: string | null }[] = await t.dataSource.query(
        `SELECT status, flag_reason FROM sessions WHERE id = $1`,
        [sid],
      );
      expect(rows[0]).toEqual({ status: 'active', flag_reason: null });
      // The refresh token from before the flag is dead; the new one works from the verifying device.
      expectError(
        await t.api().post('/api/v1/auth/refresh').send({ refreshToken: signedIn.body.tokens.refreshToken, deviceFingerprint: laptop }),
        401,
        'INVALID_TOKEN',
      );
      const next = await t
        .api()
        .post('/api/v1/auth/refresh')
        .set('User-Agent', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0')
        .send({ refreshToken: reverified.body.tokens.refreshToken, deviceFingerprint: intruder });
      expect(next.status).toBe(200);
      expect(decodeJwt(next.body.tokens.accessToken).sid).toBe(sid);
    });

    it('a re-verification for a session that has ended since → 401 INVALID_TOKEN', async () => {
      const user = await userWithTotp(t);
      const token = await mfaToken(t, user.email, { deviceFingerprint: laptop });
      const signedIn = await verify(t, { mfaToken: token, type: 'totp', code: code(t, user.secret), deviceFingerprint: laptop });
      const refused = await t
        .api()
        .post('/api/v1/auth/refresh')
        .send({ refreshToken: signedIn.body.tokens.refreshToken, deviceFingerprint: intruder });
      expect(refused.body.error.code).toBe('MFA_REQUIRED');
      await t.api().post('/api/v1/auth/logout').send({ refreshToken: signedIn.body.tokens.refreshToken }).expect(200);
      nextStep(t);
      expectError(
        await verify(t, { mfaToken: refused.body.error.mfaToken, type: 'totp', code: code(t, user.secret), deviceFingerprint: intruder }),
        401,
        'INVALID_TOKEN',
      );
    });
  });

  describe('account isolation', () => {
    it('an mfaToken of one realm is unknown in another', async () => {
      const user = await userWithTotp(t);
      const token = await mfaToken(t, user.email);
      const res = await t
        .api()
        .post('/api/v1/auth/mfa/verify')
        .set('X-Realm-Id', 'master')
        .send({ mfaToken: token, type: 'totp', code: code(t, user.secret) });
      expectError(res, 401, 'INVALID_TOKEN');
    });

    it('registration users are unaffected by others enabling MFA', async () => {
      const plain = await register(t, uniqueEmail('plain'));
      await userWithTotp(t);
      expect((await login(t, plain.email)).body.requiresMfa).toBe(false);
    });
  });
});

describe('POST /mfa/verify rate limit (5 per minute per user)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_MFA_VERIFY: '5/60' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('guessing is limited per user across fresh mfaTokens: the 6th attempt → 429 RATE_LIMITED with Retry-After; other users are unaffected', async () => {
    const user = await userWithTotp(t);
    const other = await userWithTotp(t);
    const right = code(t, user.secret);
    const wrong = right === '000000' ? '000001' : '000000';
    for (let i = 0; i < 5; i += 1) {
      // A new password login each time: the limit follows the user, not the token.
      expectError(await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: wrong }), 401, 'INVALID_MFA_CODE');
    }
    const limited = await verify(t, { mfaToken: await mfaToken(t, user.email), type: 'totp', code: right });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await verify(t, { mfaToken: await mfaToken(t, other.email), type: 'totp', code: code(t, other.secret) })).status).toBe(200);
  });
});
