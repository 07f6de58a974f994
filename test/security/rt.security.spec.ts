import { SecureTokens } from '../../src/application/ports/secure-tokens';
import { createTestApp, TestApp } from '../support/test-app';
import { bearer, signedInUser } from '../support/flows';

const refresh = (t: TestApp, refreshToken: string, realm?: string) => {
  const req = t.api().post('/api/v1/auth/refresh');
  if (realm) req.set('X-Realm-Id', realm);
  return req.send({ refreshToken });
};

describe('RT / SES-01 — refresh tokens and sessions (SECURITY.md)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SESSION_IDLE_TIMEOUT_SECONDS: '1800', SESSION_MAX_LIFETIME_SECONDS: '43200' } });
  });
  afterAll(() => t?.close());

  it('RT-01 issues opaque tokens of 256 random bits, all distinct, stored only as hashes', async () => {
    const user = await signedInUser(t);
    expect(user.refreshToken.split('.')).toHaveLength(1);
    expect(user.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const tokens = t.app.get(SecureTokens);
    const many = new Set(Array.from({ length: 1000 }, () => tokens.generate()));
    expect(many.size).toBe(1000);
    const rows: { token_hash: string }[] = await t.dataSource.query(`SELECT token_hash FROM refresh_tokens`);
    expect(rows.map((r) => r.token_hash)).not.toContain(user.refreshToken);
    const dump = JSON.stringify(await t.dataSource.query(`SELECT * FROM sessions`));
    expect(dump).not.toContain(user.refreshToken);
  });

  it('RT-02 rotates on every refresh: RT1 → RT2, then RT1 is refused', async () => {
    const user = await signedInUser(t);
    const rt2 = (await refresh(t, user.refreshToken)).body.tokens.refreshToken;
    expect(rt2).not.toBe(user.refreshToken);
    t.clock.advance(t.config.refreshReuseLeewaySeconds + 1);
    expect((await refresh(t, user.refreshToken)).status).toBe(401);
  });

  it('RT-03 reuse of an invalidated token revokes the family: RT2 and AT2 die too, and refresh.reused is audited', async () => {
    const user = await signedInUser(t);
    const second = (await refresh(t, user.refreshToken)).body.tokens;
    t.clock.advance(t.config.refreshReuseLeewaySeconds + 1);
    expect((await refresh(t, user.refreshToken)).status).toBe(401);
    expect((await refresh(t, second.refreshToken)).status).toBe(401);
    expect(
      (
        await t
          .api()
          .get('/api/v1/auth/me')
          .set(...bearer(second.accessToken))
      ).status,
    ).toBe(401);
    const events = await t.dataSource.query(`SELECT type FROM audit_events WHERE user_id = $1 AND type = 'refresh.reused'`, [user.id]);
    expect(events).toHaveLength(1);
  });

  it('RT-04 rotates atomically: 10 parallel refreshes of one token, no 5xx, one successor (documented grace)', async () => {
    const user = await signedInUser(t);
    const results = await Promise.all(Array.from({ length: 10 }, () => refresh(t, user.refreshToken)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.tokens.refreshToken)).size).toBe(1);
  });

  it('RT-05 ends sessions after the idle timeout and at the absolute lifetime', async () => {
    const idle = await signedInUser(t);
    t.clock.advance(1801);
    expect((await refresh(t, idle.refreshToken)).status).toBe(401);

    const busy = await signedInUser(t);
    let token = busy.refreshToken;
    for (let elapsed = 0; elapsed + 1500 < 43200; elapsed += 1500) {
      t.clock.advance(1500);
      const res = await refresh(t, token);
      expect(res.status).toBe(200);
      token = res.body.tokens.refreshToken;
    }
    t.clock.advance(1500);
    expect((await refresh(t, token)).status).toBe(401);
  });

  it('RT-06 binds the token to its realm: presented with another X-Realm-Id it is refused', async () => {
    const user = await signedInUser(t);
    expect((await refresh(t, user.refreshToken, 'master')).status).toBe(401);
    expect((await refresh(t, user.refreshToken)).status).toBe(200);
  });

  it('SES-01 logout invalidates the session server-side: the refresh token is refused afterwards', async () => {
    const user = await signedInUser(t);
    await t.api().post('/api/v1/auth/logout').send({ refreshToken: user.refreshToken });
    expect((await refresh(t, user.refreshToken)).status).toBe(401);
    const [row] = await t.dataSource.query(`SELECT revoked_at, revoke_reason FROM sessions WHERE user_id = $1`, [user.id]);
    expect(row.revoked_at).not.toBeNull();
    expect(row.revoke_reason).toBe('logout');
  });
});
