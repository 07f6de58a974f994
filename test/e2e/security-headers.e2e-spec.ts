import { createTestApp, TestApp } from '../support/test-app';

const APP = 'https://app.example.com';
const EVIL = 'https://evil.example.net';

describe('security headers and CORS (CORS_ORIGINS)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { CORS_ORIGINS: `${APP}/, http://localhost:5173` } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('sends helmet headers on API answers and no X-Powered-By', async () => {
    const res = await t.api().get('/health/live');
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({
      'content-security-policy': "default-src 'none';frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'strict-transport-security': expect.stringMatching(/^max-age=\d+/),
      'cross-origin-opener-policy': 'same-origin',
    });
    expect(res.headers['x-powered-by']).toBeUndefined();
    const error = await t.api().post('/api/v1/auth/login').set('Content-Type', 'text/plain').send('x');
    expect(error.status).toBe(415);
    expect(error.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers a preflight from a listed origin with credentials allowed', async () => {
    const res = await t
      .api()
      .options('/api/v1/auth/login')
      .set('Origin', APP)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type,x-realm-id,x-device-fingerprint');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-allow-methods']).toContain('POST');
    expect(res.headers['access-control-allow-headers']).toBe(
      'Authorization,Content-Type,X-Realm-Id,X-Device-Fingerprint,X-Request-Id,X-Refresh-Token-Transport,DPoP',
    );
    expect(res.headers['access-control-max-age']).toBe('600');
  });

  it('lets a listed origin read answers and their request id, credentials included', async () => {
    const res = await t
      .api()
      .post('/api/v1/auth/login')
      .set('Origin', 'http://localhost:5173')
      .send({ email: 'nobody@example.com', password: 'whatever it is' });
    expect(res.status).toBe(401);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-expose-headers']).toContain('X-Request-Id');
    expect(res.headers['access-control-expose-headers']).toContain('Retry-After');
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('gives an unlisted origin no CORS headers at all, on preflight and on requests', async () => {
    const preflight = await t.api().options('/api/v1/auth/login').set('Origin', EVIL).set('Access-Control-Request-Method', 'POST');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
    const res = await t.api().get('/.well-known/jwks.json').set('Origin', EVIL);
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('allows no origin when CORS_ORIGINS is empty', async () => {
    const closed = await createTestApp();
    try {
      const res = await closed.api().options('/api/v1/auth/login').set('Origin', APP).set('Access-Control-Request-Method', 'POST');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    } finally {
      await closed.close();
    }
  });
});
