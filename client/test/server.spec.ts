import { calculateJwkThumbprint, decodeProtectedHeader, type JWK } from 'jose';
import { createTestApp, TestApp } from '../../test/support/test-app';
import { PASSWORD, uniqueEmail } from '../../test/support/flows';
import { code, decodeJwt, midStep, nextStep } from '../../test/support/mfa';
import { freePort } from '../../test/support/sdk-app-page';
import { linkToken, SmtpSink } from '../../test/support/smtp-sink';
import { SoftAuthenticator } from '../../test/support/soft-authenticator';
import {
  createIdentityClient,
  IdentityError,
  memoryStorage,
  type FingerprintComponents,
  type IdentityClient,
  type TokenStorage,
} from '../src/index.js';

const NEW_PASSWORD = 'another long passphrase 42';
const DEVICE: FingerprintComponents = {
  canvas: 'c1'.repeat(32),
  audio: 'a1'.repeat(32),
  webglRenderer: 'GPU 1',
  fonts: 'f1',
  screen: '1920x1080',
  cores: 8,
  tz: 'Europe/Berlin',
};
const OTHER_DEVICE: FingerprintComponents = {
  canvas: 'c2'.repeat(32),
  audio: 'a2'.repeat(32),
  webglRenderer: 'GPU 2',
  fonts: 'f2',
  screen: '1280x800',
  cores: 4,
  tz: 'Asia/Tokyo',
};

/** A cookie jar around the global fetch, as a browser keeps one (Node's fetch keeps none). */
function cookieFetch() {
  const jar = new Map<string, string>();
  const bodies: unknown[] = [];
  const fetchWithJar = async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
    if (jar.size) headers.set('Cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const response = await fetch(input, { ...init, headers });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((part) => part.trim());
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (attributes.includes('Max-Age=0')) jar.delete(name);
      else jar.set(name, value);
    }
    bodies.push(
      await response
        .clone()
        .json()
        .catch(() => null),
    );
    return response;
  };
  return { fetch: fetchWithJar as typeof fetch, jar, bodies };
}

