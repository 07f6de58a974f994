import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOG_DESTINATION } from '../../src/adapters/http/logging/logging.module';
import { ROOT_EMAIL, ROOT_PASSWORD } from '../support/admin-flows';
import { CapturedLogs } from '../support/captured-logs';
import { FEDERATION_ENV, pkce } from '../support/federation';
import { bearer, uniqueEmail } from '../support/flows';
import { TestOidcProvider } from '../support/oidc-provider';
import { AUTH } from '../support/passkeys';
import { SoftAuthenticator } from '../support/soft-authenticator';
import { createTestApp, TestApp } from '../support/test-app';
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
  let database_: TestDatabase;
  let child: ChildProcess | undefined;
  let output = '';
  let port: number;
  let base: string;
  let idp: TestOidcProvider;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'identity-dev-build-'));
    // ES modules loaded on demand (import('@simplewebauthn/server')) resolve from the build's own folder, not NODE_PATH.
    symlinkSync(join(ROOT, 'node_modules'), join(outDir, 'node_modules'));
    dataDir = mkdtempSync(join(tmpdir(), 'identity-dev-data-'));
    database_ = await createTestDatabase();
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
    if (database_.databaseUrl) env.DATABASE_URL = database_.databaseUrl;
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
    await database_?.drop();
    rmSync(outDir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('announces the development profile and what it changed', () => {
    expect(output).toContain('DEVELOPMENT PROFILE');
    expect(output).toContain('CORS open to: http://localhost:*, http://127.0.0.1:*');
    expect(output).toContain(`WebAuthn (passkeys, security keys) accepted from: http://localhost:${port}, http://localhost:*`);
    expect(output).toContain('return URLs (email links, identity providers): any http://localhost:<port> or http://127.0.0.1:<port> page');
  });

  it('names, once it listens, the addresses it answers as, the database and the origins it accepts', () => {
    const start = output.slice(output.indexOf('Identity service listening on'));
    const database = database_.databaseUrl
      ? `  database: PostgreSQL ${new URL(database_.databaseUrl).hostname}:${new URL(database_.databaseUrl).port || '5432'}/`
      : `  database: embedded PGlite in ${dataDir}`;
    expect(start.split('\n').slice(0, 6)).toEqual([
      `Identity service listening on http://127.0.0.1:${port}`,
      `  API_URL http://localhost:${port} (token issuer http://localhost:${port})`,
      `  PUBLIC_URL http://localhost:${port} (links in emails)`,
      expect.stringContaining(database),
      '  CORS origins: http://localhost:*, http://127.0.0.1:*',
      `  WebAuthn: RP ID localhost, origins http://localhost:${port}, http://localhost:*`,
    ]);
    if (database_.databaseUrl) {
      const password = new URL(database_.databaseUrl).password;
      if (password) expect(start).not.toContain(password);
    }
  });

  it('registers a passkey made on a dev server at http://localhost:4310, as it allows its CORS requests', async () => {
    const json = { 'content-type': 'application/json', origin: 'http://localhost:4310' };
    const email = `dev-passkey-${Date.now()}@example.com`;
    const password = 'Plum-Ferry-4471-Orbit';
    const post = (path: string, body: object, token?: string) =>
      fetch(`${base}${AUTH}${path}`, {
        method: 'POST',
        headers: token ? { ...json, authorization: `Bearer ${token}` } : json,
        body: JSON.stringify(body),
      });
    expect((await post('/register', { email, password, name: 'Dev Passkey' })).status).toBe(201);
    const login = await post('/login', { email, password });
    const { accessToken } = ((await login.json()) as { tokens: { accessToken: string } }).tokens;
    const options = await post('/mfa/webauthn/register/options', { passkey: true }, accessToken);
    expect(options.status).toBe(200);
    const authenticator = new SoftAuthenticator('http://localhost:4310', 'localhost');
    authenticator.resident = true;
    const verified = await post(
      '/mfa/webauthn/register/verify',
      { response: authenticator.attestation((await options.json()) as { challenge: string }) },
      accessToken,
    );
    expect([verified.status, await verified.text()]).toEqual([200, expect.stringContaining('"webauthn"')]);
    // And it signs in from that page.
    const challenge = (await (await post('/passkeys/options', {})).json()) as { challengeId: string; options: { challenge: string } };
    const signedIn = await post('/passkeys/verify', {
      challengeId: challenge.challengeId,
      response: authenticator.assertion(challenge.options),
    });
    expect(signedIn.status).toBe(200);
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

/** The production profile keeps WebAuthn to its configured origins, and says in the log what it expected. */
describe('WebAuthn origins outside the development profile', () => {
  let t: TestApp;
  const logs = new CapturedLogs();

  beforeAll(async () => {
    t = await createTestApp({
      env: { LOG_LEVEL: 'info' },
      override: (builder) => builder.overrideProvider(LOG_DESTINATION).useValue(logs),
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses a passkey made on http://localhost:4310, and the log (not the answer) names the expected and received origin and RP ID', async () => {
    expect(t.config.profile).toBe('production');
    expect(t.config.webauthnOrigins).toEqual(['http://localhost:3000']);
    const email = uniqueEmail('prod-passkey');
    const password = 'Plum-Ferry-4471-Orbit';
    expect((await t.api().post(`${AUTH}/register`).send({ email, password, name: 'Prod Passkey' })).status).toBe(201);
    const { accessToken } = (await t.api().post(`${AUTH}/login`).send({ email, password })).body.tokens;
    const options = await t
      .api()
      .post(`${AUTH}/mfa/webauthn/register/options`)
      .set(...bearer(accessToken))
      .send({ passkey: true });
    const authenticator = new SoftAuthenticator('http://localhost:4310', 'localhost');
    authenticator.resident = true;
    const res = await t
      .api()
      .post(`${AUTH}/mfa/webauthn/register/verify`)
      .set(...bearer(accessToken))
      .send({ response: authenticator.attestation(options.body) });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'response', message: 'could not be verified' }]);
    expect(JSON.stringify(res.body)).not.toMatch(/4310|localhost:3000/);
    const warning = logs.lines().find((line) => line.context === 'WebAuthn');
    expect(warning).toMatchObject({
      level: 'warn',
      ceremony: 'registration',
      reason: 'origin',
      expectedOrigins: ['http://localhost:3000'],
      receivedOrigin: 'http://localhost:4310',
      expectedRpId: 'localhost',
      receivedRpId: 'localhost',
      requestId: res.headers['x-request-id'],
    });
    expect(warning?.msg).toBe(
      'WebAuthn registration did not verify (origin): expected origin http://localhost:3000 and RP ID localhost, received origin http://localhost:4310 and RP ID localhost',
    );
  });

  it('names a foreign RP ID too', async () => {
    const email = uniqueEmail('prod-rpid');
    const password = 'Plum-Ferry-4471-Orbit';
    expect((await t.api().post(`${AUTH}/register`).send({ email, password, name: 'Prod RpId' })).status).toBe(201);
    const { accessToken } = (await t.api().post(`${AUTH}/login`).send({ email, password })).body.tokens;
    const options = await t
      .api()
      .post(`${AUTH}/mfa/webauthn/register/options`)
      .set(...bearer(accessToken))
      .send({ passkey: true });
    const authenticator = new SoftAuthenticator('http://app.example.com', 'app.example.com');
    const res = await t
      .api()
      .post(`${AUTH}/mfa/webauthn/register/verify`)
      .set(...bearer(accessToken))
      .send({ response: authenticator.attestation(options.body) });
    expect(res.status).toBe(400);
    const warning = logs.lines().find((line) => line.context === 'WebAuthn' && line.requestId === res.headers['x-request-id']);
    expect(warning).toMatchObject({ receivedOrigin: 'http://app.example.com', receivedRpId: 'app.example.com', expectedRpId: 'localhost' });
  });
});
