import type { Response } from 'supertest';
import { ADMIN_ENV, createRealm, superAdmin } from '../support/admin-flows';
import { fingerprintOf, MAC_CHROME, WINDOWS_FIREFOX } from '../support/devices';
import { login, PASSWORD, register, uniqueEmail } from '../support/flows';
import { code, mfaToken, userWithTotp } from '../support/mfa';
import { createTestApp, TestApp } from '../support/test-app';

const API = 'https://id.example.test';
const APP = 'http://localhost:5173';
const FOREIGN = 'https://evil.example.test';
const MAX_LIFETIME = 86400;
const TRANSPORT = 'X-Refresh-Token-Transport';

interface SetCookie {
  name: string;
  value: string;
  attributes: Record<string, string | true>;
}

/** The Set-Cookie headers of a response, parsed independently of the service's code. */
function setCookies(res: Response): SetCookie[] {
  const raw = res.headers['set-cookie'] as unknown as string[] | undefined;
  return (raw ?? []).map((line) => {
    const [pair, ...attrs] = line.split(';').map((part) => part.trim());
    const eq = pair.indexOf('=');
    const attributes: Record<string, string | true> = {};
    for (const attr of attrs) {
      const i = attr.indexOf('=');
      if (i < 0) attributes[attr.toLowerCase()] = true;
      else attributes[attr.slice(0, i).toLowerCase()] = attr.slice(i + 1);
    }
    return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes };
  });
}

function refreshCookie(res: Response, realm = 'default'): SetCookie | undefined {
  return setCookies(res).find((c) => c.name === `__Host-refresh-${realm}`);
}

