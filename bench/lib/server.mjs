// Starts the production build as a child process and stops it again.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAIN = path.join(ROOT, 'dist', 'src', 'main.js');
const EXIT_ON_SIGNAL = path.join(ROOT, 'bench', 'lib', 'exit-on-signal.cjs');

/**
 * The node flags of the production command (`npm run start:prod`), so the benchmark runs the
 * service exactly as it is deployed.
 */
export function productionNodeFlags() {
  const script = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts?.['start:prod'] ?? '';
  const match = /^node\s+(.*?)\s*dist\/src\/main\.js$/.exec(script.trim());
  return match ? match[1].split(/\s+/).filter(Boolean) : [];
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Everything the service reads for a benchmark run: production mode, limits out of the way. */
export function benchEnv({ port, database, bcryptCost }) {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  delete env.NODE_OPTIONS;
  const limit = '1000000/60';
  return {
    ...env,
    ...database.serverEnv,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    // DPoP proofs name this origin in `htu`.
    API_URL: `http://127.0.0.1:${port}`,
    BCRYPT_COST: String(bcryptCost),
    // Outboxes paused: mail and webhook deliveries are written (as in production) but not sent, so
    // the numbers are the request's own work. The webhook scenario's receivers are on loopback.
    OUTBOX_POLL_INTERVAL_MS: '0',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    // The federation scenario's provider is on loopback, over http.
    IDP_ALLOW_HTTP: 'true',
    IDP_ALLOW_PRIVATE_NETWORKS: 'true',
    HOUSEKEEPING_INTERVAL_SECONDS: '0',
    RATE_LIMIT_LOGIN: limit,
    RATE_LIMIT_REGISTER: limit,
    RATE_LIMIT_REFRESH: limit,
    RATE_LIMIT_MFA_VERIFY: limit,
    RATE_LIMIT_EMAIL: limit,
    RATE_LIMIT_FEDERATION: limit,
    RATE_LIMIT_SIGN_IN_VERIFY: limit,
    RATE_LIMIT_DEFAULT: limit,
    RATE_LIMIT_OP_TOKEN: limit,
  };
}

/**
 * Spawns `node <flags of start:prod> dist/src/main.js` and resolves once /health/ready answers 200. With `cpuProfileDir`
 * the server runs under --cpu-prof and writes its profile when stopped.
 */
export async function startServer({ env, logFile, cpuProfileDir, nodeOptions = [] }) {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run "npm run build" first`);
  const args = [...productionNodeFlags(), ...nodeOptions];
  if (cpuProfileDir) {
    fs.mkdirSync(cpuProfileDir, { recursive: true });
    // --cpu-prof writes on a normal exit only; the preload turns SIGUSR2 into process.exit().
    args.push('--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`, '--require', EXIT_ON_SIGNAL);
  }
  args.push(MAIN);
  const log = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  let exited = null;
  child.on('exit', (code, signal) => {
    exited = { code, signal };
  });
  const origin = `http://127.0.0.1:${env.PORT}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (exited) throw new Error(`the server exited during start (${JSON.stringify(exited)}); see ${logFile}`);
    try {
      const res = await fetch(`${origin}/health/ready`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server did not become ready in 120 s; see ${logFile}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    pid: child.pid,
    origin,
    profiling: Boolean(cpuProfileDir),
    async stop() {
      if (exited) return;
      const done = new Promise((resolve) => child.once('exit', resolve));
      child.kill(cpuProfileDir ? 'SIGUSR2' : 'SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await done;
      clearTimeout(timer);
    },
  };
}
