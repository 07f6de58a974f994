import { CreateRealmUseCase } from '../../src/application/admin/create-realm.use-case';
import { createHmac, createPublicKey } from 'node:crypto';
import { createTestApp, TestApp } from '../support/test-app';
import { bearer, login, PASSWORD, register, signedInUser, uniqueEmail } from '../support/flows';

function b64url(value: object | string): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}

function decode(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [h, p] = token.split('.');
  return { header: JSON.parse(Buffer.from(h, 'base64url').toString()), payload: JSON.parse(Buffer.from(p, 'base64url').toString()) };
}

async function auditTypes(t: TestApp, userId: string): Promise<string[]> {
  const rows: { type: string }[] = await t.dataSource.query(`SELECT type FROM audit_events WHERE user_id = $1 ORDER BY at, type`, [userId]);
  return rows.map((r) => r.type);
}

describe('auth: register, login, refresh, logout, me', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('POST /register', () => {
    it('creates an unverified user, queues a verification email and records user.registered', async () => {
      const email = uniqueEmail('reg');
      const res = await t
        .api()
        .post('/api/v1/auth/register')
        .send({ email: `  ${email.toUpperCase()} `, password: PASSWORD, name: 'Ada Lovelace King' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ user: { id: expect.any(String), email, emailVerified: false }, message: expect.any(String) });
      const outbox: { recipient: string; text_body: string }[] = await t.dataSource.query(
        `SELECT recipient, text_body FROM email_outbox WHERE recipient = $1`,
        [email],
      );
      expect(outbox).toHaveLength(1);
      expect(outbox[0].text_body).toMatch(/http:\/\/localhost:3000\/verify-email\?token=[A-Za-z0-9_-]{43}/);
      const tokens: { token_hash: string }[] = await t.dataSource.query(`SELECT token_hash FROM one_time_tokens WHERE user_id = $1`, [
        res.body.user.id,
      ]);
      expect(tokens).toHaveLength(1);
      expect(outbox[0].text_body).not.toContain(tokens[0].token_hash);
      expect(await auditTypes(t, res.body.user.id)).toEqual(['user.registered']);
      const me = await login(t, email);
      const profile = await t
        .api()
        .get('/api/v1/auth/me')
        .set(...bearer(me.body.tokens.accessToken));
      expect(profile.body.user.profile).toEqual({ firstName: 'Ada', lastName: 'Lovelace King', avatar: null });
      expect(profile.body.user.roles).toEqual([]);
    });

    it('answers 409 EMAIL_ALREADY_REGISTERED for an address already in the realm, whatever its case', async () => {
      const { email } = await register(t);
      const res = await t.api().post('/api/v1/auth/register').send({ email: email.toUpperCase(), password: PASSWORD, name: 'Again' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: { code: 'EMAIL_ALREADY_REGISTERED', message: expect.any(String), status: 409 } });
    });

    it.each([
      ['an invalid email', { email: 'not-an-email', password: PASSWORD, name: 'N' }, 'email'],
      ['a 7-character password', { email: 'x@example.com', password: 'abcdefg', name: 'N' }, 'password'],
      ['a 129-character password', { email: 'x@example.com', password: 'a'.repeat(120) + 'bcdefghij', name: 'N' }, 'password'],
      ['a common password', { email: 'x@example.com', password: 'password1234', name: 'N' }, 'password'],
      ['the email as password', { email: 'longname@example.com', password: 'longname@example.com', name: 'N' }, 'password'],
      ['an empty name', { email: 'x@example.com', password: PASSWORD, name: '   ' }, 'name'],
      ['a 101-character name', { email: 'x@example.com', password: PASSWORD, name: 'n'.repeat(101) }, 'name'],
      ['a missing field', { email: 'x@example.com', password: PASSWORD }, 'name'],
      ['an unknown field', { email: 'x@example.com', password: PASSWORD, name: 'N', roles: ['realm-admin'] }, 'roles'],
      ['a non-string email', { email: 42, password: PASSWORD, name: 'N' }, 'email'],
    ])('refuses %s with 400 VALIDATION_FAILED naming the field', async (_what, body, field) => {
      const res = await t.api().post('/api/v1/auth/register').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
      expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(Object.keys(res.body)).toEqual(['error']);
      expect(Object.keys(res.body.error).sort()).toEqual(['code', 'details', 'message', 'status']);
    });

    it('accepts a 100-character password and 12 emoji (code points, not bytes)', async () => {
      await register(t, uniqueEmail(), 'Zq7'.repeat(33) + 'x');
      await register(t, uniqueEmail(), '🔑'.repeat(8) + 'xyzw');
    });

    it('treats two passwords sharing their first 72 bytes as different passwords', async () => {
      const prefix = 'k'.repeat(40) + 'Ω'.repeat(16);
      expect(Buffer.byteLength(prefix)).toBe(72);
      const { email } = await register(t, uniqueEmail(), `${prefix}AAAA`);
      expect((await login(t, email, `${prefix}BBBB`)).status).toBe(401);
      expect((await login(t, email, `${prefix}AAAA`)).status).toBe(200);
    });

    it('normalises passwords with NFKC: é typed precomposed or decomposed is the same password', async () => {
      const { email } = await register(t, uniqueEmail(), 'caf\u00e9 au lait matin');
      expect((await login(t, email, 'cafe\u0301 au lait matin')).status).toBe(200);
    });

    it('stores only a bcrypt hash of the password', async () => {
      const { id } = await register(t);
      const [row] = await t.dataSource.query(`SELECT password_hash FROM users WHERE id = $1`, [id]);
      expect(row.password_hash).toMatch(/^\$2[aby]\$04\$/);
      expect(row.password_hash).not.toContain(PASSWORD);
    });
  });

  describe('POST /login', () => {
    it('returns the user, a token pair and requiresMfa false, and records login.succeeded', async () => {
      const { email, id } = await register(t);
      const res = await login(t, email, PASSWORD);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      // Never cached, so no validator for conditional requests either.
      expect(res.headers.etag).toBeUndefined();
      expect(res.body).toEqual({
        user: { id, email, emailVerified: false, mfaEnabled: false },
        tokens: { accessToken: expect.any(String), refreshToken: expect.any(String), expiresIn: 900, tokenType: 'Bearer' },
        requiresMfa: false,
      });
      const { header, payload } = decode(res.body.tokens.accessToken);
      expect(header).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: expect.any(String) });
      expect(payload).toMatchObject({
        sub: id,
        realm: 'default',
        sid: expect.any(String),
        roles: [],
        amr: ['pwd'],
        jti: expect.any(String),
      });
      expect((payload.exp as number) - (payload.iat as number)).toBe(900);
      expect(res.body.tokens.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(await auditTypes(t, id)).toEqual(
        ['user.registered', 'login.succeeded'].sort((a, b) => (a === 'user.registered' ? -1 : b === 'user.registered' ? 1 : 0)),
      );
      const [session] = await t.dataSource.query(`SELECT user_id, device_type FROM sessions WHERE id = $1`, [payload.sid]);
      expect(session.user_id).toBe(id);
    });

    it('gives an unknown email and a wrong password the same 401 body, and audits both', async () => {
      const { email, id } = await register(t);
      const wrong = await login(t, email, 'not the right password');
      const unknown = await login(t, uniqueEmail('ghost'), 'not the right password');
      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      expect(wrong.body).toEqual(unknown.body);
      expect(wrong.body).toEqual({ error: { code: 'INVALID_CREDENTIALS', message: 'Invalid email or password', status: 401 } });
      expect(await auditTypes(t, id)).toContain('login.failed');
    });

    it('opens a new session with new tokens on every login', async () => {
      const { email } = await register(t);
      const a = await login(t, email);
      const b = await login(t, email);
      expect(decode(a.body.tokens.accessToken).payload.sid).not.toBe(decode(b.body.tokens.accessToken).payload.sid);
      expect(a.body.tokens.refreshToken).not.toBe(b.body.tokens.refreshToken);
    });

    it('refuses a missing password with 400', async () => {
      const res = await t.api().post('/api/v1/auth/login').send({ email: 'a@example.com' });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('password');
    });
  });

  describe('POST /refresh', () => {
    it('rotates: a new refresh token, and the old one refused after the leeway', async () => {
      const user = await signedInUser(t);
      const first = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        tokens: { accessToken: expect.any(String), refreshToken: expect.any(String), expiresIn: 900, tokenType: 'Bearer' },
      });
      expect(first.body.tokens.refreshToken).not.toBe(user.refreshToken);
      const next = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: first.body.tokens.refreshToken });
      expect(next.status).toBe(200);
    });

    it('answers a re-presented token within the leeway with the same successor', async () => {
      const user = await signedInUser(t);
      const a = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken });
      t.clock.advance(5);
      const b = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken });
      expect(b.status).toBe(200);
      expect(b.body.tokens.refreshToken).toBe(a.body.tokens.refreshToken);
      expect(b.body.tokens.accessToken).not.toBe(a.body.tokens.accessToken);
    });

    it('detects reuse after the leeway: revokes the session so even the newest tokens fail, and audits it', async () => {
      const user = await signedInUser(t);
      const rotated = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken });
      t.clock.advance(11);
      const reuse = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken });
      expect(reuse.status).toBe(401);
      expect(reuse.body.error.code).toBe('INVALID_TOKEN');
      const newest = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: rotated.body.tokens.refreshToken });
      expect(newest.status).toBe(401);
      const me = await t
        .api()
        .get('/api/v1/auth/me')
        .set(...bearer(rotated.body.tokens.accessToken));
      expect(me.status).toBe(401);
      expect(await auditTypes(t, user.id)).toContain('refresh.reused');
    });

    it('refuses unknown and malformed tokens with 401 INVALID_TOKEN', async () => {
      for (const refreshToken of ['x'.repeat(43), 'short', 'a.b.c']) {
        const res = await t.api().post('/api/v1/auth/refresh').send({ refreshToken });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: { code: 'INVALID_TOKEN', message: expect.any(String), status: 401 } });
      }
    });

    it('refuses a token of another realm (the token belongs to exactly one realm)', async () => {
      const user = await signedInUser(t);
      const res = await t.api().post('/api/v1/auth/refresh').set('X-Realm-Id', 'master').send({ refreshToken: user.refreshToken });
      expect(res.status).toBe(401);
    });

    it('stops after the idle timeout', async () => {
      const user = await signedInUser(t);
      t.clock.advance(t.config.sessionIdleTimeoutSeconds + 1);
      const res = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken });
      expect(res.status).toBe(401);
    });

    it('leaves exactly one live successor after 20 parallel refreshes of one token', async () => {
      const user = await signedInUser(t);
      const results = await Promise.all(
        Array.from({ length: 20 }, () => t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
      const successors = new Set(results.map((r) => r.body.tokens.refreshToken));
      expect(successors.size).toBe(1);
      const sid = decode(user.accessToken).payload.sid;
      const live: { n: string }[] = await t.dataSource.query(
        `SELECT count(*) AS n FROM refresh_tokens WHERE session_id = $1 AND rotated_at IS NULL`,
        [sid],
      );
      expect(Number(live[0].n)).toBe(1);
      const rows: { token_hash: string }[] = await t.dataSource.query(`SELECT token_hash FROM refresh_tokens WHERE session_id = $1`, [sid]);
      expect(rows.map((r) => r.token_hash)).not.toContain(user.refreshToken);
    });
  });

  describe('POST /logout', () => {
    it('revokes the session: the refresh token and the access token stop working, logout is audited', async () => {
      const user = await signedInUser(t);
      const res = await t.api().post('/api/v1/auth/logout').send({ refreshToken: user.refreshToken });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      expect((await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken })).status).toBe(401);
      const me = await t
        .api()
        .get('/api/v1/auth/me')
        .set(...bearer(user.accessToken));
      expect(me.status).toBe(401);
      expect(me.body.error.code).toBe('INVALID_TOKEN');
      expect(await auditTypes(t, user.id)).toContain('logout');
    });

    it('answers success again for an already-ended session, and 401 for a token that never existed', async () => {
      const user = await signedInUser(t);
      await t.api().post('/api/v1/auth/logout').send({ refreshToken: user.refreshToken });
      const again = await t.api().post('/api/v1/auth/logout').send({ refreshToken: user.refreshToken });
      expect(again.body).toEqual({ success: true });
      const never = await t
        .api()
        .post('/api/v1/auth/logout')
        .send({ refreshToken: 'y'.repeat(43) });
      expect(never.status).toBe(401);
      expect(never.body.error.code).toBe('INVALID_TOKEN');
    });
  });

  describe('GET /me and access tokens', () => {
    it('returns the administrative view of the user', async () => {
      const user = await signedInUser(t);
      const res = await t
        .api()
        .get('/api/v1/auth/me')
        .set(...bearer(user.accessToken));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        user: {
          id: user.id,
          email: user.email,
          emailVerified: false,
          profile: { firstName: 'Test', lastName: 'User', avatar: null },
          mfa: { enabled: false, methods: [] },
          status: 'active',
          roles: [],
          appMetadata: {},
          hasPassword: true,
          identities: [],
          createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          lastLoginAt: expect.stringMatching(/Z$/),
        },
      });
    });

    it('refuses a missing token, and tokens in the URL', async () => {
      const user = await signedInUser(t);
      const none = await t.api().get('/api/v1/auth/me');
      expect(none.status).toBe(401);
      expect(none.body.error.code).toBe('INVALID_TOKEN');
      expect((await t.api().get(`/api/v1/auth/me?access_token=${user.accessToken}`)).status).toBe(401);
    });

    it('refuses the token of a suspended account even while its session row is still live', async () => {
      const user = await signedInUser(t);
      const me = () =>
        t
          .api()
          .get('/api/v1/auth/me')
          .set(...bearer(user.accessToken));
      expect((await me()).status).toBe(200);
      // The state a login racing an administrator's suspension could leave: the account suspended,
      // a session written after the suspension revoked the others.
      await t.dataSource.query(`UPDATE users SET status = 'suspended' WHERE id = $1`, [user.id]);
      const res = await me();
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('INVALID_TOKEN');
    });

    it('refuses an expired token with TOKEN_EXPIRED', async () => {
      const user = await signedInUser(t);
      t.clock.advance(901);
      const res = await t
        .api()
        .get('/api/v1/auth/me')
        .set(...bearer(user.accessToken));
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('TOKEN_EXPIRED');
    });

    it('refuses tampered, alg none, HS256-with-public-key, unknown-kid and other-realm tokens with INVALID_TOKEN', async () => {
      const user = await signedInUser(t);
      const [h, p, s] = user.accessToken.split('.');
      const { header, payload } = decode(user.accessToken);
      const jwks = (await t.api().get('/.well-known/jwks.json')).body.keys;
      const publicPem = createPublicKey({ key: jwks[0], format: 'jwk' }).export({ format: 'pem', type: 'spki' }).toString();
      const hs = (hdr: object, body: object, key: string) => {
        const input = `${b64url(hdr)}.${b64url(body)}`;
        return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
      };
      const forged = {
        tampered: `${h}.${b64url({ ...payload, roles: ['realm-admin'] })}.${s}`,
        algNone: `${b64url({ alg: 'none', typ: 'at+jwt', kid: header.kid })}.${p}.`,
        hs256: hs({ alg: 'HS256', typ: 'at+jwt', kid: header.kid }, payload, publicPem),
        unknownKid: `${b64url({ ...header, kid: 'no-such-key' })}.${p}.${s}`,
        hostileKid: `${b64url({ ...header, kid: "../../dev/null' OR '1'='1" })}.${p}.${s}`,
        wrongTyp: `${b64url({ ...header, typ: 'JWT' })}.${p}.${s}`,
        malformed: 'not-a-jwt',
      };
      for (const [name, token] of Object.entries(forged)) {
        const res = await t
          .api()
          .get('/api/v1/auth/me')
          .set(...bearer(token));
        expect([name, res.status, res.body.error?.code]).toEqual([name, 401, 'INVALID_TOKEN']);
      }
      const otherRealm = await t
        .api()
        .get('/api/v1/auth/me')
        .set('X-Realm-Id', 'master')
        .set(...bearer(user.accessToken));
      expect(otherRealm.status).toBe(401);
    });

    it('publishes the signing key at /.well-known/jwks.json', async () => {
      const res = await t.api().get('/.well-known/jwks.json');
      expect(res.status).toBe(200);
      expect(res.body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: expect.any(String) });
      expect(res.body.keys[0]).not.toHaveProperty('d');
    });
  });
});