describe('refresh token in an HttpOnly cookie', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      env: { ...ADMIN_ENV, API_URL: `${API}/`, CORS_ORIGINS: APP, SESSION_MAX_LIFETIME_SECONDS: String(MAX_LIFETIME) },
    });
  });
  afterAll(() => t.close());

  /** A login asking for the cookie transport; returns the access token and the cookie's value. */
  async function cookieLogin(realm?: string) {
    const user = await register(t, uniqueEmail('cookie'), PASSWORD, realm);
    const req = t.api().post('/api/v1/auth/login').set(TRANSPORT, 'cookie');
    if (realm) req.set('X-Realm-Id', realm);
    const res = await req.send({ email: user.email, password: PASSWORD });
    expect(res.status).toBe(200);
    const cookie = refreshCookie(res, realm ?? 'default');
    if (!cookie) throw new Error('no refresh cookie');
    return { user, res, cookie: cookie.value, accessToken: res.body.tokens.accessToken as string };
  }

  function refreshWith(cookie: string | null, headers: Record<string, string> = { [TRANSPORT]: 'cookie' }, realm?: string) {
    const req = t.api().post('/api/v1/auth/refresh');
    for (const [name, value] of Object.entries(headers)) req.set(name, value);
    if (cookie !== null) req.set('Cookie', `other=1; __Host-refresh-${realm ?? 'default'}=${cookie}; theme=dark`);
    if (realm) req.set('X-Realm-Id', realm);
    return req.send({});
  }

  it('refuses a body refresh token longer than any issued one, before the cookie is touched', async () => {
    const { cookie } = await cookieLogin();
    const res = await t
      .api()
      .post('/api/v1/auth/refresh')
      .set(TRANSPORT, 'cookie')
      .set('Cookie', `__Host-refresh-default=${cookie}`)
      .send({ refreshToken: 'A'.repeat(600) });
    expect([res.status, res.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect((await refreshWith(cookie)).status).toBe(200);
  });

  it('sets the refresh token as a __Host- cookie with every attribute, and leaves it out of the body', async () => {
    const { res, cookie } = await cookieLogin();
    const set = refreshCookie(res)!;
    expect(set.attributes).toEqual({
      path: '/',
      httponly: true,
      secure: true,
      samesite: 'Strict',
      'max-age': String(MAX_LIFETIME),
    });
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(res.body.tokens).not.toHaveProperty('refreshToken');
    expect(Object.keys(res.body.tokens).sort()).toEqual(['accessToken', 'expiresIn', 'tokenType']);
    expect(res.body.tokens.tokenType).toBe('Bearer');
    expect(res.body.requiresMfa).toBe(false);
  });

  it('sets the session hint __Host-session-<realm>=1 beside the refresh cookie (readable by scripts, no secret), and clears it with it', async () => {
    const { res, cookie } = await cookieLogin();
    const hint = (r: Response, realm = 'default') => setCookies(r).find((c) => c.name === `__Host-session-${realm}`);
    expect(hint(res)).toEqual({
      name: '__Host-session-default',
      value: '1',
      attributes: { path: '/', secure: true, samesite: 'Strict', 'max-age': String(MAX_LIFETIME) },
    });
    t.clock.advance(500);
    const rotated = await refreshWith(cookie);
    expect(hint(rotated)).toMatchObject({ value: '1', attributes: { 'max-age': String(MAX_LIFETIME - 500) } });
    // Refused with INVALID_TOKEN (the old cookie, past the leeway): both go.
    t.clock.advance((t.config.refreshReuseLeewaySeconds + 1) * 1000);
    const refused = await refreshWith(cookie);
    expect(refused.status).toBe(401);
    expect(hint(refused)).toMatchObject({ value: '', attributes: { 'max-age': '0' } });
    // A logout clears it too, and the body transport never sets it.
    const out = await t
      .api()
      .post('/api/v1/auth/logout')
      .set(TRANSPORT, 'cookie')
      .set('Cookie', `__Host-refresh-default=${cookie}`)
      .send({});
    expect(hint(out)).toMatchObject({ value: '', attributes: { 'max-age': '0' } });
    const user = await register(t, uniqueEmail('nohint'));
    expect(hint(await login(t, user.email))).toBeUndefined();
  });

  it('keeps the body transport unchanged without the header: no cookie, refreshToken in the body', async () => {
    const user = await register(t, uniqueEmail('body'));
    const res = await login(t, user.email);
    expect(res.status).toBe(200);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(typeof res.body.tokens.refreshToken).toBe('string');
    const refreshed = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: res.body.tokens.refreshToken });
    expect(refreshed.status).toBe(200);
    expect(refreshed.headers['set-cookie']).toBeUndefined();
    expect(typeof refreshed.body.tokens.refreshToken).toBe('string');
  });

  it('rotates through the cookie: each refresh sets a new cookie whose Max-Age counts down to the absolute end', async () => {
    const { cookie } = await cookieLogin();
    t.clock.advance(1000);
    const first = await refreshWith(cookie);
    expect(first.status).toBe(200);
    expect(first.body.tokens).not.toHaveProperty('refreshToken');
    const next = refreshCookie(first)!;
    expect(next.value).not.toBe(cookie);
    expect(next.attributes['max-age']).toBe(String(MAX_LIFETIME - 1000));
    expect(next.attributes.httponly).toBe(true);

    const second = await refreshWith(next.value);
    expect(second.status).toBe(200);
    expect(refreshCookie(second)!.value).not.toBe(next.value);
  });

  it('reads the cookie only with X-Refresh-Token-Transport: cookie (403 without it), and the token is not spent', async () => {
    const { cookie } = await cookieLogin();
    const refused = await refreshWith(cookie, {});
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    expect(refused.headers['set-cookie']).toBeUndefined();
    const wrongValue = await refreshWith(cookie, { [TRANSPORT]: 'body' });
    expect(wrongValue.status).toBe(403);
    expect((await refreshWith(cookie)).status).toBe(200);
  });

  it('accepts the service’s own origin and a listed origin, and refuses any other with 403', async () => {
    const own = await cookieLogin();
    const fromOwn = await refreshWith(own.cookie, { [TRANSPORT]: 'cookie', Origin: API });
    expect(fromOwn.status).toBe(200);

    const listed = await cookieLogin();
    const fromApp = await refreshWith(listed.cookie, { [TRANSPORT]: 'cookie', Origin: APP });
    expect(fromApp.status).toBe(200);
    expect(fromApp.headers['access-control-allow-origin']).toBe(APP);
    expect(fromApp.headers['access-control-allow-credentials']).toBe('true');

    const target = await cookieLogin();
    for (const origin of [FOREIGN, 'null', 'http://localhost:5174', API.replace('https:', 'http:')]) {
      const res = await refreshWith(target.cookie, { [TRANSPORT]: 'cookie', Origin: origin });
      expect({ origin, status: res.status, code: res.body.error?.code }).toEqual({ origin, status: 403, code: 'FORBIDDEN' });
    }
    const logout = await t
      .api()
      .post('/api/v1/auth/logout')
      .set(TRANSPORT, 'cookie')
      .set('Origin', FOREIGN)
      .set('Cookie', `__Host-refresh-default=${target.cookie}`)
      .send({});
    expect(logout.status).toBe(403);
    // None of the refused requests spent or ended anything.
    expect((await refreshWith(target.cookie)).status).toBe(200);
  });

  it('answers 401 INVALID_TOKEN when there is neither a body token nor a cookie', async () => {
    const res = await refreshWith(null);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('INVALID_TOKEN');
    const logout = await t.api().post('/api/v1/auth/logout').set(TRANSPORT, 'cookie').send({});
    expect(logout.status).toBe(401);
    expect(logout.body.error.code).toBe('INVALID_TOKEN');
  });

  it('clears the cookie when a refresh is refused with INVALID_TOKEN', async () => {
    const unknown = await refreshWith('x'.repeat(43));
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.code).toBe('INVALID_TOKEN');
    expect(refreshCookie(unknown)).toMatchObject({ value: '', attributes: { 'max-age': '0', path: '/', httponly: true, secure: true } });

    // A rotated cookie replayed after the leeway is reuse: refused, session revoked, cookie cleared.
    const { cookie } = await cookieLogin();
    const rotated = await refreshWith(cookie);
    expect(rotated.status).toBe(200);
    t.clock.advance(t.config.refreshReuseLeewaySeconds + 1);
    const reused = await refreshWith(cookie);
    expect(reused.status).toBe(401);
    expect(refreshCookie(reused)!.attributes['max-age']).toBe('0');
  });

  it('clears the cookie when a refresh is refused with REAUTHENTICATION_REQUIRED', async () => {
    const user = await register(t, uniqueEmail('reauth'));
    const res = await t
      .api()
      .post('/api/v1/auth/login')
      .set(TRANSPORT, 'cookie')
      .set('User-Agent', MAC_CHROME.userAgent)
      .send({ email: user.email, password: PASSWORD, deviceFingerprint: fingerprintOf(MAC_CHROME) });
    const cookie = refreshCookie(res)!.value;
    const other = await t
      .api()
      .post('/api/v1/auth/refresh')
      .set(TRANSPORT, 'cookie')
      .set('Cookie', `__Host-refresh-default=${cookie}`)
      .set('User-Agent', MAC_CHROME.userAgent)
      .set('X-Device-Fingerprint', fingerprintOf(WINDOWS_FIREFOX)!)
      .send({});
    expect(other.status).toBe(401);
    expect(other.body.error.code).toBe('REAUTHENTICATION_REQUIRED');
    expect(refreshCookie(other)!.attributes['max-age']).toBe('0');
  });

  it('logs out through the cookie, clears it, and the session is over', async () => {
    const { cookie, accessToken } = await cookieLogin();
    const res = await t
      .api()
      .post('/api/v1/auth/logout')
      .set(TRANSPORT, 'cookie')
      .set('Origin', APP)
      .set('Cookie', `__Host-refresh-default=${cookie}`)
      .send({});
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(refreshCookie(res)).toMatchObject({ value: '', attributes: { 'max-age': '0', samesite: 'Strict' } });
    expect((await t.api().get('/api/v1/auth/me').set('Authorization', `Bearer ${accessToken}`)).status).toBe(401);
    const after = await refreshWith(cookie);
    expect(after.status).toBe(401);
  });

  it('clears the cookie on every logout, a body-token logout included', async () => {
    const user = await register(t, uniqueEmail('bodyout'));
    const signedIn = await login(t, user.email);
    const res = await t.api().post('/api/v1/auth/logout').send({ refreshToken: signedIn.body.tokens.refreshToken });
    expect(res.status).toBe(200);
    expect(refreshCookie(res)!.attributes['max-age']).toBe('0');
  });

  it('delivers the cookie at /mfa/verify for a login with a second factor', async () => {
    const user = await userWithTotp(t);
    const token = await mfaToken(t, user.email);
    const res = await t
      .api()
      .post('/api/v1/auth/mfa/verify')
      .set(TRANSPORT, 'cookie')
      .send({ mfaToken: token, type: 'totp', code: code(t, user.secret) });
    expect(res.status).toBe(200);
    expect(res.body.tokens).not.toHaveProperty('refreshToken');
    const set = refreshCookie(res)!;
    expect(set.attributes).toMatchObject({ httponly: true, secure: true, samesite: 'Strict', path: '/' });
    expect((await refreshWith(set.value)).status).toBe(200);
  });

  it('names the cookie after the realm, and a realm reads only its own', async () => {
    const root = await superAdmin(t);
    await createRealm(t, root.accessToken, 'cookie-acme');
    const acme = await cookieLogin('cookie-acme');
    expect(refreshCookie(acme.res, 'default')).toBeUndefined();

    // acme's cookie is not the default realm's cookie …
    const wrongName = await t
      .api()
      .post('/api/v1/auth/refresh')
      .set(TRANSPORT, 'cookie')
      .set('Cookie', `__Host-refresh-cookie-acme=${acme.cookie}`)
      .send({});
    expect(wrongName.status).toBe(401);
    // … and its token does not work in the default realm even under the default realm's name.
    const wrongRealm = await refreshWith(acme.cookie);
    expect(wrongRealm.status).toBe(401);
    expect(refreshCookie(wrongRealm)!.attributes['max-age']).toBe('0');

    const own = await refreshWith(acme.cookie, { [TRANSPORT]: 'cookie' }, 'cookie-acme');
    expect(own.status).toBe(200);
    expect(refreshCookie(own, 'cookie-acme')!.value).not.toBe(acme.cookie);
  });

  it('answers a CORS preflight from a listed origin with credentials and the transport and DPoP headers', async () => {
    const res = await t
      .api()
      .options('/api/v1/auth/refresh')
      .set('Origin', APP)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type,x-realm-id,x-device-fingerprint,x-refresh-token-transport,dpop');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(',');
    expect(allowed).toEqual(
      expect.arrayContaining([
        'authorization',
        'content-type',
        'x-request-id',
        'x-realm-id',
        'x-device-fingerprint',
        'x-refresh-token-transport',
        'dpop',
      ]),
    );

    const answer = await t.api().post('/api/v1/auth/login').set('Origin', APP).send({ email: 'nobody@example.com', password: 'whatever' });
    const exposed = String(answer.headers['access-control-expose-headers']).toLowerCase().split(',');
    expect(exposed).toEqual(expect.arrayContaining(['dpop-nonce', 'www-authenticate', 'retry-after', 'x-request-id']));
  });

  it('gives a preflight from an unlisted origin no CORS headers (and no 404)', async () => {
    const res = await t
      .api()
      .options('/api/v1/auth/refresh')
      .set('Origin', FOREIGN)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'x-refresh-token-transport');
    expect(res.status).not.toBe(404);
    expect(res.status).toBeLessThan(300);
    for (const name of Object.keys(res.headers)) expect(name).not.toMatch(/^access-control-/);
  });
});
