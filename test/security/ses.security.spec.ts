import { DeferredWork } from '../../src/adapters/http/deferred-work';
import { OutboxDispatcher } from '../../src/adapters/mail/outbox-dispatcher';
import { ADMIN_ENV, adminApi, superAdmin } from '../support/admin-flows';
import { Device, fingerprintOf, from, MAC_CHROME, MAC_CHROME_DRIFTED, WINDOWS_FIREFOX } from '../support/devices';
import { bearer, login, PASSWORD, register, uniqueEmail } from '../support/flows';
import { auditEvents } from '../support/mfa';
import { SmtpSink } from '../support/smtp-sink';
import { createTestApp, TestApp } from '../support/test-app';

/** SES-01 (logout) is in rt.security.spec.ts. */

const sidOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid as string;

describe('SES — sessions (SECURITY.md)', () => {
  let sink: SmtpSink;
  let t: TestApp;
  beforeAll(async () => {
    sink = await SmtpSink.start();
    // TRUST_PROXY=loopback: the devices below present their own address through X-Forwarded-For.
    t = await createTestApp({ env: { ...ADMIN_ENV, SMTP_URL: sink.url, TRUST_PROXY: 'loopback' } });
  });
  afterAll(async () => {
    await t?.close();
    await sink?.stop();
  });

  async function signIn(email: string, device: Device = MAC_CHROME) {
    const res = await from(t.api().post('/api/v1/auth/login'), device).send({
      email,
      password: PASSWORD,
      deviceFingerprint: fingerprintOf(device),
    });
    expect(res.status).toBe(200);
    return res.body.tokens as { accessToken: string; refreshToken: string };
  }

  const refresh = (refreshToken: string, device: Device = MAC_CHROME) =>
    from(t.api().post('/api/v1/auth/refresh'), device).send({ refreshToken, deviceFingerprint: fingerprintOf(device) });
  const me = (accessToken: string) =>
    t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(accessToken));

  /** Both tokens of every given session are refused. */
  async function expectDead(...sessions: { accessToken: string; refreshToken: string }[]) {
    for (const s of sessions) {
      expect((await refresh(s.refreshToken)).status).toBe(401);
      expect((await me(s.accessToken)).status).toBe(401);
    }
  }

  it('SES-02 lists own sessions; the user revokes one or all others; an admin revokes them; suspension kills them all', async () => {
    const user = await register(t, uniqueEmail('ses'));
    const laptop = await signIn(user.email, MAC_CHROME);
    const phone = await signIn(user.email, WINDOWS_FIREFOX);
    const tablet = await signIn(user.email, WINDOWS_FIREFOX);

    const listed = await t
      .api()
      .get('/api/v1/auth/sessions')
      .set(...bearer(laptop.accessToken));
    expect(listed.body.sessions.map((s: { id: string; current: boolean }) => [s.id, s.current]).sort()).toEqual(
      [
        [sidOf(laptop.accessToken), true],
        [sidOf(phone.accessToken), false],
        [sidOf(tablet.accessToken), false],
      ].sort(),
    );
    // Another user's session is not the caller's to end.
    const stranger = await register(t, uniqueEmail('stranger'));
    const strangers = await signIn(stranger.email);
    const notMine = await t
      .api()
      .delete(`/api/v1/auth/sessions/${sidOf(strangers.accessToken)}`)
      .set(...bearer(laptop.accessToken));
    expect([notMine.status, notMine.body.error.code]).toEqual([404, 'SESSION_NOT_FOUND']);
    expect((await me(strangers.accessToken)).status).toBe(200);

    // One.
    await t
      .api()
      .delete(`/api/v1/auth/sessions/${sidOf(tablet.accessToken)}`)
      .set(...bearer(laptop.accessToken))
      .expect(200);
    await expectDead(tablet);
    // All others.
    const others = await t
      .api()
      .delete('/api/v1/auth/sessions')
      .set(...bearer(laptop.accessToken));
    expect(others.body).toEqual({ success: true, revoked: 1 });
    await expectDead(phone);
    expect((await me(laptop.accessToken)).status).toBe(200);

    // An administrator ends them all.
    const root = await superAdmin(t);
    const second = await signIn(user.email, WINDOWS_FIREFOX);
    const current = (await refresh(laptop.refreshToken)).body.tokens;
    const revoked = await adminApi(t, root.accessToken, 'default').delete(`/users/${user.id}/sessions`);
    expect(revoked.body).toEqual({ success: true, revoked: 2 });
    await expectDead(current, second);

    // Suspension kills every session, and login is refused.
    const again = [await signIn(user.email), await signIn(user.email, WINDOWS_FIREFOX)];
    await adminApi(t, root.accessToken, 'default').post(`/users/${user.id}/suspend`).send({ reason: 'investigation' }).expect(200);
    await expectDead(...again);
    expect((await login(t, user.email)).status).toBe(403);
    expect((await auditEvents(t, user.id, 'user.suspended')).length).toBe(1);
  });

  it('SES-03 a refresh from another device is refused and revokes the session, mails the owner; a benign drift passes', async () => {
    const user = await register(t, uniqueEmail('hijack'));
    // Benign: the same laptop after a browser update, on another network and time zone.
    const own = await signIn(user.email, MAC_CHROME);
    const drifted = await refresh(own.refreshToken, MAC_CHROME_DRIFTED);
    expect(drifted.status).toBe(200);

    // A thief replays the session's refresh token from another machine (other UA, hardware, address).
    const stolen = drifted.body.tokens as { accessToken: string; refreshToken: string };
    const hijack = await refresh(stolen.refreshToken, WINDOWS_FIREFOX);
    expect(hijack.status).toBe(401);
    expect(hijack.body).toEqual({ error: { code: 'REAUTHENTICATION_REQUIRED', message: expect.any(String), status: 401 } });
    expect(JSON.stringify(hijack.body)).not.toMatch(/accessToken|refreshToken/);
    // The family is gone: the owner's device must sign in again too.
    await expectDead(stolen);
    const [flagged] = await auditEvents(t, user.id, 'session.flagged');
    expect(flagged.details).toMatchObject({ reason: 'fingerprint_mismatch' });
    expect((await auditEvents(t, user.id, 'session.revoked')).at(-1)!.details).toMatchObject({ reason: 'fingerprint_mismatch' });

    await t.app.get(DeferredWork).settled();
    await t.app.get(OutboxDispatcher).dispatchDue();
    const mails = await sink.waitFor(user.email, 2);
    const notice = mails.find((m) => m.subject.startsWith('Security notice'));
    expect(notice?.text).toContain('does not match the one it was opened on');
    expect(notice?.text).toContain(WINDOWS_FIREFOX.ip);

    // A header-only change of fingerprint (X-Device-Fingerprint) is judged the same way.
    const viaHeader = await signIn(user.email, MAC_CHROME);
    const swapped = await t
      .api()
      .post('/api/v1/auth/refresh')
      .set('User-Agent', WINDOWS_FIREFOX.userAgent)
      .set('Accept-Language', WINDOWS_FIREFOX.acceptLanguage)
      .set('X-Forwarded-For', WINDOWS_FIREFOX.ip)
      .set('X-Device-Fingerprint', fingerprintOf(WINDOWS_FIREFOX)!)
      .send({ refreshToken: viaHeader.refreshToken });
    expect(swapped.status).toBe(401);
    expect((await refresh(viaHeader.refreshToken)).status).toBe(401);
  });
});
