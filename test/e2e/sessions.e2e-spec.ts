import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bearer, PASSWORD, register, uniqueEmail } from '../support/flows';
import { Device, fingerprintOf, from, ListedSession, MAC_CHROME, WINDOWS_FIREFOX } from '../support/devices';
import { buildMmdb } from '../support/mmdb';
import { createTestApp, TestApp } from '../support/test-app';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// Booting the app on a fresh database takes seconds on a busy machine.
jest.setTimeout(60_000);

describe('own sessions: GET/DELETE /api/v1/auth/sessions', () => {
  let t: TestApp;
  let geoDir: string;

  beforeAll(async () => {
    geoDir = mkdtempSync(join(tmpdir(), 'sessions-geoip-'));
    const geoDb = join(geoDir, 'city.mmdb');
    writeFileSync(
      geoDb,
      buildMmdb([
        {
          cidr: '203.0.113.0/24',
          data: { city: { geoname_id: 1, names: { en: 'Berlin' } }, country: { geoname_id: 2, iso_code: 'DE', names: { en: 'Germany' } } },
        },
        {
          cidr: '198.51.100.0/24',
          data: { city: { geoname_id: 3, names: { en: 'Paris' } }, country: { geoname_id: 4, iso_code: 'FR', names: { en: 'France' } } },
        },
      ]),
    );
    t = await createTestApp({ env: { TRUST_PROXY: 'loopback', GEOIP_DB: geoDb } });
  });
  afterAll(async () => {
    await t.close();
    rmSync(geoDir, { recursive: true, force: true });
  });

  async function signIn(email: string, device: Device) {
    const res = await from(t.api().post('/api/v1/auth/login'), device).send({
      email,
      password: PASSWORD,
      deviceFingerprint: fingerprintOf(device),
    });
    expect(res.status).toBe(200);
    const tokens = res.body.tokens as { accessToken: string; refreshToken: string };
    const sid = JSON.parse(Buffer.from(tokens.accessToken.split('.')[1], 'base64url').toString()).sid as string;
    return { ...tokens, sid };
  }

  async function refresh(refreshToken: string, device: Device) {
    return from(t.api().post('/api/v1/auth/refresh'), device).send({ refreshToken, deviceFingerprint: fingerprintOf(device) });
  }

  async function listOwn(accessToken: string) {
    const res = await t
      .api()
      .get('/api/v1/auth/sessions')
      .set(...bearer(accessToken));
    expect(res.status).toBe(200);
    return res.body.sessions as ListedSession[];
  }

  async function revokedEvents(userId: string) {
    return t.dataSource.query(
      `SELECT session_id AS "sessionId", actor_id AS "actorId", ip, details FROM audit_events WHERE user_id = $1 AND type = 'session.revoked' ORDER BY at`,
      [userId],
    ) as Promise<{ sessionId: string | null; actorId: string | null; ip: string | null; details: Record<string, unknown> }[]>;
  }

  it("lists the caller's live sessions, newest first, with device, location and current: true on the caller's own only", async () => {
    const alice = await register(t, uniqueEmail('alice'));
    const onMac = await signIn(alice.email, MAC_CHROME);
    t.clock.advance(1);
    const onPc = await signIn(alice.email, WINDOWS_FIREFOX);
    const bob = await register(t, uniqueEmail('bob'));
    await signIn(bob.email, MAC_CHROME);
    t.clock.advance(1);
    const ended = await signIn(alice.email, MAC_CHROME);
    await t.api().post('/api/v1/auth/logout').send({ refreshToken: ended.refreshToken }).expect(200);

    const sessions = await listOwn(onMac.accessToken);
    expect(sessions.map((s) => s.id)).toEqual([onPc.sid, onMac.sid]);
    expect(sessions.map((s) => s.current)).toEqual([false, true]);
    const mac = sessions[1];
    expect(Object.keys(mac).sort()).toEqual(
      [
        'createdAt',
        'current',
        'device',
        'dpopBound',
        'expiresAt',
        'flag',
        'id',
        'ip',
        'lastActiveAt',
        'location',
        'status',
        'userId',
      ].sort(),
    );
    expect(mac).toEqual({
      id: onMac.sid,
      userId: alice.id,
      device: { id: expect.any(String), name: 'Chrome 131 on macOS', type: 'browser', fingerprint: fingerprintOf(MAC_CHROME) },
      ip: '203.0.113.7',
      location: { country: 'DE', city: 'Berlin' },
      status: 'active',
      dpopBound: false,
      flag: null,
      createdAt: expect.stringMatching(ISO),
      lastActiveAt: expect.stringMatching(ISO),
      expiresAt: expect.stringMatching(ISO),
      current: true,
    });
    expect(Date.parse(mac.expiresAt) - Date.parse(mac.lastActiveAt)).toBe(t.config.sessionIdleTimeoutSeconds * 1000);
    expect(sessions[0]).toMatchObject({
      device: { name: 'Firefox 133 on Windows', type: 'browser' },
      ip: '192.0.2.44',
      location: { country: null, city: null },
    });

    // The other device's view marks its own session as current.
    expect((await listOwn(onPc.accessToken)).map((s) => [s.id, s.current])).toEqual([
      [onPc.sid, true],
      [onMac.sid, false],
    ]);
  });

  it('shows the address and location of the last use after a refresh from another network', async () => {
    const user = await register(t, uniqueEmail());
    const session = await signIn(user.email, MAC_CHROME);
    t.clock.advance(60);
    const res = await refresh(session.refreshToken, { ...MAC_CHROME, ip: '198.51.100.23' });
    expect(res.status).toBe(200);
    const [listed] = await listOwn(res.body.tokens.accessToken);
    expect(listed).toMatchObject({ ip: '198.51.100.23', location: { country: 'FR', city: 'Paris' }, status: 'active' });
    expect(Date.parse(listed.lastActiveAt) - Date.parse(listed.createdAt)).toBeGreaterThanOrEqual(60_000);
  });

  it("revokes one of the caller's sessions: its refresh and access tokens stop working, the others go on", async () => {
    const user = await register(t, uniqueEmail());
    const keep = await signIn(user.email, MAC_CHROME);
    const lost = await signIn(user.email, WINDOWS_FIREFOX);

    const res = await from(t.api().delete(`/api/v1/auth/sessions/${lost.sid}`), MAC_CHROME).set(...bearer(keep.accessToken));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });

    expect((await refresh(lost.refreshToken, WINDOWS_FIREFOX)).body.error).toMatchObject({ code: 'INVALID_TOKEN', status: 401 });
    const me = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(lost.accessToken));
    expect(me.status).toBe(401);
    expect(me.body.error.code).toBe('INVALID_TOKEN');
    expect((await listOwn(keep.accessToken)).map((s) => s.id)).toEqual([keep.sid]);
    expect((await refresh(keep.refreshToken, MAC_CHROME)).status).toBe(200);
    expect(await revokedEvents(user.id)).toEqual([
      { sessionId: lost.sid, actorId: user.id, ip: MAC_CHROME.ip, details: { reason: 'revoked_by_user', current: false } },
    ]);

    const again = await t
      .api()
      .delete(`/api/v1/auth/sessions/${lost.sid}`)
      .set(...bearer(keep.accessToken));
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: { code: 'SESSION_NOT_FOUND', message: expect.any(String), status: 404 } });
  });

  it('lets the caller end the session it is using, after which its access token is refused', async () => {
    const user = await register(t, uniqueEmail());
    const session = await signIn(user.email, MAC_CHROME);
    await t
      .api()
      .delete(`/api/v1/auth/sessions/${session.sid}`)
      .set(...bearer(session.accessToken))
      .expect(200);
    expect(
      (
        await t
          .api()
          .get('/api/v1/auth/sessions')
          .set(...bearer(session.accessToken))
      ).status,
    ).toBe(401);
    expect((await refresh(session.refreshToken, MAC_CHROME)).status).toBe(401);
  });

  it.each([
    ["another user's session", 'other'],
    ['an unknown session id', '6f1c2d3e-4b5a-4c6d-8e7f-8091a2b3c4d5'],
    ['an id that is not a UUID', 'not-a-session'],
  ])('answers 404 SESSION_NOT_FOUND for %s and revokes nothing', async (_what, target) => {
    const victim = await register(t, uniqueEmail('victim'));
    const victimSession = await signIn(victim.email, WINDOWS_FIREFOX);
    const caller = await register(t, uniqueEmail('caller'));
    const callerSession = await signIn(caller.email, MAC_CHROME);
    const id = target === 'other' ? victimSession.sid : target;

    const res = await t
      .api()
      .delete(`/api/v1/auth/sessions/${id}`)
      .set(...bearer(callerSession.accessToken));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'SESSION_NOT_FOUND', message: expect.any(String), status: 404 } });
    expect((await listOwn(victimSession.accessToken)).map((s) => s.id)).toEqual([victimSession.sid]);
    expect((await refresh(victimSession.refreshToken, WINDOWS_FIREFOX)).status).toBe(200);
    expect(await revokedEvents(victim.id)).toEqual([]);
  });

  it("revokes all the caller's other sessions and answers how many", async () => {
    const user = await register(t, uniqueEmail());
    const current = await signIn(user.email, MAC_CHROME);
    const second = await signIn(user.email, WINDOWS_FIREFOX);
    const third = await signIn(user.email, { ...MAC_CHROME, ip: '198.51.100.4' });
    const stranger = await signIn((await register(t, uniqueEmail())).email, WINDOWS_FIREFOX);

    const res = await t
      .api()
      .delete('/api/v1/auth/sessions')
      .set(...bearer(current.accessToken));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, revoked: 2 });

    for (const ended of [second, third]) {
      expect((await refresh(ended.refreshToken, MAC_CHROME)).status).toBe(401);
      expect(
        (
          await t
            .api()
            .get('/api/v1/auth/me')
            .set(...bearer(ended.accessToken))
        ).status,
      ).toBe(401);
    }
    expect((await listOwn(current.accessToken)).map((s) => [s.id, s.current])).toEqual([[current.sid, true]]);
    expect((await refresh(current.refreshToken, MAC_CHROME)).status).toBe(200);
    expect((await refresh(stranger.refreshToken, WINDOWS_FIREFOX)).status).toBe(200);
    const events = await revokedEvents(user.id);
    expect(events.map((e) => e.sessionId).sort()).toEqual([second.sid, third.sid].sort());
    expect(events.every((e) => e.actorId === user.id && e.details.reason === 'revoked_by_user')).toBe(true);

    const again = await t
      .api()
      .delete('/api/v1/auth/sessions')
      .set(...bearer(current.accessToken));
    expect(again.body).toEqual({ success: true, revoked: 0 });
  });

  it('does not count sessions that already expired as revoked', async () => {
    const user = await register(t, uniqueEmail());
    await signIn(user.email, WINDOWS_FIREFOX);
    t.clock.advance(t.config.sessionIdleTimeoutSeconds + 1);
    const current = await signIn(user.email, MAC_CHROME);
    const res = await t
      .api()
      .delete('/api/v1/auth/sessions')
      .set(...bearer(current.accessToken));
    expect(res.body).toEqual({ success: true, revoked: 0 });
    expect(await listOwn(current.accessToken)).toHaveLength(1);
  });

  it.each([
    ['GET', '/api/v1/auth/sessions'],
    ['DELETE', '/api/v1/auth/sessions'],
    ['DELETE', '/api/v1/auth/sessions/6f1c2d3e-4b5a-4c6d-8e7f-8091a2b3c4d5'],
  ])('requires a bearer access token: %s %s → 401 INVALID_TOKEN', async (method, path) => {
    const res = method === 'GET' ? await t.api().get(path) : await t.api().delete(path);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('INVALID_TOKEN');
  });
});
