import { createTestApp, TestApp } from '../support/test-app';
import { login, PASSWORD, register, signedInUser, uniqueEmail } from '../support/flows';

const registerWith = (t: TestApp, password: string, email = uniqueEmail()) =>
  t.api().post('/api/v1/auth/register').send({ email, password, name: 'Pat Tester' });

describe('PW / AUTH — passwords, registration and login (SECURITY.md)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('PW-01 enforces 8–128 code points before hashing; 2 MB is refused fast (contract: 8, not 12)', async () => {
    expect((await registerWith(t, 'abcdefg')).status).toBe(400);
    for (const ok of ['Tr0ub4dor&3x!', '🔑'.repeat(12), 'q'.repeat(63) + 'w', 'q'.repeat(127) + 'w']) {
      expect((await registerWith(t, ok)).status).toBe(201);
    }
    const long = await registerWith(t, 'q'.repeat(128) + 'w');
    expect(long.status).toBe(400);
    expect(long.body.error.details[0]).toEqual({ field: 'password', message: 'must be at most 128 characters' });
    const started = Date.now();
    const huge = await registerWith(t, 'z'.repeat(2 * 1024 * 1024));
    expect(huge.status).toBe(413);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('PW-02 has no composition rules and normalises with NFKC (café precomposed vs decomposed)', async () => {
    expect((await registerWith(t, 'correct horse battery staple')).status).toBe(201);
    const email = uniqueEmail();
    expect((await registerWith(t, 'caf\u00e9 terrasse soleil', email)).status).toBe(201);
    expect((await login(t, email, 'cafe\u0301 terrasse soleil')).status).toBe(200);
  });

  it('PW-03 verifies exactly what was sent: no truncation at 72 bytes (ASCII and emoji)', async () => {
    const ascii = 'a'.repeat(72);
    const e1 = uniqueEmail();
    await register(t, e1, `${ascii}AAAA`);
    expect((await login(t, e1, `${ascii}BBBB`)).status).toBe(401);
    const emoji = '😀'.repeat(18);
    const e2 = uniqueEmail();
    await register(t, e2, emoji + '😀'.repeat(6));
    expect((await login(t, e2, emoji + '😃'.repeat(6))).status).toBe(401);
    expect((await login(t, e2, emoji + '😀'.repeat(6))).status).toBe(200);
  });

  it('PW-04 refuses common and context passwords with a reason', async () => {
    for (const [password, email] of [
      ['password1234', uniqueEmail()],
      ['qwertyuiop123', uniqueEmail()],
      ['123456789012', uniqueEmail()],
      ['alice.smith2024', 'alice.smith@example.com'],
    ]) {
      const res = await registerWith(t, password, email);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details[0].field).toBe('password');
      expect(res.body.error.details[0].message).toMatch(/common|based on/);
    }
  });

  it('PW-06 stores bcrypt hashes with cost ≥ 10 in production settings and never returns them', async () => {
    const strong = await createTestApp({ env: { BCRYPT_COST: '10' } });
    try {
      const user = await register(strong);
      const [row] = await strong.dataSource.query(`SELECT password_hash FROM users WHERE id = $1`, [user.id]);
      expect(row.password_hash).toMatch(/^\$2[aby]\$1[0-9]\$/);
      const res = await login(strong, user.email);
      expect(JSON.stringify(res.body)).not.toContain(row.password_hash);
      const me = await strong.api().get('/api/v1/auth/me').set('Authorization', `Bearer ${res.body.tokens.accessToken}`);
      expect(JSON.stringify(me.body)).not.toContain('$2');
    } finally {
      await strong.close();
    }
  });

  it('AUTH-01 answers unknown email and wrong password alike, in about the same time (real bcrypt cost)', async () => {
    const timed = await createTestApp({ env: { BCRYPT_COST: '10' } });
    try {
      const user = await register(timed);
      const measure = async (email: string) => {
        const started = process.hrtime.bigint();
        const res = await login(timed, email, 'definitely wrong password');
        return { ms: Number(process.hrtime.bigint() - started) / 1e6, body: res.body, status: res.status };
      };
      await measure(user.email);
      const known: number[] = [];
      const unknown: number[] = [];
      for (let i = 0; i < 20; i++) {
        const a = await measure(user.email);
        const b = await measure(uniqueEmail('ghost'));
        expect(a.status).toBe(401);
        expect(b.body).toEqual(a.body);
        known.push(a.ms);
        unknown.push(b.ms);
      }
      const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)];
      expect(Math.abs(median(known) - median(unknown))).toBeLessThan(30);
    } finally {
      await timed.close();
    }
  });

  it('AUTH-03 creates a new session and new tokens on every authentication', async () => {
    const user = await signedInUser(t);
    const again = await login(t, user.email, PASSWORD);
    const sid = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid;
    const jti = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).jti;
    expect(sid(again.body.tokens.accessToken)).not.toBe(sid(user.accessToken));
    expect(jti(again.body.tokens.accessToken)).not.toBe(jti(user.accessToken));
    expect(again.body.tokens.refreshToken).not.toBe(user.refreshToken);
  });
});
