import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * The production build under load receives SIGTERM: requests in flight complete, new
 * connections are refused, and the process exits 0 (graceful shutdown).
 */
const ROOT = resolve(__dirname, '../..');
const PASSWORD = 'correct horse battery staple';

interface Answer {
  status?: number;
  body?: string;
  connection?: string;
  error?: string;
}

/**
 * One request. With `received`, the body waits for the server's `100 Continue`, which the
 * server sends once it has read the headers and started handling the request: from then on
 * the request is in flight on the server, whatever the load.
 */
function call(
  port: number,
  method: string,
  path: string,
  body: object | null,
  agent: http.Agent | false,
  received?: () => void,
  requestId?: string,
): Promise<Answer> {
  return new Promise((done) => {
    const payload = body ? JSON.stringify(body) : undefined;
    const headers: http.OutgoingHttpHeaders = payload
      ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }
      : {};
    if (requestId) headers['X-Request-Id'] = requestId;
    if (received) headers.Expect = '100-continue';
    const req = http.request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => done({ status: res.statusCode, body: text, connection: res.headers.connection }));
      res.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
    if (received) {
      req.on('continue', () => {
        received();
        req.end(payload);
      });
      req.flushHeaders();
    } else {
      req.end(payload);
    }
  });
}

function connects(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('graceful shutdown of the built server on SIGTERM', () => {
  let outDir: string;
  let dataDir: string;
  let database: TestDatabase;
  let child: ChildProcess | undefined;
  let output = '';
  let port: number;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'identity-build-'));
    dataDir = mkdtempSync(join(tmpdir(), 'identity-data-'));
    // The production build, compiled apart from dist/ so a developer's build is left alone.
    await promisify(execFile)(
      process.execPath,
      [
        join(ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        join(ROOT, 'tsconfig.build.json'),
        '--outDir',
        outDir,
        '--incremental',
        'false',
      ],
      { cwd: ROOT },
    );
    database = await createTestDatabase();
    // Port 0: the server takes a free port itself and names it in its first line, so no other
    // process can take the port between choosing and listening.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      NODE_PATH: join(ROOT, 'node_modules'),
      NODE_ENV: 'production',
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      // Real bcrypt cost: each login keeps a request in flight for a few hundred milliseconds.
      BCRYPT_COST: '12',
      RATE_LIMIT_LOGIN: '100000/60',
      RATE_LIMIT_REGISTER: '100000/60',
      RATE_LIMIT_DEFAULT: '100000/60',
      SHUTDOWN_TIMEOUT_SECONDS: '30',
    };
    if (database.databaseUrl) env.DATABASE_URL = database.databaseUrl;
    child = spawn(process.execPath, [join(outDir, 'src/main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 60_000;
    for (;;) {
      const listening = /listening on http:\/\/[^:]+:(\d+)/.exec(output);
      port = listening ? Number(listening[1]) : 0;
      const ready = port ? await call(port, 'GET', '/health/ready', null, false) : { status: undefined };
      if (ready.status === 200) break;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server did not start:\n${output}`);
      await sleep(200);
    }
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await database?.drop();
    rmSync(outDir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes every request in flight, refuses new connections and exits 0', async () => {
    const email = `shutdown.${Date.now()}@example.com`;
    expect(await call(port, 'POST', '/api/v1/auth/register', { email, password: PASSWORD, name: 'Shut Down' }, false)).toMatchObject({
      status: 201,
    });

    // Load: slow logins, half of them on kept-alive connections, plus a stream of cheap requests.
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 8 });
    await Promise.all(Array.from({ length: 8 }, () => call(port, 'GET', '/health/live', null, keepAlive))); // 8 open, idle sockets
    const cheap: Promise<Answer & { id: string }>[] = [];
    let answered = 0;
    let streaming = true;
    const stream = (async () => {
      while (streaming) {
        const id = `cheap-${cheap.length}`;
        cheap.push(
          call(port, 'GET', '/health/live', null, false, undefined, id).then((a) => {
            if (a.status === 200) answered += 1;
            return { ...a, id };
          }),
        );
        await sleep(5);
      }
    })();
    while (answered === 0) await sleep(5); // the stream is flowing
    let received = 0;
    const logins = Array.from({ length: 16 }, (_, i) =>
      call(port, 'POST', '/api/v1/auth/login', { email, password: PASSWORD }, i % 2 ? keepAlive : false, () => (received += 1)),
    );
    while (received < 16) await sleep(5); // all 16 are being handled; bcrypt keeps them busy
    await sleep(200); // past the first burst of work, while every login still waits for bcrypt

    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child!.once('exit', (code, signal) => done({ code, signal })),
    );
    let settled = 0;
    logins.forEach((p) => void p.then(() => (settled += 1)));
    const signalledAt = Date.now();
    child!.kill('SIGTERM');

    // New connections are refused while the logins are still running.
    let refusedAt = 0;
    while (Date.now() - signalledAt < 5000) {
      if (!(await connects(port))) {
        refusedAt = Date.now();
        break;
      }
      await sleep(10);
    }
    const settledWhenRefused = settled;
    streaming = false;
    await stream;
    const late = await call(port, 'GET', '/health/live', null, false);

    const answers = await Promise.all(logins);
    const cheapAnswers = await Promise.all(cheap);
    const { code, signal } = await exited;
    keepAlive.destroy();

    expect(refusedAt).toBeGreaterThan(0);
    expect(settledWhenRefused).toBeLessThan(16); // the refusal came while logins were in flight
    expect(late.error).toBe('ECONNREFUSED');
    expect(answers.map((a) => a.status)).toEqual(Array(16).fill(200));
    for (const answer of answers) expect(JSON.parse(answer.body!).tokens.refreshToken).toEqual(expect.any(String));
    // Kept-alive connections are closed after their last answer rather than reused.
    expect(answers.filter((a, i) => i % 2 === 1 && a.connection === 'close').length).toBeGreaterThan(0);
    // Every cheap request got its answer, or never reached the application: refused, or reset
    // while still waiting in the kernel's accept queue when the listening socket closed.
    const handled = new Set([...output.matchAll(/"requestId":"(cheap-\d+)"/g)].map((m) => m[1]));
    const lost = cheapAnswers.filter(
      (a) => a.status !== 200 && !(a.error === 'ECONNREFUSED' || (a.error === 'ECONNRESET' && !handled.has(a.id))),
    );
    expect(lost).toEqual([]);
    expect(cheapAnswers.filter((a) => a.status === 200).length).toBeGreaterThan(0);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(output).toContain('SIGTERM received');
    expect(output).toContain('shutdown complete (exit code 0)');
  }, 60_000);
});
