import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT_EMAIL, ROOT_PASSWORD } from '../support/admin-flows';
import { FEDERATION_ENV, pkce } from '../support/federation';
import { TestOidcProvider } from '../support/oidc-provider';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const ROOT = join(__dirname, '../..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `npm run dev` as a developer starts it: watch build, development profile, a port of its own. */
describe('npm run dev: watch mode with the development profile', () => {
  let outDir: string;
  let dataDir: string;
  let database: TestDatabase;
  let child: ChildProcess | undefined;
  let output = '';
  let port: number;
  let base: string;
  let idp: TestOidcProvider;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'identity-dev-build-'));
    dataDir = mkdtempSync(join(tmpdir(), 'identity-dev-data-'));
    database = await createTestDatabase();
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // The service's own address is http://localhost:<port> (API_URL's default).
    idp = await TestOidcProvider.start({
      redirectUris: [`http://localhost:${port}/api/v1/auth/federation/corp/callback`],
      accounts: { dev: { email: `dev-idp-${Date.now()}@example.com`, email_verified: true } },
    });
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      NODE_PATH: join(ROOT, 'node_modules'),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      BCRYPT_COST: '4',
      LOG_LEVEL: 'info',
      ...FEDERATION_ENV,
    };
    if (database.databaseUrl) env.DATABASE_URL = database.databaseUrl;
    const script = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.dev as string;
    expect(script).toBe('node scripts/dev.mjs');
    child = spawn(process.execPath, [join(ROOT, 'scripts/dev.mjs'), '--out-dir', outDir], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 150_000;
    for (;;) {
      const ready = await fetch(`${base}/health/ready`).catch(() => null);
      if (ready?.status === 200) break;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm run dev did not start:\n${output}`);
      await sleep(250);
    }
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await idp?.stop();
    await database?.drop();
    rmSync(outDir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('announces the development profile and what it changed', () => {
    expect(output).toContain('DEVELOPMENT PROFILE');
    expect(output).toContain('CORS open to: http://localhost:*, http://127.0.0.1:*');
    expect(output).toContain('return URLs (email links, identity providers): any http://localhost:<port> or http://127.0.0.1:<port> page');
  });

  it('allows a CORS preflight from a dev server on http://localhost:5173, credentials included', async () => {
    const res = await fetch(`${base}/api/v1/auth/login`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://localhost:5173',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,x-refresh-token-transport',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    const foreign = await fetch(`${base}/api/v1/auth/login`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(foreign.status).toBe(204);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('lets more than five logins a minute through, and the issuer and email links follow the port', async () => {
    const email = `dev-${Date.now()}@example.com`;
    const password = 'Plum-Ferry-4471-Orbit';
    const json = { 'content-type': 'application/json' };
    const registered = await fetch(`${base}/api/v1/auth/register`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email, password, name: 'Dev' }),
    });
    expect(registered.status).toBe(201);
    const statuses: number[] = [];
    let accessToken = '';
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email, password }) });
      statuses.push(res.status);
      if (res.status === 200) accessToken = ((await res.json()) as { tokens: { accessToken: string } }).tokens.accessToken;
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200]);
    const claims = JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString()) as { iss: string };
    expect(claims.iss).toBe(`http://localhost:${port}/realms/default`);
    // The verification email goes to the log, its link on this port.
    const deadline = Date.now() + 10_000;
    while (!output.includes(`http://localhost:${port}/verify-email?token=`) && Date.now() < deadline) await sleep(200);
    expect(output).toContain(`http://localhost:${port}/verify-email?token=`);
  });

  it('sends email links and identity-provider sign-ins back to any local dev server page; other hosts stay refused', async () => {
    const json = { 'content-type': 'application/json' };
    const codeChallenge = pkce().challenge;
    const post = (path: string, body: object, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) });

    // An emailed sign-in link to a Vite dev server; its link (written to the log) opens that page.
    const email = `dev-link-${Date.now()}@example.com`;
    const linked = await post('/api/v1/auth/email-code', { email, returnTo: 'http://localhost:5173/auth/callback', codeChallenge });
    expect(linked.status).toBe(202);
    const refused = await post('/api/v1/auth/email-code', { email, returnTo: 'http://evil.example:5173/auth/callback', codeChallenge });
    expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([400, 'VALIDATION_FAILED']);

    // An identity provider, registered by the bootstrap administrator.
    const root = await post('/api/v1/auth/login', { email: ROOT_EMAIL, password: ROOT_PASSWORD }, { 'X-Realm-Id': 'master' });
    const { accessToken } = ((await root.json()) as { tokens: { accessToken: string } }).tokens;
    const created = await post(
      '/v1/admin/identity-providers',
      { alias: 'corp', displayName: 'Corp SSO', issuer: idp.issuer, clientId: 'identity-service' },
      { authorization: `Bearer ${accessToken}`, 'X-Realm-Id': 'default' },
    );
    expect(created.status).toBe(201);
    for (const returnTo of ['http://evil.example:3001/', 'https://localhost:3001/', 'http://localhost:3001/#x']) {
      const start = await post('/api/v1/auth/federation/corp/start', { returnTo, codeChallenge });
      expect([returnTo, start.status]).toEqual([returnTo, 400]);
    }
    const start = await post('/api/v1/auth/federation/corp/start', { returnTo: 'http://localhost:3001/signed-in?app=1', codeChallenge });
    expect(start.status).toBe(200);
    const back = await idp.signIn(((await start.json()) as { authorizationUrl: string }).authorizationUrl, 'dev');
    const callback = await fetch(back.replace(`http://localhost:${port}`, base), { redirect: 'manual' });
    expect(callback.status).toBe(303);
    expect(callback.headers.get('location')).toMatch(/^http:\/\/localhost:3001\/signed-in\?app=1&code=[\w-]+$/);

    const deadline = Date.now() + 10_000;
    while (!output.includes('http://localhost:5173/auth/callback?email_token=') && Date.now() < deadline) await sleep(200);
    expect(output).toContain('http://localhost:5173/auth/callback?email_token=');
  });
});
