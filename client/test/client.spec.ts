import {
  createIdentityClient,
  IdentityError,
  memoryStorage,
  type AuthSnapshot,
  type IdentityClient,
  type TokenStorage,
} from '../src/index.js';
import { FakeService } from './fake-service.js';

const BASE = 'https://id.example.test';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One storage seen by several clients, as `localStorage` is by the tabs of an origin. */
function sharedStorage(): TokenStorage {
  const values = new Map<string, string>();
  return { get: (k) => values.get(k) ?? null, set: (k, v) => void values.set(k, v), remove: (k) => void values.delete(k), shared: true };
}

describe('identity client against a strict fake service', () => {
  let service: FakeService;
  const clients: IdentityClient[] = [];
  const make = (transport: TokenStorage = memoryStorage(), extra = {}) => {
    const client = createIdentityClient({ baseUrl: `${BASE}/`, realm: 'acme', transport, fetch: service.fetch, ...extra });
    clients.push(client);
    return client;
  };

  beforeEach(() => {
    service = new FakeService();
  });
  afterEach(async () => {
    clients.splice(0).forEach((c) => c.destroy());
    await sleep(20);
  });

  it('signs in: the refresh token goes to the storage, the snapshot and the events say who is signed in', async () => {
    const storage = memoryStorage();
    const client = make(storage);
    await client.ready;
    expect(client.getSnapshot()).toEqual({ status: 'signed-out', reason: null });
    const seen: AuthSnapshot[] = [];
    client.subscribe(() => seen.push(client.getSnapshot()));
    const signedIn = jest.fn();
    client.on('signed-in', signedIn);

    const result = await client.signIn({ email: 'a@example.com', password: 'pw' });

    expect(result).toEqual({ kind: 'signed-in', user: expect.objectContaining({ id: 'user-1' }) });
    const login = service.requests.find((r) => r.path === '/login')!;
    expect(login.headers['x-realm-id']).toBe('acme');
    expect(login.body).toEqual({ email: 'a@example.com', password: 'pw' }); // no fingerprint outside a browser by default
    expect(await storage.get('identity:acme:refresh')).toEqual(expect.any(String));
    const snapshot = client.getSnapshot();
    expect(snapshot).toMatchObject({ status: 'signed-in', userId: 'user-1', amr: ['pwd'] });
    expect(seen.at(-1)).toBe(snapshot);
    expect(client.getSnapshot()).toBe(snapshot); // stable between changes
    expect(signedIn).toHaveBeenCalledWith({
      user: expect.objectContaining({ id: 'user-1' }),
      sessionId: (snapshot as { sessionId: string }).sessionId,
    });
  });

  it("exposes the user's roles and app metadata from the access token, and follows them at each refresh", async () => {
    const client = make();
    await client.ready;
    await client.signIn({ email: 'a@example.com', password: 'pw' });
    expect(client.getSnapshot()).toMatchObject({ status: 'signed-in', roles: [], appMetadata: {} });
    service.extraClaims = { roles: ['teacher'], app_metadata: { schoolId: 'north-42' } };
    await sleep(2100); // the token expires; the client renews it ahead of expiry
    await client.fetch(`${BASE}/api/v1/auth/me`);
    expect(client.getSnapshot()).toMatchObject({ status: 'signed-in', roles: ['teacher'], appMetadata: { schoolId: 'north-42' } });
  });

  it('sends the fingerprint it is given at sign-in and refresh', async () => {
    const client = make(memoryStorage(), { fingerprint: () => ({ canvas: 'abc', cores: 8 }) });
    await client.signIn({ email: 'a@example.com', password: 'pw' });
    service.ttlSeconds = 2;
    await client.getAccessToken();
    const [token] = [await client.getAccessToken()];
    service.expiredEarly.add(token!);
    await client.fetch(`${BASE}/api/v1/auth/me`);
    const sent = service.requests.filter((r) => r.path === '/login' || r.path === '/refresh').map((r) => r.body.deviceFingerprint);
    expect(sent).toEqual(['{"canvas":"abc","cores":8}', '{"canvas":"abc","cores":8}']);
  });

  it('renews once for many concurrent callers of an expired token (single flight)', async () => {
    service.ttlSeconds = 60;
    const client = make();
    await client.signIn({ email: 'a@example.com', password: 'pw' });
    const first = (await client.getAccessToken())!;
    service.expiredEarly.add(first);
    const answers = await Promise.all(Array.from({ length: 10 }, () => client.fetch(`${BASE}/api/v1/auth/me`)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const retried = service.requests.filter((r) => r.path === '/me').slice(10);
    expect(new Set(retried.map((r) => r.headers.authorization))).toEqual(new Set([`Bearer ${await client.getAccessToken()}`]));
    expect(await client.getAccessToken()).not.toBe(first);
    expect(service.rotations).toBe(1);
  });

  it('fetch: adds the token; on TOKEN_EXPIRED refreshes once and retries once', async () => {
    service.ttlSeconds = 60;
    const client = make();
    await client.signIn({ email: 'a@example.com', password: 'pw' });
    const token = (await client.getAccessToken())!;
    service.expiredEarly.add(token);

    const response = await client.fetch(`${BASE}/api/v1/auth/me`, { headers: { Accept: 'application/json' } });

    expect(response.status).toBe(200);
    const me = service.requests.filter((r) => r.path === '/me');
    expect(me.map((r) => r.headers.authorization)).toEqual([`Bearer ${token}`, `Bearer ${await client.getAccessToken()}`]);
    expect(me[1].headers.accept).toBe('application/json');
    expect(service.rotations).toBe(1);

    // When the retried request is refused too, its answer is returned: no loop.
    const renewed = (await client.getAccessToken())!;
    service.expiredEarly.add(renewed);
    service.next.set('/refresh', { status: 200, body: { tokens: { accessToken: renewed, refreshToken: 'x'.repeat(20), expiresIn: 60 } } });
    const again = await client.fetch(`${BASE}/api/v1/auth/me`);
    expect(again.status).toBe(401);
    expect(service.requests.filter((r) => r.path === '/me')).toHaveLength(4);
  });

  it('renews ahead of expiry, so steady calls never meet an expired token', async () => {
    service.ttlSeconds = 2;
    const client = make();
    const refreshed = jest.fn();
    client.on('token-refreshed', refreshed);
    await client.signIn({ email: 'a@example.com', password: 'pw' });
    for (let i = 0; i < 25; i++) {
      expect((await client.fetch(`${BASE}/api/v1/auth/me`)).status).toBe(200);
      await sleep(200);
    }
    const expiredAnswers = service.requests.filter((r) => r.path === '/me').length - service.meCalls;
    expect(expiredAnswers).toBe(0);
    expect(refreshed.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect(service.rotations).toBe(refreshed.mock.calls.length);
    // No TOKEN_EXPIRED answer was needed: the timer renewed every token before it ran out.
    expect(service.requests.filter((r) => r.path === '/me').length).toBe(25);
  });

  it('three clients sharing one storage rotate once per cycle: no reuse, no failed call', async () => {
    // A client hands its token to a new one only with more than a second left: the first token
    // (exp counted in whole seconds) keeps at least two, then the cycles are two seconds long.
    service.ttlSeconds = 3;
    const storage = sharedStorage();
    const first = make(storage);
    await first.signIn({ email: 'a@example.com', password: 'pw' });
    service.ttlSeconds = 2;
    const others = [make(storage), make(storage)];
    await Promise.all(others.map((c) => c.ready));
    expect(service.rotations).toBe(0); // the new clients got the token from the first one
    const all = [first, ...others];
    let failures = 0;
    const started = Date.now();
    await Promise.all(
      all.map(async (client) => {
        while (Date.now() - started < 6000) {
          const response = await client.fetch(`${BASE}/api/v1/auth/me`).catch(() => null);
          if (response?.status !== 200) failures += 1;
          await sleep(100);
        }
      }),
    );
    expect(failures).toBe(0);
    expect(service.reused).toBe(0);
    expect(service.rotations).toBeGreaterThanOrEqual(2);
    expect(service.rotations).toBeLessThanOrEqual(Math.ceil(1.5 * (6 / 2)) + 1);
    const sessions = new Set(all.map((c) => (c.getSnapshot() as { sessionId: string }).sessionId));
    expect(sessions.size).toBe(1);
  });

  it('a flagged session: refresh surfaces MFA required in every client; verifying resumes the same session', async () => {
    service.ttlSeconds = 60;
    const storage = sharedStorage();
    const client = make(storage);
    await client.signIn({ email: 'a@example.com', password: 'pw' });
    const other = make(storage);
    await other.ready;
    const sessionId = (client.getSnapshot() as { sessionId: string }).sessionId;
    const required = jest.fn();
    other.on('mfa-required', required);
    service.flagged.add(sessionId);
    service.expiredEarly.add((await client.getAccessToken())!);

    await expect(client.fetch(`${BASE}/api/v1/auth/me`)).rejects.toMatchObject({ code: 'NOT_SIGNED_IN' });
    expect(client.getSnapshot()).toMatchObject({ status: 'mfa-required', reason: 'step-up', sessionId });
    await sleep(30);
    expect(required).toHaveBeenCalledWith({ reason: 'step-up', methods: null, sessionId });
    expect(other.getSnapshot()).toMatchObject({ status: 'mfa-required', reason: 'step-up' });

    await expect(other.verifyMfa({ type: 'totp', code: '000000' })).rejects.toMatchObject({ code: 'INVALID_MFA_CODE', status: 401 });
    await other.verifyMfa({ type: 'totp', code: '123456' });
    expect(other.getSnapshot()).toMatchObject({ status: 'signed-in', sessionId, amr: ['pwd', 'otp'] });
    await sleep(30);
    expect(client.getSnapshot()).toMatchObject({ status: 'signed-in', sessionId });
    expect((await client.fetch(`${BASE}/api/v1/auth/me`)).status).toBe(200);
  });

  it('signing out in one client signs out the others; a dead session ends with its reason', async () => {
    service.ttlSeconds = 60;
    const storage = sharedStorage();
    const client = make(storage);
    await client.signIn({ email: 'a@example.com', password: 'pw' });
    const other = make(storage);
    await other.ready;
    const reasons: string[] = [];
    other.on('signed-out', ({ reason }) => reasons.push(reason));
    await client.signOut();
    await sleep(30);
    expect(service.requests.find((r) => r.path === '/logout')?.body.refreshToken).toEqual(expect.any(String));
    expect(other.getSnapshot()).toEqual({ status: 'signed-out', reason: 'other-tab' });
    expect(reasons).toEqual(['other-tab']);
    expect(await storage.get('identity:acme:refresh')).toBeNull();
    await expect(other.getAccessToken()).resolves.toBeNull();

    const lone = make();
    await lone.signIn({ email: 'a@example.com', password: 'pw' });
    service.next.set('/refresh', { status: 401, body: { error: { code: 'INVALID_TOKEN', message: 'gone', status: 401 } } });
    service.expiredEarly.add((await lone.getAccessToken())!);
    await expect(lone.fetch(`${BASE}/api/v1/auth/me`)).rejects.toMatchObject({ code: 'NOT_SIGNED_IN' });
    expect(lone.getSnapshot()).toEqual({ status: 'signed-out', reason: 'session-ended' });
  });

  it('a new client restores the stored session with one rotation', async () => {
    service.ttlSeconds = 60;
    const storage = memoryStorage();
    const first = make(storage);
    await first.signIn({ email: 'a@example.com', password: 'pw' });
    const sessionId = (first.getSnapshot() as { sessionId: string }).sessionId;
    first.destroy();
    const second = make(storage);
    await second.ready;
    expect(second.getSnapshot()).toMatchObject({ status: 'signed-in', sessionId, user: null });
    expect(service.rotations).toBe(1);
  });

  it('a restore answered 429 stays loading, tries again after Retry-After and restores; a network failure too (never signed out)', async () => {
    service.ttlSeconds = 60;
    const storage = memoryStorage();
    const first = make(storage);
    await first.signIn({ email: 'a@example.com', password: 'pw' });
    const sessionId = (first.getSnapshot() as { sessionId: string }).sessionId;
    first.destroy();

    service.next.set('/refresh', {
      status: 429,
      headers: { 'Retry-After': '1' },
      body: { error: { code: 'RATE_LIMITED', message: 'Too many requests', status: 429 } },
    });
    const second = make(storage);
    const seen: AuthSnapshot[] = [];
    second.subscribe(() => seen.push(second.getSnapshot()));
    let ready = false;
    void second.ready.then(() => (ready = true));
    await sleep(300);
    expect(ready).toBe(false);
    expect(second.getSnapshot()).toEqual({ status: 'loading', retryAt: expect.any(Number) });
    const { retryAt } = second.getSnapshot() as { retryAt: number };
    expect(retryAt - Date.now()).toBeGreaterThan(300);
    expect(retryAt - Date.now()).toBeLessThanOrEqual(1000);
    await second.ready;
    expect(second.getSnapshot()).toMatchObject({ status: 'signed-in', sessionId });
    expect(seen.map((s) => s.status)).toEqual(['loading', 'signed-in']);

    // No answer at all: the same, with a backoff of 2 s.
    second.destroy();
    let offline = true;
    const flaky: typeof fetch = (input, init) => (offline ? Promise.reject(new TypeError('fetch failed')) : service.fetch(input, init));
    const third = make(storage, { fetch: flaky });
    await sleep(300);
    expect(third.getSnapshot()).toEqual({ status: 'loading', retryAt: expect.any(Number) });
    offline = false;
    await third.ready;
    expect(third.getSnapshot()).toMatchObject({ status: 'signed-in', sessionId });
  });

  it('a sign-in while a restore waits to try again goes ahead; the restore then stops', async () => {
    const storage = memoryStorage();
    await storage.set('identity:acme:refresh', 'a-token-the-service-rate-limits');
    service.next.set('/refresh', {
      status: 429,
      headers: { 'Retry-After': '30' },
      body: { error: { code: 'RATE_LIMITED', message: 'Too many requests', status: 429 } },
    });
    const client = make(storage);
    await sleep(100);
    expect(client.getSnapshot()).toMatchObject({ status: 'loading' });
    await client.signIn({ email: 'a@example.com', password: 'pw' });
    await client.ready;
    expect(client.getSnapshot()).toMatchObject({ status: 'signed-in' });
  });

  it('signOut when signed out sends nothing; refresh() renews at once and shows new roles; verifyEmail says what it did', async () => {
    const client = make();
    await client.ready;
    await client.signOut();
    expect(service.requests.filter((r) => r.path === '/logout')).toEqual([]);
    await expect(client.refresh()).rejects.toMatchObject({ code: 'NOT_SIGNED_IN' });

    service.ttlSeconds = 60;
    await client.signIn({ email: 'a@example.com', password: 'pw' });
    service.extraClaims = { roles: ['teacher'] };
    const renewed = await client.refresh();
    expect(renewed).toMatchObject({ status: 'signed-in', roles: ['teacher'] });
    expect(client.getSnapshot()).toBe(renewed);
    expect(service.rotations).toBe(1);
    await client.signOut();
    expect(service.requests.filter((r) => r.path === '/logout')).toHaveLength(1);

    service.next.set('/verify-email', { status: 200, body: { success: true } });
    await expect(client.verifyEmail('t')).resolves.toEqual({ kind: 'verified' });
    service.next.set('/verify-email', { status: 200, body: { success: true } });
    await expect(client.verifyEmail('t', { notMe: true })).resolves.toEqual({ kind: 'disowned' });
    expect(service.requests.filter((r) => r.path === '/verify-email').map((r) => r.body)).toEqual([
      { token: 't' },
      { token: 't', notMe: true },
    ]);
  });

  it('errors carry code, status, message, details and retryAfter', async () => {
    const client = make();
    service.next.set('/login', {
      status: 429,
      headers: { 'Retry-After': '30' },
      body: { error: { code: 'RATE_LIMITED', message: 'Too many requests', status: 429 } },
    });
    const limited = await client.signIn({ email: 'a@example.com', password: 'pw' }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(IdentityError);
    expect(limited).toMatchObject({
      name: 'IdentityError',
      code: 'RATE_LIMITED',
      status: 429,
      message: 'Too many requests',
      retryAfter: 30,
      requestId: 'req-1',
    });

    service.next.set('/register', {
      status: 400,
      body: {
        error: {
          code: 'VALIDATION_FAILED',
          message: 'email must be an email',
          status: 400,
          details: [{ field: 'email', message: 'must be an email' }],
        },
      },
    });
    await expect(client.register({ email: 'x', password: 'p', name: 'n' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'email', message: 'must be an email' }],
    });

    const offline = createIdentityClient({ baseUrl: BASE, realm: 'acme', fetch: () => Promise.reject(new TypeError('fetch failed')) });
    clients.push(offline);
    await expect(offline.forgotPassword('a@example.com')).rejects.toMatchObject({ code: 'NETWORK_ERROR', status: 0 });
    await expect(offline.me()).rejects.toMatchObject({ code: 'NOT_SIGNED_IN' });
  });
});
