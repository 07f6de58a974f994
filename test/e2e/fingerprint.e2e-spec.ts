import speakeasy from 'speakeasy';
import { bearer, PASSWORD, register, uniqueEmail } from '../support/flows';
import { Device, fingerprintOf, from, ListedSession, MAC_CHROME, MAC_CHROME_DRIFTED, WINDOWS_FIREFOX } from '../support/devices';
import { createTestApp, TestApp } from '../support/test-app';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ADMIN_EMAIL = 'root@example.com';
const ADMIN_PASSWORD = 'an admin passphrase for tests';

function sidOf(accessToken: string): string {
  return JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString()).sid;
}

function claimsOf(accessToken: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString());
}

// Booting the app on a fresh database takes seconds on a busy machine.
jest.setTimeout(60_000);

describe('hijack detection on refresh', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { TRUST_PROXY: 'loopback', BOOTSTRAP_ADMIN_EMAIL: ADMIN_EMAIL, BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  async function signIn(email: string, device: Device, via: 'body' | 'header' = 'body') {
    const req = from(t.api().post('/api/v1/auth/login'), device);
    if (via === 'header' && device.components) req.set('X-Device-Fingerprint', fingerprintOf(device)!);
    const res = await req.send({ email, password: PASSWORD, ...(via === 'body' ? { deviceFingerprint: fingerprintOf(device) } : {}) });
    expect(res.status).toBe(200);
    return {
      accessToken: res.body.tokens.accessToken as string,
      refreshToken: res.body.tokens.refreshToken as string,
      sid: sidOf(res.body.tokens.accessToken),
    };
  }

  function refresh(refreshToken: string, device: Device, via: 'body' | 'header' = 'body') {
    const req = from(t.api().post('/api/v1/auth/refresh'), device);
    if (via === 'header' && device.components) req.set('X-Device-Fingerprint', fingerprintOf(device)!);
    return req.send({ refreshToken, ...(via === 'body' ? { deviceFingerprint: fingerprintOf(device) } : {}) });
  }

  async function events(userId: string, type: string) {
    return t.dataSource.query(
      `SELECT session_id AS "sessionId", ip, details FROM audit_events WHERE user_id = $1 AND type = $2 ORDER BY at`,
      [userId, type],
    ) as Promise<{ sessionId: string | null; ip: string | null; details: { score?: number; [key: string]: unknown } }[]>;
  }

  async function securityNotices(email: string) {
    return t.dataSource.query(
      `SELECT subject, text_body AS "text" FROM email_outbox WHERE recipient = $1 AND subject LIKE 'Security notice%'`,
      [email],
    ) as Promise<{ subject: string; text: string }[]>;
  }

  async function sessionRow(id: string) {
    const [row] = await t.dataSource.query(
      `SELECT status, flag_reason AS "flagReason", flag_score AS "flagScore", flagged_at AS "flaggedAt", revoked_at AS "revokedAt", revoke_reason AS "revokeReason"
       FROM sessions WHERE id = $1`,
      [id],
    );
    return row as {
      status: string;
      flagReason: string | null;
      flagScore: number | null;
      flaggedAt: Date | null;
      revokedAt: Date | null;
      revokeReason: string | null;
    };
  }

  async function ownSessions(accessToken: string) {
    const res = await t
      .api()
      .get('/api/v1/auth/sessions')
      .set(...bearer(accessToken));
    expect(res.status).toBe(200);
    return res.body.sessions as ListedSession[];
  }

  /** MFA switched on behind the user's back, so that the session opened before it is a password session of an MFA user. */
  async function enableTotpDirectly(userId: string) {
    await t.dataSource.query(
      `INSERT INTO totp_credentials (user_id, secret_encrypted, confirmed_at, created_at) VALUES ($1, 'unused', now(), now())`,
      [userId],
    );
  }

  async function adminToken() {
    const res = await t.api().post('/api/v1/auth/login').set('X-Realm-Id', 'master').send({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    expect(res.status).toBe(200);
    return res.body.tokens.accessToken as string;
  }

  describe('a matching device', () => {
    it('lets a refresh through after a browser update, a trip to another network and another time zone', async () => {
      const user = await register(t, uniqueEmail());
      const session = await signIn(user.email, MAC_CHROME);
      const first = await refresh(session.refreshToken, MAC_CHROME_DRIFTED);
      expect(first.status).toBe(200);
      expect(sidOf(first.body.tokens.accessToken)).toBe(session.sid);
      const second = await refresh(first.body.tokens.refreshToken, MAC_CHROME_DRIFTED);
      expect(second.status).toBe(200);

      const [listed] = await ownSessions(second.body.tokens.accessToken);
      expect(listed).toMatchObject({ id: session.sid, status: 'active', flag: null, ip: MAC_CHROME_DRIFTED.ip });
      expect(await events(user.id, 'session.flagged')).toEqual([]);
      expect(await securityNotices(user.email)).toEqual([]);
    });

    it('reads the fingerprint from the X-Device-Fingerprint header as from the body', async () => {
      const user = await register(t, uniqueEmail());
      const session = await signIn(user.email, MAC_CHROME, 'header');
      const same = await refresh(session.refreshToken, MAC_CHROME, 'header');
      expect(same.status).toBe(200);
      const other = await refresh(same.body.tokens.refreshToken, { ...MAC_CHROME, components: WINDOWS_FIREFOX.components }, 'header');
      expect(other.status).toBe(401);
      expect(other.body.error.code).toBe('REAUTHENTICATION_REQUIRED');
    });

    it('compares a session opened without a fingerprint on what the server observes alone', async () => {
      const user = await register(t, uniqueEmail());
      const session = await signIn(user.email, { ...MAC_CHROME, components: null });
      // The client fingerprint sent later is not held against it; a new network is a soft change.
      const same = await refresh(session.refreshToken, { ...MAC_CHROME, ip: '198.51.100.9' });
      expect(same.status).toBe(200);
      const other = await refresh(same.body.tokens.refreshToken, { ...WINDOWS_FIREFOX, components: null });
      expect(other.status).toBe(401);
      expect(other.body.error.code).toBe('REAUTHENTICATION_REQUIRED');
    });
  });

  describe('a different device, user without MFA', () => {
    it('flags and revokes the session: 401 REAUTHENTICATION_REQUIRED, then its refresh and access tokens are dead', async () => {
      const user = await register(t, uniqueEmail());
      const session = await signIn(user.email, MAC_CHROME);

      const res = await refresh(session.refreshToken, WINDOWS_FIREFOX);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { code: 'REAUTHENTICATION_REQUIRED', message: expect.any(String), status: 401 } });

      // The owner's own device is turned away too: the session is over.
      const again = await refresh(session.refreshToken, MAC_CHROME);
      expect(again.status).toBe(401);
      expect(again.body.error.code).toBe('INVALID_TOKEN');
      const me = await t
        .api()
        .get('/api/v1/auth/me')
        .set(...bearer(session.accessToken));
      expect(me.status).toBe(401);
      expect(me.body.error.code).toBe('INVALID_TOKEN');

      const [flagged] = await events(user.id, 'session.flagged');
      expect(flagged).toEqual({
        sessionId: session.sid,
        ip: WINDOWS_FIREFOX.ip,
        details: { reason: 'fingerprint_mismatch', score: expect.any(Number), threshold: 0.7, device: 'Firefox 133 on Windows' },
      });
      expect(flagged.details.score).toBeGreaterThanOrEqual(0);
      expect(flagged.details.score).toBeLessThan(0.7);
      expect(await events(user.id, 'session.revoked')).toEqual([
        { sessionId: session.sid, ip: WINDOWS_FIREFOX.ip, details: { reason: 'fingerprint_mismatch' } },
      ]);
      const row = await sessionRow(session.sid);
      expect(row).toMatchObject({ status: 'flagged', flagReason: 'fingerprint_mismatch', revokeReason: 'fingerprint_mismatch' });
      expect(Number(row.flagScore)).toBeCloseTo(Number(flagged.details.score), 6);
      expect(row.revokedAt).not.toBeNull();

      const notices = await securityNotices(user.email);
      expect(notices).toHaveLength(1);
      expect(notices[0].text).toContain('Firefox 133 on Windows');
      expect(notices[0].text).toContain(WINDOWS_FIREFOX.ip);
      expect(notices[0].text).toContain('sign in again');
    });

    it('answers a refresh token rotated long ago as reuse (session revoked, INVALID_TOKEN), whatever the device', async () => {
      const user = await register(t, uniqueEmail());
      const session = await signIn(user.email, MAC_CHROME);
      expect((await refresh(session.refreshToken, MAC_CHROME)).status).toBe(200);
      t.clock.advance(t.config.refreshReuseLeewaySeconds + 1);
      const res = await refresh(session.refreshToken, WINDOWS_FIREFOX);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('INVALID_TOKEN');
      expect(await events(user.id, 'refresh.reused')).toHaveLength(1);
      expect(await events(user.id, 'session.flagged')).toEqual([]);
    });

    it('refuses a malformed fingerprint with 400 VALIDATION_FAILED and flags nothing', async () => {
      const user = await register(t, uniqueEmail());
      const session = await signIn(user.email, MAC_CHROME);
      const res = await from(t.api().post('/api/v1/auth/refresh'), MAC_CHROME).send({
        refreshToken: session.refreshToken,
        deviceFingerprint: JSON.stringify({ canvas: { nested: true } }),
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [expect.objectContaining({ field: 'deviceFingerprint' })],
      });
      expect((await sessionRow(session.sid)).status).toBe('active');
      expect((await refresh(session.refreshToken, MAC_CHROME)).status).toBe(200);
    });
  });

  describe('a different device, user with MFA', () => {
    it('flags the session and answers 401 MFA_REQUIRED with an mfaToken; the session shows as flagged and stays refused', async () => {
      const user = await register(t, uniqueEmail());
      const session = await signIn(user.email, MAC_CHROME);
      await enableTotpDirectly(user.id);

      const res = await refresh(session.refreshToken, WINDOWS_FIREFOX);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        error: { code: 'MFA_REQUIRED', message: expect.any(String), status: 401, mfaToken: expect.stringMatching(/^[A-Za-z0-9_-]{43,}$/) },
      });
      const [challenge] = await t.dataSource.query(
        `SELECT kind, payload, expires_at AS "expiresAt", used_at AS "usedAt" FROM one_time_tokens WHERE user_id = $1 AND kind = 'mfa'`,
        [user.id],
      );
      expect(challenge.payload).toMatchObject({ purpose: 'reverify', sessionId: session.sid, client: { ip: WINDOWS_FIREFOX.ip } });
      expect(challenge.usedAt).toBeNull();

      const [flagged] = await events(user.id, 'session.flagged');
      expect(flagged.details).toMatchObject({ reason: 'fingerprint_mismatch', threshold: 0.7 });
      expect(await events(user.id, 'session.revoked')).toEqual([]);

      // The owner's list (the session is still live) shows the flag.
      const [listed] = await ownSessions(session.accessToken);
      expect(listed).toMatchObject({
        id: session.sid,
        status: 'flagged',
        flag: { reason: 'fingerprint_mismatch', score: flagged.details.score, flaggedAt: expect.stringMatching(ISO) },
        current: true,
      });

      // A flagged session stays refused until re-verified, from any device; nothing is flagged or mailed twice.
      const fromOwner = await refresh(session.refreshToken, MAC_CHROME);
      expect(fromOwner.status).toBe(401);
      expect(fromOwner.body.error.code).toBe('MFA_REQUIRED');
      expect(fromOwner.body.error.mfaToken).not.toBe(res.body.error.mfaToken);
      expect(await events(user.id, 'session.flagged')).toHaveLength(1);
      const notices = await securityNotices(user.email);
      expect(notices).toHaveLength(1);
      expect(notices[0].text).toContain('second factor');
    });

    it('shows the flagged session in the admin list filtered by status=flagged', async () => {
      const user = await register(t, uniqueEmail());
      const flaggedSession = await signIn(user.email, MAC_CHROME);
      const quietSession = await signIn(user.email, MAC_CHROME);
      await enableTotpDirectly(user.id);
      expect((await refresh(flaggedSession.refreshToken, WINDOWS_FIREFOX)).body.error.code).toBe('MFA_REQUIRED');

      const admin = await adminToken();
      const res = await t
        .api()
        .get(`/v1/admin/sessions?status=flagged&userId=${user.id}`)
        .set('X-Realm-Id', 'default')
        .set(...bearer(admin));
      expect(res.status).toBe(200);
      expect(res.body.sessions.map((s: { id: string }) => s.id)).toEqual([flaggedSession.sid]);
      expect(res.body.sessions[0]).toMatchObject({
        status: 'flagged',
        flag: { reason: 'fingerprint_mismatch', score: expect.any(Number) },
      });
      expect(res.body.pagination).toMatchObject({ total: 1 });
      const active = await t
        .api()
        .get(`/v1/admin/sessions?status=active&userId=${user.id}`)
        .set('X-Realm-Id', 'default')
        .set(...bearer(admin));
      expect(active.body.sessions.map((s: { id: string }) => s.id)).toEqual([quietSession.sid]);
    });

    it('restores the SAME session after /mfa/verify; the verifying device becomes the reference and the flag clears', async () => {
      const user = await register(t, uniqueEmail());
      const session = await signIn(user.email, MAC_CHROME);
      const setup = await from(t.api().post('/api/v1/auth/mfa/totp/setup'), MAC_CHROME)
        .set(...bearer(session.accessToken))
        .send({});
      expect(setup.status).toBe(200);
      const code = () =>
        speakeasy.totp({ secret: setup.body.secret, encoding: 'base32', time: Math.floor(t.clock.now().getTime() / 1000) });
      const confirm = await from(t.api().post('/api/v1/auth/mfa/totp/confirm'), MAC_CHROME)
        .set(...bearer(session.accessToken))
        .send({ code: code() });
      expect(confirm.status).toBe(200);

      const refused = await refresh(session.refreshToken, WINDOWS_FIREFOX);
      expect(refused.body.error.code).toBe('MFA_REQUIRED');
      t.clock.advance(30);
      const verified = await from(t.api().post('/api/v1/auth/mfa/verify'), WINDOWS_FIREFOX).send({
        mfaToken: refused.body.error.mfaToken,
        code: code(),
        type: 'totp',
        deviceFingerprint: fingerprintOf(WINDOWS_FIREFOX),
      });
      expect(verified.status).toBe(200);
      expect(verified.body.user).toEqual({ id: user.id, email: user.email, emailVerified: false, mfaEnabled: true });
      expect(sidOf(verified.body.tokens.accessToken)).toBe(session.sid);
      expect(claimsOf(verified.body.tokens.accessToken).amr).toEqual(['pwd', 'otp']);

      const [listed] = await ownSessions(verified.body.tokens.accessToken);
      expect(listed).toMatchObject({ id: session.sid, status: 'active', flag: null, current: true });
      expect(listed.device.fingerprint).toBe(fingerprintOf(WINDOWS_FIREFOX));

      // Later refreshes from the verified device pass; the refresh token from before the flag is dead.
      const next = await refresh(verified.body.tokens.refreshToken, WINDOWS_FIREFOX);
      expect(next.status).toBe(200);
      expect(sidOf(next.body.tokens.accessToken)).toBe(session.sid);
      expect((await refresh(next.body.tokens.refreshToken, { ...WINDOWS_FIREFOX, ip: '192.0.2.200' })).status).toBe(200);
      expect((await refresh(session.refreshToken, MAC_CHROME)).body.error.code).toBe('INVALID_TOKEN');
      expect((await sessionRow(session.sid)).status).toBe('active');
      expect(await events(user.id, 'session.flagged')).toHaveLength(1);
    });
  });
});

describe('hijack detection with FINGERPRINT_MATCH_THRESHOLD=0.99', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { TRUST_PROXY: 'loopback', FINGERPRINT_MATCH_THRESHOLD: '0.99' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('flags the drift that the default 0.70 lets through', async () => {
    const user = await register(t, uniqueEmail());
    const login = await from(t.api().post('/api/v1/auth/login'), MAC_CHROME).send({
      email: user.email,
      password: PASSWORD,
      deviceFingerprint: fingerprintOf(MAC_CHROME),
    });
    const res = await from(t.api().post('/api/v1/auth/refresh'), MAC_CHROME_DRIFTED).send({
      refreshToken: login.body.tokens.refreshToken,
      deviceFingerprint: fingerprintOf(MAC_CHROME_DRIFTED),
    });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('REAUTHENTICATION_REQUIRED');
    const [event] = await t.dataSource.query(`SELECT details FROM audit_events WHERE user_id = $1 AND type = 'session.flagged'`, [user.id]);
    expect(event.details).toMatchObject({ threshold: 0.99 });
    expect(event.details.score).toBeGreaterThan(0.7);
    expect(event.details.score).toBeLessThan(0.99);
  });
});
