import { runCli } from '../../src/cli';
import { ADMIN_ENV, adminApi, storedEvents, superAdmin } from '../support/admin-flows';
import { bearer, login, PASSWORD, register } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';

// Booting the app on a fresh database takes seconds on a busy machine.
jest.setTimeout(120_000);

/** Runs a CLI command in-process against the test app; returns exit code and what it printed. */
async function cli(t: TestApp, argv: string[], adminPassword?: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, t.app, { out: (l) => out.push(l), err: (l) => err.push(l), adminPassword });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function kidOf(token: string): string {
  return JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).kid;
}

describe('CLI: npm run cli -- <command>', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('create-realm', () => {
    it('creates a realm that accepts registrations at once, recorded as realm.created by the command line', async () => {
      const res = await cli(t, ['create-realm', 'acme', 'Acme Inc']);
      expect(res).toEqual({ code: 0, out: 'Created realm "acme" (Acme Inc)', err: '' });
      await register(t, 'first@acme.example', PASSWORD, 'acme');
      expect(await storedEvents(t, 'acme', { type: 'realm.created' })).toEqual([
        expect.objectContaining({ actor_id: null, details: { name: 'Acme Inc', by: 'cli' } }),
      ]);
    });

    it.each([
      ['a taken id', ['create-realm', 'default', 'Again'], 1, /VALIDATION_FAILED/],
      ['a malformed id', ['create-realm', 'Not_A_Slug', 'X'], 1, /VALIDATION_FAILED/],
      ['a missing name', ['create-realm', 'solo'], 2, /create-realm takes <id> <name>/],
    ])('refuses %s', async (_what, argv, code, message) => {
      const res = await cli(t, argv);
      expect(res.code).toBe(code);
      expect(res.err).toMatch(message);
      expect(res.out).toBe('');
    });
  });

  describe('create-admin', () => {
    it('creates a realm-admin with ADMIN_PASSWORD who administers that realm and no other', async () => {
      const res = await cli(t, ['create-admin', 'acme', 'Boss@Acme.example'], 'the acme admin passphrase');
      expect(res.code).toBe(0);
      expect(res.out).toMatch(/^Created realm-admin boss@acme\.example in realm "acme" \(id [0-9a-f-]{36}\)$/);
      expect(res.out).not.toContain('the acme admin passphrase');
      const signIn = await login(t, 'boss@acme.example', 'the acme admin passphrase', {}, 'acme');
      expect(signIn.status).toBe(200);
      const token = signIn.body.tokens.accessToken;
      expect((await adminApi(t, token, 'acme').get('/users')).status).toBe(200);
      expect((await adminApi(t, token, 'default').get('/users')).status).toBe(403);
      const me = await t
        .api()
        .get('/api/v1/auth/me')
        .set('X-Realm-Id', 'acme')
        .set(...bearer(token));
      expect(me.body.user).toMatchObject({ emailVerified: true, roles: ['realm-admin'] });
    });

    it('generates a password when ADMIN_PASSWORD is unset and prints it once; only its hash is stored', async () => {
      const res = await cli(t, ['create-admin', 'default', 'generated-admin@example.com']);
      expect(res.code).toBe(0);
      const match = /Generated password \(shown once, store it now\): ([A-Za-z0-9_-]{43})$/.exec(res.out);
      expect(match).not.toBeNull();
      const password = match![1];
      expect((await login(t, 'generated-admin@example.com', password)).status).toBe(200);
      const rows: { password_hash: string }[] = await t.dataSource.query(
        `SELECT password_hash FROM users WHERE email = 'generated-admin@example.com'`,
      );
      expect(rows[0].password_hash).toMatch(/^\$2[aby]\$/);
      expect(rows[0].password_hash).not.toContain(password);
    });

    it('creates a super-admin of master with --super, who administers every realm and the realms', async () => {
      const res = await cli(t, ['create-admin', 'master', 'second-root@example.com', '--super'], 'a second root passphrase');
      expect(res.code).toBe(0);
      expect(res.out).toMatch(/^Created super-admin second-root@example\.com in realm "master"/);
      const token = (await login(t, 'second-root@example.com', 'a second root passphrase', {}, 'master')).body.tokens.accessToken;
      expect((await adminApi(t, token, 'master').get('/realms')).status).toBe(200);
      expect((await adminApi(t, token, 'acme').get('/users')).status).toBe(200);
    });

    it('refuses an address that already has an account: its creator chose the password', async () => {
      const user = await register(t);
      const res = await cli(t, ['create-admin', 'default', user.email], 'some other passphrase');
      expect(res.code).toBe(1);
      expect(res.err).toMatch(/^EMAIL_ALREADY_REGISTERED: .*--existing/);
      const token = (await login(t, user.email, PASSWORD)).body.tokens.accessToken;
      expect((await adminApi(t, token, 'default').get('/users')).status).toBe(403);
      expect(await storedEvents(t, 'default', { userId: user.id, type: 'user.roles_changed' })).toEqual([]);
    });

    it('with --existing grants the role to that account and leaves its password alone', async () => {
      const user = await register(t);
      const res = await cli(t, ['create-admin', 'default', user.email, '--existing'], 'some other passphrase');
      expect(res).toEqual({
        code: 0,
        out: `${user.email} already exists in realm "default": granted realm-admin; password unchanged`,
        err: '',
      });
      expect(errorStatus(await login(t, user.email, 'some other passphrase'))).toBe(401);
      const token = (await login(t, user.email, PASSWORD)).body.tokens.accessToken;
      expect((await adminApi(t, token, 'default').get('/users')).status).toBe(200);
      expect(await storedEvents(t, 'default', { userId: user.id, type: 'user.roles_changed' })).toEqual([
        expect.objectContaining({ actor_id: null, details: { before: [], after: ['realm-admin'], by: 'cli' } }),
      ]);
    });

    it.each([
      [
        '--super outside master',
        ['create-admin', 'default', 'x1@example.com', '--super'],
        'a fine passphrase here',
        1,
        /VALIDATION_FAILED.*master/,
      ],
      ['an unknown realm', ['create-admin', 'nowhere', 'x2@example.com'], 'a fine passphrase here', 1, /REALM_NOT_FOUND/],
      ['a malformed email', ['create-admin', 'default', 'not-an-email'], 'a fine passphrase here', 1, /VALIDATION_FAILED/],
      ['a common ADMIN_PASSWORD', ['create-admin', 'default', 'x3@example.com'], 'password1234', 1, /VALIDATION_FAILED/],
      ['an unknown flag', ['create-admin', 'default', 'x4@example.com', '--root'], 'a fine passphrase here', 2, /create-admin takes/],
      ['a missing email', ['create-admin', 'default'], 'a fine passphrase here', 2, /create-admin takes/],
    ])('refuses %s and creates nobody', async (_what, argv, password, code, message) => {
      const res = await cli(t, argv, password);
      expect(res.code).toBe(code);
      expect(res.err).toMatch(message);
      const rows: unknown[] = await t.dataSource.query(`SELECT 1 FROM users WHERE email = $1`, [argv[2] ?? '']);
      expect(rows).toHaveLength(0);
    });
  });

  describe('roles', () => {
    it('defines, lists and deletes roles of a realm, recorded as done by the command line', async () => {
      expect(await cli(t, ['create-role', 'acme', 'teacher', 'Grades the classes they teach'])).toEqual({
        code: 0,
        out: 'Created role "teacher" in realm "acme"',
        err: '',
      });
      expect((await cli(t, ['roles', 'acme'])).out).toBe(
        'realm-admin (built in) — Administers this realm\nteacher — Grades the classes they teach',
      );
      const root = await superAdmin(t);
      const holder = await adminApi(t, root.accessToken, 'acme')
        .post('/users')
        .send({ email: 'teacher@acme.example', name: 'T', password: PASSWORD, roles: ['teacher'] });
      expect(holder.status).toBe(201);
      expect(await cli(t, ['delete-role', 'acme', 'teacher'])).toEqual({
        code: 0,
        out: 'Deleted role "teacher" from realm "acme"; 1 user held it',
        err: '',
      });
      expect((await adminApi(t, root.accessToken, 'acme').get(`/users/${holder.body.user.id}`)).body.user.roles).toEqual([]);
      expect((await storedEvents(t, 'acme', { type: 'role.created' }))[0]).toMatchObject({ actor_id: null, details: { by: 'cli' } });
      expect((await storedEvents(t, 'acme', { type: 'role.deleted' }))[0]).toMatchObject({
        actor_id: null,
        details: { users: 1, by: 'cli' },
      });
    });

    it.each([
      ['an unknown realm', ['roles', 'nowhere'], 1, /REALM_NOT_FOUND/],
      ['a built-in name', ['create-role', 'acme', 'realm-admin'], 1, /ROLE_EXISTS/],
      ['a malformed name', ['create-role', 'acme', 'Teacher'], 1, /VALIDATION_FAILED/],
      ['an unknown role', ['delete-role', 'acme', 'ghost'], 1, /ROLE_NOT_FOUND/],
      ['a built-in role', ['delete-role', 'acme', 'realm-admin'], 1, /INVALID_USER_STATE/],
      ['a missing name', ['create-role', 'acme'], 2, /create-role takes/],
    ])('refuses %s', async (_what, argv, code, message) => {
      const res = await cli(t, argv);
      expect(res.code).toBe(code);
      expect(res.err).toMatch(message);
    });
  });

  describe('rotate-keys', () => {
    it('makes a new key current; the JWKS keeps the previous one, so tokens it signed still work', async () => {
      // Root signs in well after the first key was made, so its token outlives the wait below.
      t.clock.advance(30);
      const root = await superAdmin(t);
      const before = (await t.api().get('/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
      const oldKid = kidOf(root.accessToken);
      expect(before[0]).toBe(oldKid);

      // The first key was made at start: rotating now would strand tokens, so it is refused …
      const early = await cli(t, ['rotate-keys']);
      expect(early.code).toBe(1);
      expect(early.err).toMatch(/Retry in \d+ s, or pass --force/);
      expect((await t.api().get('/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid)).toEqual(before);
      // … until the longest access-token lifetime has passed since the current key was made
      // (root's token, signed later, is then still valid).
      const wait = Number(/Retry in (\d+) s/.exec(early.err)![1]);
      expect(wait).toBeGreaterThan(t.config.accessTokenTtlSeconds - 60);
      expect(wait).toBeLessThanOrEqual(t.config.accessTokenTtlSeconds);
      t.clock.advance(wait);
      const res = await cli(t, ['rotate-keys']);
      expect(res.code).toBe(0);
      const newKid = /^New signing key (\S+) is current/.exec(res.out)![1];
      expect(newKid).not.toBe(oldKid);

      const after = (await t.api().get('/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
      expect(after).toEqual([newKid, oldKid]);
      expect((await adminApi(t, root.accessToken, 'master').get('/realms')).status).toBe(200);
      const fresh = await superAdmin(t);
      expect(kidOf(fresh.accessToken)).toBe(newKid);
      expect((await adminApi(t, fresh.accessToken, 'master').get('/realms')).status).toBe(200);
    });

    it('rotates at once with --force, and takes no other argument', async () => {
      const before = (await t.api().get('/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
      expect((await cli(t, ['rotate-keys'])).code).toBe(1);
      const forced = await cli(t, ['rotate-keys', '--force']);
      expect(forced.code).toBe(0);
      const after = (await t.api().get('/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
      expect(after[1]).toBe(before[0]);
      expect((await cli(t, ['rotate-keys', 'now'])).code).toBe(2);
      expect((await cli(t, ['rotate-keys', '--now'])).code).toBe(2);
    });
  });

  it('prints the usage for help (0) and for an unknown or missing command (2)', async () => {
    const help = await cli(t, ['help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/create-realm <id> <name>[\s\S]*create-admin <realm> <email> \[--super\][\s\S]*rotate-keys/);
    const unknown = await cli(t, ['drop-database']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/Unknown command "drop-database"/);
    expect((await cli(t, [])).code).toBe(2);
  });
});

function errorStatus(res: { status: number }) {
  return res.status;
}