describe('the client against the real service (Node, memory storage)', () => {
  let t: TestApp;
  let sink: SmtpSink;
  let baseUrl: string;
  const authenticator = new SoftAuthenticator();
  /** What the browser's WebAuthn functions would do, done by a software authenticator. */
  const softWebauthn = async () => ({
    startRegistration: async ({ optionsJSON }: { optionsJSON: { challenge: string } }) => authenticator.attestation(optionsJSON),
    startAuthentication: async ({ optionsJSON }: { optionsJSON: { challenge: string } }) => authenticator.assertion(optionsJSON),
  });
  const clients: IdentityClient[] = [];
  let device = DEVICE;
  const make = (storage: TokenStorage = memoryStorage(), extra = {}) => {
    const client = createIdentityClient({
      baseUrl,
      realm: 'default',
      transport: storage,
      fingerprint: () => device,
      webauthn: softWebauthn as never,
      ...extra,
    });
    clients.push(client);
    return client;
  };
  const sessionOf = (client: IdentityClient) => (client.getSnapshot() as { sessionId: string }).sessionId;

  beforeAll(async () => {
    sink = await SmtpSink.start();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({
      env: { SMTP_URL: sink.url, MAIL_FROM: 'Identity <no-reply@identity.example>', OUTBOX_POLL_INTERVAL_MS: '50', API_URL: baseUrl },
    });
    await t.app.listen(port, '127.0.0.1');
  });
  afterAll(async () => {
    clients.forEach((client) => client.destroy());
    await t?.close();
    await sink?.stop();
  });

  it('covers every end-user endpoint: account, sessions, MFA with TOTP, recovery code and security key, step-up', async () => {
    const email = uniqueEmail('sdk');
    const client = make();
    await client.ready;

    // Registration, email verification, password reset — tokens from the links in the emails.
    const registered = await client.register({ email, password: PASSWORD, name: 'Ada Lovelace' });
    expect(registered.user).toMatchObject({ email, emailVerified: false });
    await expect(client.register({ email, password: PASSWORD, name: 'Ada' })).rejects.toMatchObject({
      code: 'EMAIL_ALREADY_REGISTERED',
      status: 409,
    });
    await sink.waitFor(email, 1);
    await client.resendVerification(email);
    const verification = (await sink.waitFor(email, 2))[1];
    await client.verifyEmail(linkToken(verification, '/verify-email'));
    await expect(client.verifyEmail(linkToken(verification, '/verify-email'))).rejects.toMatchObject({
      code: 'INVALID_VERIFICATION_TOKEN',
    });
    await client.forgotPassword(email);
    const mails = await sink.waitFor(email, 3);
    await client.resetPassword({ token: linkToken(mails[2], '/reset-password'), password: NEW_PASSWORD });

    // Sign-in, the account and its sessions.
    await expect(client.signIn({ email, password: PASSWORD })).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS', status: 401 });
    expect(await client.signIn({ email, password: NEW_PASSWORD })).toMatchObject({
      kind: 'signed-in',
      user: { email, emailVerified: true },
    });
    const me = await client.me();
    expect(me).toMatchObject({ email, emailVerified: true, profile: { firstName: 'Ada', lastName: 'Lovelace' }, mfa: { enabled: false } });
    const phone = make();
    const laptop = make();
    await phone.signIn({ email, password: NEW_PASSWORD });
    await laptop.signIn({ email, password: NEW_PASSWORD });
    const sessions = await client.sessions.list();
    expect(sessions).toHaveLength(3);
    expect(sessions.filter((s) => s.current).map((s) => s.id)).toEqual([sessionOf(client)]);
    expect(sessions.find((s) => s.current)?.device.fingerprint).toBe(JSON.stringify(DEVICE));
    await client.sessions.revoke(sessionOf(phone));
    await expect(phone.me()).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(client.sessions.revoke(sessionOf(phone))).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND', status: 404 });
    expect(await client.sessions.revokeOthers()).toBe(1);
    await expect(laptop.me()).rejects.toBeInstanceOf(IdentityError);
    await client.changePassword({ currentPassword: NEW_PASSWORD, newPassword: PASSWORD });

    // TOTP: set up, confirm, then a sign-in needs the second step.
    expect(await client.mfa.status()).toMatchObject({ enabled: false, methods: [], recoveryCodesRemaining: 0 });
    const setup = await client.mfa.setupTotp();
    expect(setup.qrCode).toMatch(/^data:image\/png;base64,/);
    midStep(t);
    const confirmed = await client.mfa.confirmTotp(code(t, setup.secret));
    expect(confirmed.mfa).toEqual({ enabled: true, methods: ['totp'] });
    const recoveryCodes = confirmed.recoveryCodes!;
    expect(recoveryCodes).toHaveLength(10);
    await client.signOut();
    expect(client.getSnapshot()).toEqual({ status: 'signed-out', reason: 'signed-out' });

    const mfaRequired = jest.fn();
    client.on('mfa-required', mfaRequired);
    expect(await client.signIn({ email, password: PASSWORD })).toMatchObject({ kind: 'mfa-required', methods: ['totp'] });
    expect(mfaRequired).toHaveBeenCalledWith({ reason: 'sign-in', methods: ['totp'], sessionId: null });
    await expect(client.verifyMfa({ type: 'totp', code: '000000' })).rejects.toMatchObject({ code: 'INVALID_MFA_CODE' });
    nextStep(t);
    await client.verifyMfa({ type: 'totp', code: code(t, setup.secret) });
    expect(client.getSnapshot()).toMatchObject({ status: 'signed-in', amr: ['pwd', 'otp'] });
    await client.signOut();
    await client.signIn({ email, password: PASSWORD });
    await client.verifyMfa({ type: 'recovery', code: recoveryCodes[0] });
    expect(await client.mfa.status()).toMatchObject({ recoveryCodesRemaining: 9 });

    // A security key, through the WebAuthn functions (here a software authenticator).
    const added = await client.mfa.addSecurityKey({ name: 'Blue key' });
    expect(added).toMatchObject({
      credential: { id: authenticator.id, name: 'Blue key' },
      mfa: { methods: expect.arrayContaining(['totp', 'webauthn']) },
    });
    await client.signOut();
    expect(await client.signIn({ email, password: PASSWORD })).toMatchObject({
      kind: 'mfa-required',
      methods: expect.arrayContaining(['webauthn']),
    });
    await client.verifyMfa({ type: 'webauthn' });
    expect(decodeJwt((await client.getAccessToken())!)).toMatchObject({ amr: ['pwd', 'hwk'] });

    // Step-up: the same session refreshed from another device is flagged; verifying resumes it.
    const storage = memoryStorage();
    const original = make(storage);
    await original.signIn({ email, password: PASSWORD });
    nextStep(t);
    await original.verifyMfa({ type: 'totp', code: code(t, setup.secret) });
    const sessionId = sessionOf(original);
    original.destroy();
    device = OTHER_DEVICE;
    const moved = make(storage);
    const stepUp = jest.fn();
    moved.on('mfa-required', stepUp);
    await moved.ready;
    expect(moved.getSnapshot()).toMatchObject({ status: 'mfa-required', reason: 'step-up' });
    expect(stepUp).toHaveBeenCalledTimes(1);
    nextStep(t);
    await moved.verifyMfa({ type: 'totp', code: code(t, setup.secret) });
    expect(moved.getSnapshot()).toMatchObject({ status: 'signed-in', sessionId });
    expect((await moved.sessions.list()).find((s) => s.current)).toMatchObject({ id: sessionId, status: 'active' });
    device = DEVICE;

    // Managing the factors.
    await expect(client.mfa.removeSecurityKey(authenticator.id, 'wrong password')).rejects.toBeInstanceOf(IdentityError);
    expect(await client.mfa.removeSecurityKey(authenticator.id, PASSWORD)).toEqual({ enabled: true, methods: ['totp'] });
    const fresh = await client.mfa.regenerateRecoveryCodes(PASSWORD);
    expect(fresh).toHaveLength(10);
    expect(fresh).not.toContain(recoveryCodes[1]);
    expect(await client.mfa.disableTotp(PASSWORD)).toEqual({ enabled: false, methods: [] });
    expect(await client.signIn({ email, password: PASSWORD })).toMatchObject({ kind: 'signed-in' });

    // The fetch wrapper: the service's clock moves past the token's expiry; one refresh, one retry.
    t.clock.advance(t.config.accessTokenTtlSeconds + 5);
    const before = await client.getAccessToken();
    const answer = await client.fetch(`${baseUrl}/api/v1/auth/me`, { headers: { 'X-Realm-Id': 'default' } });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { user: { email: string } }).user.email).toBe(email);
    expect(await client.getAccessToken()).not.toBe(before);
  });

  it('cookie transport: the refresh token stays in the cookie jar, never in a body; sign-out clears it', async () => {
    const email = uniqueEmail('sdk-cookie');
    const browser = cookieFetch();
    const client = make(undefined, { transport: 'cookie', fetch: browser.fetch });
    await client.ready;
    await client.register({ email, password: PASSWORD, name: 'Cookie User' });
    await client.signIn({ email, password: PASSWORD });
    // Beside the refresh cookie, only the session hint, which says nothing but "signed in".
    expect([...browser.jar.keys()].sort()).toEqual(['__Host-refresh-default', '__Host-session-default']);
    expect(browser.jar.get('__Host-session-default')).toBe('1');
    const first = browser.jar.get('__Host-refresh-default');
    expect(JSON.stringify(browser.bodies)).not.toContain(first);
    expect(browser.bodies.some((b) => (b as { tokens?: { refreshToken?: string } })?.tokens?.refreshToken)).toBe(false);

    t.clock.advance(t.config.accessTokenTtlSeconds + 5);
    const me = await client.fetch(`${baseUrl}/api/v1/auth/me`);
    expect(me.status).toBe(200);
    expect(browser.jar.get('__Host-refresh-default')).not.toBe(first);

    await client.signOut();
    expect(browser.jar.size).toBe(0);
    const rows: { revoked_at: Date | null }[] = await t.dataSource.query(
      `SELECT s.revoked_at FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1`,
      [email],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].revoked_at).not.toBeNull();
  });
});

