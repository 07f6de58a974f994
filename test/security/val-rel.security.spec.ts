import { createServer, Server, Socket, connect } from 'node:net';
import { createTestApp, TestApp } from '../support/test-app';
import { bearer, register, signedInUser, uniqueEmail } from '../support/flows';

const INJECTIONS = ["' OR '1'='1", "'; DROP TABLE users; --", '../../etc/passwd', '\u0000', 'x'.repeat(5000), '{"$gt":""}'];

describe('VAL / REL — input hygiene and reliability (SECURITY.md)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('VAL-01 validates DTOs: extra property 400, text/plain 415, 2 MB 413 in under a second, nesting deeper than 32 → 400', async () => {
    const extra = await t.api().post('/api/v1/auth/login').send({ email: 'a@example.com', password: 'x', admin: true });
    expect([extra.status, extra.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    const plain = await t.api().post('/api/v1/auth/login').set('Content-Type', 'text/plain').send('hello');
    expect([plain.status, plain.body.error.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    const started = Date.now();
    const big = await t
      .api()
      .post('/api/v1/auth/login')
      .send({ email: 'a@example.com', password: 'p'.repeat(2 * 1024 * 1024) });
    expect([big.status, big.body.error.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    expect(Date.now() - started).toBeLessThan(1000);
    // Deep nesting under the size limit (60 KB of brackets) used to overflow the stack of the
    // recursive code after JSON.parse: no answer at all, and an uncaught exception.
    for (const deep of [
      '['.repeat(30_000) + ']'.repeat(30_000),
      '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000),
      `{"email":${'['.repeat(33)}${']'.repeat(33)}}`,
    ]) {
      const res = await t.api().post('/api/v1/auth/login').set('Content-Type', 'application/json').send(deep);
      expect(res.body).toEqual({
        error: {
          code: 'VALIDATION_FAILED',
          message: 'body must not nest objects and arrays more than 32 deep',
          status: 400,
          details: [{ field: 'body', message: 'must not nest objects and arrays more than 32 deep' }],
        },
      });
    }
    // Brackets inside strings do not count, and 32 levels are fine.
    const nested = JSON.stringify({ email: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{{{{{{{{{{{{', password: 'x' });
    expect((await t.api().post('/api/v1/auth/login').set('Content-Type', 'application/json').send(nested)).status).toBe(401);
    const allowed = `{"email":"a@example.com","password":"x","x":${'['.repeat(31)}${']'.repeat(31)}}`;
    expect((await t.api().post('/api/v1/auth/login').set('Content-Type', 'application/json').send(allowed)).body.error.message).toBe(
      'property x should not exist',
    );
  });

  it('VAL-02 answers injection strings in every parameter with 4xx, never 500, and errors leak nothing internal', async () => {
    const user = await signedInUser(t);
    for (const evil of INJECTIONS) {
      const responses = [
        await t.api().post('/api/v1/auth/login').send({ email: evil, password: evil }),
        await t
          .api()
          .post('/api/v1/auth/register')
          .send({ email: `${evil}@example.com`, password: evil, name: evil }),
        await t.api().post('/api/v1/auth/refresh').send({ refreshToken: evil }),
        await t
          .api()
          .post('/api/v1/auth/login')
          .set('X-Realm-Id', evil.replace(/[\u0000-\u001f]/g, '') || 'x')
          .send({ email: 'a@example.com', password: 'x' }),
        await t
          .api()
          .get('/api/v1/auth/me')
          .set(...bearer(evil.replace(/[\u0000-\u001f]/g, ''))),
        await t
          .api()
          .get(`/api/v1/auth/me?x=${encodeURIComponent(evil)}`)
          .set(...bearer(user.accessToken)),
      ];
      for (const res of responses) {
        expect(res.status).toBeGreaterThanOrEqual(200);
        expect(res.status).toBeLessThan(500);
        const text = JSON.stringify(res.body);
        expect(text).not.toMatch(/QueryFailedError|SELECT |INSERT |stack|at .*\.ts:\d+/);
      }
    }
    const malformed = await t.api().post('/api/v1/auth/login').set('Content-Type', 'application/json').send('{"email":');
    expect(Object.keys(malformed.body)).toEqual(['error']);
    expect(malformed.headers['x-request-id']).toBeDefined();
  });

  it('REL-01 lets exactly one of 20 parallel registrations of one email through; the rest get 409', async () => {
    const email = uniqueEmail('race');
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.api().post('/api/v1/auth/register').send({ email, password: 'correct horse battery staple', name: 'Racer' }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const [{ n }] = await t.dataSource.query(`SELECT count(*) AS n FROM users WHERE email = $1`, [email]);
    expect(Number(n)).toBe(1);
  });
});

/** A TCP relay in front of PostgreSQL that the test can cut and restore. */
class Relay {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  constructor(private readonly target: { host: string; port: number }) {}

  async start(port = 0): Promise<number> {
    this.server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    return (this.server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }
}

const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

onPostgres('REL-02 — database outage (PostgreSQL only: the embedded database cannot go away)', () => {
  it('REL-02 fails closed with 503 SERVICE_UNAVAILABLE and no token while PostgreSQL is unreachable, then recovers', async () => {
    const base = await createTestApp();
    const url = new URL(base.database.databaseUrl!);
    const relay = new Relay({ host: url.hostname, port: Number(url.port || 5432) });
    const port = await relay.start();
    const viaRelay = new URL(url);
    viaRelay.port = String(port);
    const t = await createTestApp({ database: { ...base.database, databaseUrl: viaRelay.toString() } });
    try {
      const user = await register(t);
      await relay.stop();
      const login = await t.api().post('/api/v1/auth/login').send({ email: user.email, password: user.password });
      expect(login.status).toBe(503);
      expect(login.body).toEqual({ error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), status: 503 } });
      expect(JSON.stringify(login.body)).not.toMatch(/accessToken|refreshToken/);
      expect((await t.api().get('/health/ready')).status).toBe(503);
      await relay.start(port);
      let status = 0;
      for (let i = 0; i < 20 && status !== 200; i++) {
        status = (await t.api().post('/api/v1/auth/login').send({ email: user.email, password: user.password })).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      expect(status).toBe(200);
    } finally {
      await t.close();
      await relay.stop();
      await base.close();
    }
  });
});