describe('HTTP conventions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers an unknown route with 404 NOT_FOUND in the envelope', async () => {
    const res = await t.api().get('/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String), status: 404 } });
  });

  it('refuses a non-JSON body with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await t.api().post('/api/v1/auth/login').set('Content-Type', 'text/plain').send('email=a');
    expect(res.status).toBe(415);
    expect(res.body.error).toEqual({ code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.any(String), status: 415 });
  });

  it('refuses a body over 64 KiB with 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await t
      .api()
      .post('/api/v1/auth/register')
      .send({ email: 'a@example.com', password: 'p'.repeat(2 * 1024 * 1024), name: 'N' });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('refuses malformed JSON with 400 VALIDATION_FAILED, and a JSON array body too', async () => {
    const bad = await t.api().post('/api/v1/auth/login').set('Content-Type', 'application/json').send('{"email": ');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    const array = await t
      .api()
      .post('/api/v1/auth/login')
      .send([{ email: 'a@example.com', password: 'x' }]);
    expect(array.status).toBe(400);
  });

  it('echoes a safe X-Request-Id and generates one otherwise', async () => {
    const echoed = await t.api().get('/health/live').set('X-Request-Id', 'abc-123');
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const generated = await t.api().get('/health/live').set('X-Request-Id', 'bad id with spaces');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const error = await t.api().get('/nope');
    expect(error.headers['x-request-id']).toBeDefined();
  });

  it('reads X-Realm-Id: unknown realm → 404 REALM_NOT_FOUND, malformed → 400', async () => {
    const unknown = await t
      .api()
      .post('/api/v1/auth/login')
      .set('X-Realm-Id', 'no-such-realm')
      .send({ email: 'a@example.com', password: 'x' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('REALM_NOT_FOUND');
    for (const bad of ['', '../', "' OR 1=1--", 'A'.repeat(10000)]) {
      const res = await t.api().post('/api/v1/auth/login').set('X-Realm-Id', bad).send({ email: 'a@example.com', password: 'x' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
    }
  });

  it('keeps each realm separate: the same email registers independently in two realms', async () => {
    await t.app.get(CreateRealmUseCase).execute({ id: 'twin-realm', name: 'Twin', actorId: null, ip: null });
    const email = uniqueEmail('twin');
    await register(t, email, PASSWORD);
    await register(t, email, 'another good passphrase', 'twin-realm');
    expect((await login(t, email, 'another good passphrase')).status).toBe(401);
    expect((await login(t, email, 'another good passphrase', {}, 'twin-realm')).status).toBe(200);
  });

  it('reports liveness and readiness', async () => {
    expect((await t.api().get('/health/live')).body).toEqual({ status: 'ok' });
    const ready = await t.api().get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.checks.database.ok).toBe(true);
    expect(ready.body.checks.migrations.ok).toBe(true);
  });
});
