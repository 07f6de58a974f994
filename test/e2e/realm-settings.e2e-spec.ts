import { Client } from 'pg';
import { RealmRepository } from '../../src/application/ports/realm.repository';
import { runCli } from '../../src/cli';
import {
  ADMIN_ENV,
  adminApi,
  createRealm,
  createUser,
  lastQueuedMailText,
  storedEvents,
  superAdmin,
  SignedIn,
} from '../support/admin-flows';
import { bearer, PASSWORD, uniqueEmail } from '../support/flows';
import { decodeJwt } from '../support/mfa';
import { SoftAuthenticator } from '../support/soft-authenticator';
import { createTestApp, TestApp } from '../support/test-app';

// Several apps boot in this file (a second instance on the same database among them).
jest.setTimeout(120_000);

type Body = Record<string, unknown>;
type Req = ReturnType<ReturnType<TestApp['api']>['post']>;

describe('realm settings: GET/PATCH /v1/admin/realm and their effect', () => {
  let t: TestApp;
  let root: SignedIn;

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    root = await superAdmin(t);
  });
  afterAll(async () => t.close());

  /** Creates a realm as the super-admin, optionally with settings. */
  async function aRealm(prefix: string, settings?: Body): Promise<string> {
    const id = `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1000)}`;
    await createRealm(t, root.accessToken, id);
    if (settings) await patchOk(id, { settings });
    return id;
  }

  function patch(realm: string, body: Body, token = root.accessToken) {
    return adminApi(t, token, realm).patch('/realm').send(body);
  }

  async function patchOk(realm: string, body: Body): Promise<Body> {
    const res = await patch(realm, body);
    if (res.status !== 200) throw new Error(`PATCH failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.realm;
  }

  const auth = (realm: string) => ({
    post: (path: string) => t.api().post(`/api/v1/auth${path}`).set('X-Realm-Id', realm),
    get: (path: string, token: string) =>
      t
        .api()
        .get(`/api/v1/auth${path}`)
        .set('X-Realm-Id', realm)
        .set(...bearer(token)),
  });

  async function registered(realm: string, email = uniqueEmail('rs'), password = PASSWORD) {
    const res = await auth(realm).post('/register').send({ email, password, name: 'Realm User' });
    if (res.status !== 201) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { id: res.body.user.id as string, email, password };
  }

  async function signedIn(realm: string) {
    const user = await registered(realm);
    const res = await auth(realm).post('/login').send({ email: user.email, password: user.password });
    if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { ...user, accessToken: res.body.tokens.accessToken as string, refreshToken: res.body.tokens.refreshToken as string };
  }

  const outboxText = (email: string) => lastQueuedMailText(t, email);

  const errorOf = (res: { status: number; body: { error?: { code: string } } }) => [res.status, res.body.error?.code];

  describe('the resource', () => {
    it('shows every setting with the deployment default until the realm sets it, and null returns it there', async () => {
      const realm = await aRealm('show');
      const res = await adminApi(t, root.accessToken, realm).get('/realm');
      expect(res.status).toBe(200);
      const c = t.config;
      expect(res.body.realm).toEqual({
        id: realm,
        name: `Realm ${realm}`,
        enabled: true,
        settings: {
          publicUrl: c.publicUrl,
          webauthn: { rpId: c.webauthnRpId, rpName: c.webauthnRpName, origins: c.webauthnOrigins },
          registration: 'open',
          requireVerifiedEmail: false,
          accessTokenTtlSeconds: c.accessTokenTtlSeconds,
          sessionIdleTimeoutSeconds: c.sessionIdleTimeoutSeconds,
          sessionMaxLifetimeSeconds: c.sessionMaxLifetimeSeconds,
          lockout: { maxFailures: c.lockoutMaxFailures, durationSeconds: c.lockoutDurationSeconds },
          passwordMinLength: 8,
          fingerprintMatchThreshold: c.fingerprintMatchThreshold,
          allowedReturnUrls: [],
          clientRegistration: 'closed',
        },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });

      const changed = await patchOk(realm, {
        name: 'Acme Shop',
        settings: { lockout: { maxFailures: 4 }, accessTokenTtlSeconds: 600, fingerprintMatchThreshold: 0.8, clientRegistration: 'token' },
      });
      expect(changed).toMatchObject({
        name: 'Acme Shop',
        settings: {
          lockout: { maxFailures: 4, durationSeconds: c.lockoutDurationSeconds },
          accessTokenTtlSeconds: 600,
          fingerprintMatchThreshold: 0.8,
          clientRegistration: 'token',
        },
      });
      // Merged member by member: durationSeconds set later keeps maxFailures.
      const merged = await patchOk(realm, { settings: { lockout: { durationSeconds: 30 } } });
      expect((merged.settings as Body).lockout).toEqual({ maxFailures: 4, durationSeconds: 30 });
      const reset = await patchOk(realm, { settings: { lockout: null, accessTokenTtlSeconds: null, clientRegistration: null } });
      expect(reset.settings).toMatchObject({
        clientRegistration: 'closed',
        lockout: { maxFailures: c.lockoutMaxFailures, durationSeconds: c.lockoutDurationSeconds },
        accessTokenTtlSeconds: c.accessTokenTtlSeconds,
        fingerprintMatchThreshold: 0.8,
      });
      expect((await adminApi(t, root.accessToken, realm).get('/realm')).body.realm).toEqual(reset);
    });

    it('audits realm.updated in the realm with the changed fields, filterable in GET /events', async () => {
      const realm = await aRealm('audit');
      await patchOk(realm, { settings: { passwordMinLength: 10, registration: 'closed' } });
      const events = await adminApi(t, root.accessToken, realm).get('/events?type=realm.updated');
      expect(events.status).toBe(200);
      expect(events.body.events).toHaveLength(1);
      expect(events.body.events[0]).toMatchObject({
        type: 'realm.updated',
        realmId: realm,
        actorId: root.id,
        details: {
          changed: ['settings.registration', 'settings.passwordMinLength'],
          from: { 'settings.registration': 'open', 'settings.passwordMinLength': 8 },
          to: { 'settings.registration': 'closed', 'settings.passwordMinLength': 10 },
        },
      });
      // A PATCH that changes nothing records nothing.
      await patchOk(realm, { settings: { passwordMinLength: 10 } });
      expect(await storedEvents(t, realm, { type: 'realm.updated' })).toHaveLength(1);
    });
  });

  describe('validation', () => {
    const cases: [string, Body, string][] = [
      ['accessTokenTtlSeconds below 60', { settings: { accessTokenTtlSeconds: 59 } }, 'settings.accessTokenTtlSeconds'],
      ['accessTokenTtlSeconds above 86400', { settings: { accessTokenTtlSeconds: 86401 } }, 'settings.accessTokenTtlSeconds'],
      ['accessTokenTtlSeconds not whole', { settings: { accessTokenTtlSeconds: 90.5 } }, 'settings.accessTokenTtlSeconds'],
      ['accessTokenTtlSeconds as a string', { settings: { accessTokenTtlSeconds: '900' } }, 'settings.accessTokenTtlSeconds'],
      ['sessionIdleTimeoutSeconds below 300', { settings: { sessionIdleTimeoutSeconds: 299 } }, 'settings.sessionIdleTimeoutSeconds'],
      [
        'sessionIdleTimeoutSeconds above a year',
        { settings: { sessionIdleTimeoutSeconds: 31536001 } },
        'settings.sessionIdleTimeoutSeconds',
      ],
      ['sessionMaxLifetimeSeconds below 300', { settings: { sessionMaxLifetimeSeconds: 299 } }, 'settings.sessionMaxLifetimeSeconds'],
      [
        'sessionMaxLifetimeSeconds above a year',
        { settings: { sessionMaxLifetimeSeconds: 31536001 } },
        'settings.sessionMaxLifetimeSeconds',
      ],
      [
        'an idle timeout longer than the maximum lifetime',
        { settings: { sessionIdleTimeoutSeconds: 7200, sessionMaxLifetimeSeconds: 3600 } },
        'settings.sessionIdleTimeoutSeconds',
      ],
      ['lockout.maxFailures 0', { settings: { lockout: { maxFailures: 0 } } }, 'settings.lockout.maxFailures'],
      ['lockout.maxFailures 101', { settings: { lockout: { maxFailures: 101 } } }, 'settings.lockout.maxFailures'],
      ['lockout.durationSeconds -1', { settings: { lockout: { durationSeconds: -1 } } }, 'settings.lockout.durationSeconds'],
      ['lockout.durationSeconds 86401', { settings: { lockout: { durationSeconds: 86401 } } }, 'settings.lockout.durationSeconds'],
      ['lockout not an object', { settings: { lockout: 5 } }, 'settings.lockout'],
      ['passwordMinLength 7', { settings: { passwordMinLength: 7 } }, 'settings.passwordMinLength'],
      ['passwordMinLength 129', { settings: { passwordMinLength: 129 } }, 'settings.passwordMinLength'],
      ['fingerprintMatchThreshold 0.49', { settings: { fingerprintMatchThreshold: 0.49 } }, 'settings.fingerprintMatchThreshold'],
      ['a return URL with a fragment', { settings: { allowedReturnUrls: ['https://app.example.com/cb#x'] } }, 'settings.allowedReturnUrls'],
      ['a relative return URL', { settings: { allowedReturnUrls: ['/cb'] } }, 'settings.allowedReturnUrls'],
      [
        '21 return URLs',
        { settings: { allowedReturnUrls: Array.from({ length: 21 }, (_, i) => `https://app.example.com/${i}`) } },
        'settings.allowedReturnUrls',
      ],
      ['fingerprintMatchThreshold 0.96', { settings: { fingerprintMatchThreshold: 0.96 } }, 'settings.fingerprintMatchThreshold'],
      ['publicUrl not a URL', { settings: { publicUrl: 'app.example.com' } }, 'settings.publicUrl'],
      ['publicUrl with another scheme', { settings: { publicUrl: 'javascript:alert(1)' } }, 'settings.publicUrl'],
      ['publicUrl with credentials', { settings: { publicUrl: 'https://u:p@app.example.com' } }, 'settings.publicUrl'],
      ['registration neither open nor closed', { settings: { registration: 'invite' } }, 'settings.registration'],
      ['clientRegistration neither closed, token nor open', { settings: { clientRegistration: 'invite' } }, 'settings.clientRegistration'],
      ['requireVerifiedEmail not a boolean', { settings: { requireVerifiedEmail: 'yes' } }, 'settings.requireVerifiedEmail'],
      ['webauthn.rpId with a scheme', { settings: { webauthn: { rpId: 'https://example.com' } } }, 'settings.webauthn.rpId'],
      ['webauthn.rpName empty', { settings: { webauthn: { rpName: ' ' } } }, 'settings.webauthn.rpName'],
      ['webauthn.origins empty', { settings: { webauthn: { origins: [] } } }, 'settings.webauthn.origins'],
      ['webauthn.origins with a path', { settings: { webauthn: { origins: ['https://localhost/app'] } } }, 'settings.webauthn.origins'],
      [
        'webauthn.origins off the rpId domain',
        { settings: { webauthn: { rpId: 'shop.example.com', origins: ['https://evil.example.net'] } } },
        'settings.webauthn.origins',
      ],
      ['an unknown setting', { settings: { sessionTtl: 60 } }, 'settings.sessionTtl'],
      ['an unknown member of lockout', { settings: { lockout: { attempts: 3 } } }, 'settings.lockout.attempts'],
      ['an unknown field', { color: 'blue' }, 'color'],
      ['settings null', { settings: null }, 'settings'],
      ['enabled null', { enabled: null }, 'enabled'],
      ['enabled a string', { enabled: 'false' }, 'enabled'],
      ['an empty name', { name: '  ' }, 'name'],
    ];

    it.each(cases)('refuses %s with 400 VALIDATION_FAILED naming the field, and changes nothing', async (_name, body, field) => {
      const realm = await aRealm('val');
      const before = (await adminApi(t, root.accessToken, realm).get('/realm')).body.realm;
      const res = await patch(realm, body);
      expect(errorOf(res)).toEqual([400, 'VALIDATION_FAILED']);
      expect((res.body.error.details as { field: string }[]).map((d) => d.field)).toContain(field);
      expect((await adminApi(t, root.accessToken, realm).get('/realm')).body.realm).toEqual(before);
    });

    it('reports every bad field at once', async () => {
      const realm = await aRealm('val');
      const res = await patch(realm, { settings: { accessTokenTtlSeconds: 1, passwordMinLength: 1, lockout: { maxFailures: 0 } } });
      expect(res.status).toBe(400);
      expect((res.body.error.details as { field: string }[]).map((d) => d.field).sort()).toEqual([
        'settings.accessTokenTtlSeconds',
        'settings.lockout.maxFailures',
        'settings.passwordMinLength',
      ]);
    });

    it('accepts the bounds of every range', async () => {
      const realm = await aRealm('bounds');
      for (const settings of [
        { accessTokenTtlSeconds: 60, sessionIdleTimeoutSeconds: 300, sessionMaxLifetimeSeconds: 300, passwordMinLength: 8 },
        { accessTokenTtlSeconds: 86400, sessionIdleTimeoutSeconds: 31536000, sessionMaxLifetimeSeconds: 31536000, passwordMinLength: 128 },
        { lockout: { maxFailures: 1, durationSeconds: 0 }, fingerprintMatchThreshold: 0.5 },
        { lockout: { maxFailures: 100, durationSeconds: 86400 }, fingerprintMatchThreshold: 0.95 },
      ]) {
        expect((await patch(realm, { settings })).status).toBe(200);
      }
    });
  });

  describe('authorization', () => {
    it('lets realm-admins change only their own realm, super-admins any; others get 403', async () => {
      const own = await aRealm('own');
      const other = await aRealm('other');
      const admin = await createUser(t, root.accessToken, own, { roles: ['realm-admin'] });
      const member = await createUser(t, root.accessToken, own);
      const body = { settings: { passwordMinLength: 9 } };

      expect((await adminApi(t, admin.accessToken, own).get('/realm')).status).toBe(200);
      expect((await patch(own, body, admin.accessToken)).status).toBe(200);
      expect(errorOf(await adminApi(t, admin.accessToken, other).get('/realm'))).toEqual([403, 'FORBIDDEN']);
      expect(errorOf(await patch(other, body, admin.accessToken))).toEqual([403, 'FORBIDDEN']);
      expect(errorOf(await patch('default', body, admin.accessToken))).toEqual([403, 'FORBIDDEN']);
      expect(errorOf(await adminApi(t, member.accessToken, own).get('/realm'))).toEqual([403, 'FORBIDDEN']);
      expect(errorOf(await patch(own, body, member.accessToken))).toEqual([403, 'FORBIDDEN']);
      for (const realm of [own, other, 'default', 'master']) {
        expect((await adminApi(t, root.accessToken, realm).get('/realm')).status).toBe(200);
      }
      expect((await patch(other, body)).status).toBe(200);
      const anonymous = await t.api().patch('/v1/admin/realm').set('X-Realm-Id', own).send(body);
      expect(errorOf(anonymous)).toEqual([401, 'INVALID_TOKEN']);
      expect(
        errorOf(
          await t
            .api()
            .get('/v1/admin/realm')
            .set(...bearer(root.accessToken)),
        ),
      ).toEqual([400, 'VALIDATION_FAILED']);
      expect(errorOf(await adminApi(t, root.accessToken, 'no-such-realm').get('/realm'))).toEqual([404, 'REALM_NOT_FOUND']);
    });
  });

  describe('master', () => {
    it('cannot be opened to registration nor disabled; registering there is refused', async () => {
      const shown = (await adminApi(t, root.accessToken, 'master').get('/realm')).body.realm;
      expect(shown.settings.registration).toBe('closed');
      const open = await patch('master', { settings: { registration: 'open' } });
      expect(errorOf(open)).toEqual([400, 'VALIDATION_FAILED']);
      expect(open.body.error.details).toEqual([{ field: 'settings.registration', message: 'is always closed in the master realm' }]);
      expect(errorOf(await patch('master', { enabled: false }))).toEqual([400, 'VALIDATION_FAILED']);
      // Resetting the field leaves it closed too.
      expect(((await patchOk('master', { settings: { registration: null } })).settings as Body).registration).toBe('closed');
      const res = await auth('master')
        .post('/register')
        .send({ email: uniqueEmail('m'), password: PASSWORD, name: 'Mallory' });
      expect(errorOf(res)).toEqual([403, 'REGISTRATION_DISABLED']);
    });
  });

  describe('each setting where it belongs', () => {
    it('links in the realm’s emails use its public URL; other realms keep PUBLIC_URL', async () => {
      const realm = await aRealm('mail', { publicUrl: 'https://app.acme.test/portal/' });
      const user = await registered(realm);
      const verification = await outboxText(user.email);
      expect(verification).toMatch(new RegExp(`^https://app\\.acme\\.test/portal/verify-email\\?token=[\\w-]+&realm=${realm}$`, 'm'));
      const forgot = await auth(realm).post('/password/forgot').send({ email: user.email });
      expect(forgot.status).toBe(202);
      expect(await outboxText(user.email)).toMatch(
        new RegExp(`^https://app\\.acme\\.test/portal/reset-password\\?token=[\\w-]+&realm=${realm}$`, 'm'),
      );

      const elsewhere = await registered('default');
      expect(await outboxText(elsewhere.email)).toContain(`${t.config.publicUrl}/verify-email?token=`);
      await patchOk(realm, { settings: { publicUrl: null } });
      const later = await registered(realm);
      expect(await outboxText(later.email)).toContain(`${t.config.publicUrl}/verify-email?token=`);
    });

    it('closed registration answers 403 REGISTRATION_DISABLED; admin-created users still sign in', async () => {
      const realm = await aRealm('closed', { registration: 'closed' });
      const res = await auth(realm)
        .post('/register')
        .send({ email: uniqueEmail('c'), password: PASSWORD, name: 'Closed Out' });
      expect(errorOf(res)).toEqual([403, 'REGISTRATION_DISABLED']);
      const created = await createUser(t, root.accessToken, realm);
      expect(created.accessToken).toEqual(expect.any(String));
      expect((await registered('default')).id).toEqual(expect.any(String));
      await patchOk(realm, { settings: { registration: 'open' } });
      expect((await registered(realm)).id).toEqual(expect.any(String));
    });

    it('requireVerifiedEmail: a right password with an unverified address gets 403 and no session; wrong ones 401 as ever', async () => {
      const realm = await aRealm('verify', { requireVerifiedEmail: true });
      const user = await registered(realm);
      const refused = await auth(realm).post('/login').send({ email: user.email, password: user.password });
      expect(errorOf(refused)).toEqual([403, 'EMAIL_NOT_VERIFIED']);
      expect(refused.body.tokens).toBeUndefined();
      expect(refused.headers['set-cookie']).toBeUndefined();
      const sessions: unknown[] = await t.dataSource.query(`SELECT 1 FROM sessions WHERE user_id = $1`, [user.id]);
      expect(sessions).toHaveLength(0);
      // No enumeration: a wrong password, or an unknown address, answers as in any realm.
      expect(errorOf(await auth(realm).post('/login').send({ email: user.email, password: 'not the password at all' }))).toEqual([
        401,
        'INVALID_CREDENTIALS',
      ]);
      expect(
        errorOf(
          await auth(realm)
            .post('/login')
            .send({ email: uniqueEmail('nobody'), password: user.password }),
        ),
      ).toEqual([401, 'INVALID_CREDENTIALS']);

      const token = /verify-email\?token=([\w-]+)/.exec(await outboxText(user.email))![1];
      expect((await auth(realm).post('/verify-email').send({ token })).status).toBe(200);
      const allowed = await auth(realm).post('/login').send({ email: user.email, password: user.password });
      expect(allowed.status).toBe(200);
      expect(allowed.body.tokens.accessToken).toEqual(expect.any(String));
    });

    it('a shorter access-token lifetime shows in expiresIn and exp, for logins and refreshes; other realms keep 900', async () => {
      const realm = await aRealm('ttl', { accessTokenTtlSeconds: 120 });
      const user = await registered(realm);
      const res = await auth(realm).post('/login').send({ email: user.email, password: user.password });
      expect(res.body.tokens.expiresIn).toBe(120);
      const claims = decodeJwt(res.body.tokens.accessToken);
      expect((claims.exp as number) - (claims.iat as number)).toBe(120);
      const refreshed = await auth(realm).post('/refresh').send({ refreshToken: res.body.tokens.refreshToken });
      expect(refreshed.body.tokens.expiresIn).toBe(120);
      const elsewhere = await signedIn('default');
      const other = decodeJwt(elsewhere.accessToken);
      expect((other.exp as number) - (other.iat as number)).toBe(900);

      expect((await auth(realm).get('/me', refreshed.body.tokens.accessToken)).status).toBe(200);
      t.clock.advance(121);
      expect(errorOf(await auth(realm).get('/me', refreshed.body.tokens.accessToken))).toEqual([401, 'TOKEN_EXPIRED']);
      expect((await auth('default').get('/me', elsewhere.accessToken)).status).toBe(200);
    });

    it('session idle and maximum lifetimes apply to sessions already open', async () => {
      const realm = await aRealm('life');
      const idle = await signedIn(realm);
      const capped = await signedIn(realm);
      await patchOk(realm, { settings: { sessionIdleTimeoutSeconds: 300, sessionMaxLifetimeSeconds: 600 } });

      t.clock.advance(250);
      const kept = await auth(realm).post('/refresh').send({ refreshToken: capped.refreshToken });
      expect(kept.status).toBe(200);
      t.clock.advance(60); // idle 310 s for the first session, 60 s for the second
      expect(errorOf(await auth(realm).post('/refresh').send({ refreshToken: idle.refreshToken }))).toEqual([401, 'INVALID_TOKEN']);
      const again = await auth(realm).post('/refresh').send({ refreshToken: kept.body.tokens.refreshToken });
      expect(again.status).toBe(200);
      t.clock.advance(250); // 560 s old
      const last = await auth(realm).post('/refresh').send({ refreshToken: again.body.tokens.refreshToken });
      expect(last.status).toBe(200);
      t.clock.advance(50); // 610 s old: past the maximum lifetime although used 50 s ago
      expect(errorOf(await auth(realm).post('/refresh').send({ refreshToken: last.body.tokens.refreshToken }))).toEqual([
        401,
        'INVALID_TOKEN',
      ]);
      expect(errorOf(await auth(realm).get('/me', last.body.tokens.accessToken))).toEqual([401, 'INVALID_TOKEN']);
    });

    it('lockout follows the realm: 2 wrong passwords lock for 60 s here, while the default realm allows more', async () => {
      const realm = await aRealm('lock', { lockout: { maxFailures: 2, durationSeconds: 60 } });
      const user = await registered(realm);
      const wrong = () => auth(realm).post('/login').send({ email: user.email, password: 'wrong password here' });
      expect((await wrong()).status).toBe(401);
      expect((await wrong()).status).toBe(401);
      const locked = await auth(realm).post('/login').send({ email: user.email, password: user.password });
      expect(errorOf(locked)).toEqual([423, 'ACCOUNT_LOCKED']);
      expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(60);

      const elsewhere = await registered('default');
      for (let i = 0; i < 2; i++) {
        await auth('default').post('/login').send({ email: elsewhere.email, password: 'wrong password here' });
      }
      expect((await auth('default').post('/login').send({ email: elsewhere.email, password: elsewhere.password })).status).toBe(200);

      t.clock.advance(61);
      expect((await auth(realm).post('/login').send({ email: user.email, password: user.password })).status).toBe(200);
    });

    it('the minimum password length applies to registration, reset, change and admin-set passwords', async () => {
      const realm = await aRealm('pwlen', { passwordMinLength: 16 });
      const short = 'violet tulip 42'; // 15 characters
      const long = 'violet tulip 42!';
      const refused = await auth(realm)
        .post('/register')
        .send({ email: uniqueEmail('p'), password: short, name: 'Short' });
      expect(errorOf(refused)).toEqual([400, 'VALIDATION_FAILED']);
      expect(refused.body.error.details).toEqual([{ field: 'password', message: 'must be at least 16 characters' }]);
      expect((await registered('default', uniqueEmail('p'), short)).id).toEqual(expect.any(String));

      const user = await registered(realm, uniqueEmail('p'), long);
      const login = await auth(realm).post('/login').send({ email: user.email, password: long });
      const change = await t
        .api()
        .post('/api/v1/auth/password/change')
        .set('X-Realm-Id', realm)
        .set(...bearer(login.body.tokens.accessToken))
        .send({ currentPassword: long, newPassword: 'amber meadow 17' });
      expect(errorOf(change)).toEqual([400, 'VALIDATION_FAILED']);

      expect((await auth(realm).post('/password/forgot').send({ email: user.email })).status).toBe(202);
      const token = /reset-password\?token=([\w-]+)/.exec(await outboxText(user.email))![1];
      expect(errorOf(await auth(realm).post('/password/reset').send({ token, password: 'amber meadow 17' }))).toEqual([
        400,
        'VALIDATION_FAILED',
      ]);
      expect((await auth(realm).post('/password/reset').send({ token, password: 'amber meadow 17 and more' })).status).toBe(200);

      const admin = adminApi(t, root.accessToken, realm);
      expect(errorOf(await admin.post(`/users/${user.id}/reset-password`).send({ password: 'amber meadow 17' }))).toEqual([
        400,
        'VALIDATION_FAILED',
      ]);
      expect(errorOf(await admin.post('/users').send({ email: uniqueEmail('p'), name: 'Admin Set', password: short }))).toEqual([
        400,
        'VALIDATION_FAILED',
      ]);
      expect((await admin.post(`/users/${user.id}/reset-password`).send({ password: 'copper kettle whistles' })).status).toBe(200);
    });

    it('a disabled realm refuses sign-ins (403 REALM_DISABLED) and its access tokens (401 INVALID_TOKEN), and comes back', async () => {
      const realm = await aRealm('off');
      const user = await signedIn(realm);
      const admin = await createUser(t, root.accessToken, realm, { roles: ['realm-admin'] });
      const body = await patchOk(realm, { enabled: false });
      expect(body.enabled).toBe(false);

      expect(errorOf(await auth(realm).post('/login').send({ email: user.email, password: user.password }))).toEqual([
        403,
        'REALM_DISABLED',
      ]);
      expect(
        errorOf(
          await auth(realm)
            .post('/register')
            .send({ email: uniqueEmail('d'), password: PASSWORD, name: 'D' }),
        ),
      ).toEqual([403, 'REALM_DISABLED']);
      expect(errorOf(await auth(realm).post('/refresh').send({ refreshToken: user.refreshToken }))).toEqual([403, 'REALM_DISABLED']);
      expect(errorOf(await auth(realm).get('/me', user.accessToken))).toEqual([403, 'REALM_DISABLED']);
      // Its tokens are refused wherever they are presented, the admin API included.
      expect(errorOf(await adminApi(t, admin.accessToken, realm).get('/users'))).toEqual([401, 'INVALID_TOKEN']);
      // Administration goes on for the super-admin.
      expect((await adminApi(t, root.accessToken, realm).get('/users')).status).toBe(200);

      await patchOk(realm, { enabled: true });
      expect((await auth(realm).get('/me', user.accessToken)).status).toBe(200);
      expect((await adminApi(t, admin.accessToken, realm).get('/users')).status).toBe(200);
      expect((await auth(realm).post('/refresh').send({ refreshToken: user.refreshToken })).status).toBe(200);
      expect((await auth(realm).post('/login').send({ email: user.email, password: user.password })).status).toBe(200);
    });

    it('WebAuthn registration and login use the realm’s relying party and origin; another realm keeps the default', async () => {
      const shop = await aRealm('shop', {
        webauthn: { rpId: 'shop.example.test', rpName: 'Example Shop', origins: ['https://shop.example.test'] },
      });
      const check = async (realm: string, key: SoftAuthenticator, rp: { id: string; name: string }, foreign: SoftAuthenticator) => {
        const user = await signedIn(realm);
        const headers = (req: Req) => req.set('X-Realm-Id', realm).set(...bearer(user.accessToken));
        const options = await headers(t.api().post('/api/v1/auth/mfa/webauthn/register/options')).send({});
        expect(options.status).toBe(200);
        expect(options.body.rp).toEqual(rp);
        // A key answering for another relying party or origin is refused.
        const wrong = await headers(t.api().post('/api/v1/auth/mfa/webauthn/register/verify')).send({
          response: foreign.attestation(options.body),
        });
        expect(errorOf(wrong)).toEqual([400, 'VALIDATION_FAILED']);
        const retry = await headers(t.api().post('/api/v1/auth/mfa/webauthn/register/options')).send({});
        const ok = await headers(t.api().post('/api/v1/auth/mfa/webauthn/register/verify')).send({
          response: key.attestation(retry.body),
        });
        expect(ok.status).toBe(200);

        const step = await auth(realm).post('/login').send({ email: user.email, password: user.password });
        expect(step.body.requiresMfa).toBe(true);
        const request = await auth(realm).post('/mfa/webauthn/options').send({ mfaToken: step.body.mfaToken });
        expect(request.body.rpId).toBe(rp.id);
        const verified = await auth(realm)
          .post('/mfa/verify')
          .send({ mfaToken: step.body.mfaToken, type: 'webauthn', code: JSON.stringify(key.assertion(request.body)) });
        expect(verified.status).toBe(200);
        expect(decodeJwt(verified.body.tokens.accessToken).amr).toEqual(['pwd', 'hwk']);
      };
      const shopKey = new SoftAuthenticator('https://shop.example.test', 'shop.example.test');
      const defaultKey = new SoftAuthenticator(); // http://localhost:3000, rpId localhost
      await check(shop, shopKey, { id: 'shop.example.test', name: 'Example Shop' }, new SoftAuthenticator());
      await check('default', defaultKey, { id: t.config.webauthnRpId, name: t.config.webauthnRpName }, shopKey.clone());
    });
  });

  describe('the command line', () => {
    async function cli(argv: string[]) {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(argv, t.app, { out: (l) => out.push(l), err: (l) => err.push(l) });
      return { code, out: out.join('\n'), err: err.join('\n') };
    }

    it('shows and sets a realm’s settings: realm-settings <realm> [key=value …]', async () => {
      const realm = await aRealm('cli');
      const shown = await cli(['realm-settings', realm]);
      expect(shown.code).toBe(0);
      expect(JSON.parse(shown.out).settings.registration).toBe('open');
      const set = await cli([
        'realm-settings',
        realm,
        'registration=closed',
        'lockout.maxFailures=3',
        'webauthn.rpId=app.example.test',
        'webauthn.origins=https://app.example.test,https://admin.app.example.test',
        'fingerprintMatchThreshold=0.8',
        'name=CLI Realm',
      ]);
      expect(set.code).toBe(0);
      expect(JSON.parse(set.out)).toMatchObject({
        name: 'CLI Realm',
        settings: {
          registration: 'closed',
          lockout: { maxFailures: 3 },
          webauthn: { rpId: 'app.example.test', origins: ['https://app.example.test', 'https://admin.app.example.test'] },
          fingerprintMatchThreshold: 0.8,
        },
      });
      const viaRest = (await adminApi(t, root.accessToken, realm).get('/realm')).body.realm;
      expect(viaRest.settings.lockout.maxFailures).toBe(3);
      expect(await storedEvents(t, realm, { type: 'realm.updated' })).toEqual([
        expect.objectContaining({ actor_id: null, details: expect.objectContaining({ by: 'cli' }) }),
      ]);
      const reset = await cli(['realm-settings', realm, 'registration=default', 'webauthn=default']);
      expect(JSON.parse(reset.out).settings).toMatchObject({ registration: 'open', webauthn: { rpId: t.config.webauthnRpId } });
      const bad = await cli(['realm-settings', realm, 'passwordMinLength=4']);
      expect(bad.code).toBe(1);
      expect(bad.err).toContain('VALIDATION_FAILED');
      expect((await cli(['realm-settings', realm, '__proto__.polluted=1'])).code).toBe(1);
      expect(({} as Body).polluted).toBeUndefined();
      expect((await cli(['realm-settings'])).code).toBe(2);
    });
  });

  describe('the hot paths', () => {
    it('/me and refresh read no realm from the database while the realm is cached', async () => {
      const realm = await aRealm('hot');
      const user = await signedIn(realm);
      const repository = t.app.get(RealmRepository);
      const realmReads = jest.spyOn(repository, 'findById');
      const statements = jest.spyOn(Client.prototype, 'query');
      try {
        // Warm: the realm is read at most once per cache period.
        expect((await auth(realm).get('/me', user.accessToken)).status).toBe(200);
        realmReads.mockClear();
        statements.mockClear();
        const me = await auth(realm).get('/me', user.accessToken);
        expect(me.status).toBe(200);
        const meStatements = statements.mock.calls.length;
        statements.mockClear();
        const refreshed = await auth(realm).post('/refresh').send({ refreshToken: user.refreshToken });
        expect(refreshed.status).toBe(200);
        const refreshStatements = statements.mock.calls.length;
        expect(realmReads).not.toHaveBeenCalled();
        if (t.config.databaseUrl) {
          // What PostgreSQL sees: the session check for /me (a user with no linked identity); the token lookup and the rotation for refresh.
          console.log(`statements per request with realm settings: /me ${meStatements}, refresh ${refreshStatements}`);
          expect(meStatements).toBe(1);
          expect(refreshStatements).toBe(2);
        }
      } finally {
        realmReads.mockRestore();
        statements.mockRestore();
      }
    });
  });

  const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;
  onPostgres('two instances on one database', () => {
    let second: TestApp;
    beforeAll(async () => {
      second = await createTestApp({ database: t.database, env: ADMIN_ENV });
    });
    afterAll(async () => second?.close());

    async function within5s(check: () => Promise<boolean>): Promise<number> {
      const started = Date.now();
      while (Date.now() - started < 5_000) {
        if (await check()) return Date.now() - started;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error('not in force on the second instance within 5 s');
    }

    it('a PATCH on one instance is in force on the other within 5 seconds', async () => {
      const realm = await aRealm('multi');
      const user = await signedIn(realm);
      const me = () =>
        second
          .api()
          .get('/api/v1/auth/me')
          .set('X-Realm-Id', realm)
          .set(...bearer(user.accessToken));
      const register = () =>
        second
          .api()
          .post('/api/v1/auth/register')
          .set('X-Realm-Id', realm)
          .send({ email: uniqueEmail('m'), password: PASSWORD, name: 'Multi' });
      // The second instance has the realm cached before the change.
      expect((await me()).status).toBe(200);
      expect((await register()).status).toBe(201);

      await patchOk(realm, { settings: { registration: 'closed' } });
      const closedAfter = await within5s(async () => (await register()).status === 403);
      await patchOk(realm, { enabled: false });
      const disabledAfter = await within5s(async () => (await me()).status === 403);
      await patchOk(realm, { enabled: true });
      const enabledAfter = await within5s(async () => (await me()).status === 200);
      console.log(
        `in force on the second instance after: closed ${closedAfter} ms, disabled ${disabledAfter} ms, enabled ${enabledAfter} ms`,
      );
    });
  });
});