describe('the client with DPoP against the real service', () => {
  let t: TestApp;
  let dpopUrl: string;
  beforeAll(async () => {
    const port = await freePort();
    dpopUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { API_URL: dpopUrl, ACCESS_TOKEN_TTL_SECONDS: '2' } });
    await t.app.listen(port, '127.0.0.1');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('DPoP: the session is bound to the client’s key; a stolen refresh or access token is refused, the owner goes on', async () => {
    const email = uniqueEmail('sdk-dpop');
    const proofs: string[] = [];
    const recording = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const proof = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).get('DPoP');
      if (proof) proofs.push(proof);
      return fetch(input, init);
    }) as typeof fetch;
    const storage = memoryStorage();
    const client = createIdentityClient({ baseUrl: dpopUrl, realm: 'default', transport: storage, dpop: true, fetch: recording });
    await client.register({ email, password: PASSWORD, name: 'Bound User' });
    await client.signIn({ email, password: PASSWORD });

    const token = (await client.getAccessToken())!;
    const jwk = decodeProtectedHeader(proofs[0]).jwk as JWK;
    expect(jwk).toEqual({ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String) });
    expect(decodeJwt(token)).toMatchObject({ cnf: { jkt: await calculateJwkThumbprint(jwk) } });
    const current = (await client.sessions.list()).find((s) => s.current)!;
    expect(current.dpopBound).toBe(true);

    // The token alone, as Bearer, is refused; through the client (DPoP scheme and a proof) it works.
    const bearer = await fetch(`${dpopUrl}/api/v1/auth/me`, { headers: { Authorization: `Bearer ${token}` } });
    expect(bearer.status).toBe(401);
    expect(((await bearer.json()) as { error: { code: string } }).error.code).toBe('INVALID_DPOP_PROOF');
    expect((await client.fetch(`${dpopUrl}/api/v1/auth/me?x=1`)).status).toBe(200);

    // A copy of the refresh token without the key: refused, and the token is not spent.
    const stolen = (await storage.get('identity:default:refresh'))!;
    const refused = await fetch(`${dpopUrl}/api/v1/auth/refresh`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ refreshToken: stolen }),
    });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('INVALID_DPOP_PROOF');

    // The access token lives 2 s: the client renews it on its own, with a proof.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await storage.get('identity:default:refresh')).not.toBe(stolen);
    expect((await client.fetch(`${dpopUrl}/api/v1/auth/me`)).status).toBe(200);
    const renewed = decodeJwt((await client.getAccessToken())!);
    expect(renewed).toMatchObject({ sid: current.id, cnf: { jkt: await calculateJwkThumbprint(jwk) } });
    // Every proof was made with the same key.
    for (const proof of proofs) expect(decodeProtectedHeader(proof).jwk).toEqual(jwk);
    await client.signOut();
    expect(client.getSnapshot()).toEqual({ status: 'signed-out', reason: 'signed-out' });
    // The logout carried a proof too: the session really ended.
    const [row] = await t.dataSource.query(`SELECT revoked_at FROM sessions WHERE id = $1`, [current.id]);
    expect(row.revoked_at).not.toBeNull();
    client.destroy();
  });
});
