#!/usr/bin/env node
// `npm run soak [-- options]` (or `npm run bench -- --soak`): mixed traffic for a long time against
// the production build on PostgreSQL + Redis, looking for leaks and drift. Not a test.
//
// Options: --duration 600 (s)  --connections 16  --sample 10 (s)  --users 200  --bcrypt-cost 10  --keep
// Needs DATABASE_URL (a database soak_<stamp> is created and dropped); REDIS_URL defaults to
// redis://127.0.0.1:6379.
//
// Traffic, per request drawn at random: 60 % GET /me, 20 % refresh (each token used once, chains
// rotate), 8 % admin users list (filtered, sorted, counted), 2 % login, 10 % /me with a bad token
// (401 expected). Every 10 s: server RSS, event-loop delay p99 (from /metrics), request p99 and
// the count of unexpected answers. Passes (exit 0) when, after the first minute, RSS grows less
// than 10 %, every later minute's request p99 stays within 1.5 × the first minute's, and no answer
// was unexpected.
import autocannon from 'autocannon';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase } from './lib/database.mjs';
import { rssBytes } from './lib/proc.mjs';
import { benchEnv, freePort, startServer } from './lib/server.mjs';
import { option } from './lib/options.mjs';
import { httpCall } from './lib/http.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

const DURATION = Number(option('duration', 600));
const CONNECTIONS = Number(option('connections', 16));
const SAMPLE = Number(option('sample', 10));
const USERS = Number(option('users', 200));
const BCRYPT_COST = Number(option('bcrypt-cost', 10));
const KEEP = Boolean(option('keep', false));
const PASSWORD = 'Soak-Copper-Kettle-2026!';
const ADMIN = { email: 'soak-root@bench.example.com', password: 'Soak-Root-Password-2026!' };
const HEADERS = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'accept-language': 'en-US,en;q=0.9',
};
const JSON_HEADERS = { ...HEADERS, 'content-type': 'application/json' };
const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '_').toLowerCase();
const resultsDir = path.join(HERE, 'results', `soak-${stamp}`);
const log = (line) => process.stderr.write(`${line}\n`);
const email = (i) => `soak-${String(i).padStart(5, '0')}@bench.example.com`;

async function call(origin, method, p, options = {}) {
  const { status, json, text } = await httpCall(origin, method, p, { ...options, clientHeaders: HEADERS });
  if (status < 200 || status > 299) throw new Error(`${method} ${p} → ${status} ${text.slice(0, 200)}`);
  return json;
}

function percentile(values, p) {
  if (!values.length) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function eventLoopP99(origin) {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const match = /^nodejs_eventloop_lag_p99_seconds\s+([0-9.eE+-]+)/m.exec(text);
  return match ? Number(match[1]) * 1000 : NaN;
}

async function main() {
  if (!process.env.DATABASE_URL) throw new Error('the soak runs against PostgreSQL: set DATABASE_URL');
  fs.mkdirSync(resultsDir, { recursive: true });
  const database = await createBenchDatabase(`soak_${stamp}`.replace(/[^a-z0-9_]/g, ''));
  let server = null;
  try {
    const port = await freePort();
    const env = {
      ...benchEnv({ port, database, bcryptCost: BCRYPT_COST }),
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
      BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
    };
    server = await startServer({ env, logFile: path.join(resultsDir, 'server.log') });
    const { origin } = server;

    log(`seeding ${USERS} users through the API (bcrypt cost ${BCRYPT_COST})`);
    let next = 0;
    const register = async () => {
      for (let i = next++; i < USERS; i = next++) {
        await call(origin, 'POST', '/api/v1/auth/register', { body: { email: email(i), password: PASSWORD, name: `Soak User${i}` } });
      }
    };
    await Promise.all([register(), register(), register(), register()]);
    const login = (i) => call(origin, 'POST', '/api/v1/auth/login', { body: { email: email(i), password: PASSWORD } });
    const chains = [];
    for (let i = 0; i < Math.max(32, 2 * CONNECTIONS); i++) {
      const { tokens } = await login(i % USERS);
      chains.push({ refreshToken: tokens.refreshToken, accessToken: tokens.accessToken, busy: false });
    }
    const admin = (await call(origin, 'POST', '/api/v1/auth/login', { body: ADMIN, headers: { 'x-realm-id': 'master' } })).tokens
      .accessToken;
    const badToken = `${chains[0].accessToken.slice(0, -6)}AAAAAA`;

    // The mix, drawn per request; `expect` is the only status that counts as a success.
    const kinds = [
      { kind: 'me', weight: 60, expect: 200 },
      { kind: 'refresh', weight: 20, expect: 200 },
      { kind: 'admin-users', weight: 8, expect: 200 },
      { kind: 'login', weight: 2, expect: 200 },
      { kind: 'bad-token', weight: 10, expect: 401 },
    ];
    const total = kinds.reduce((sum, k) => sum + k.weight, 0);
    const draw = () => {
      let r = Math.random() * total;
      for (const k of kinds) if ((r -= k.weight) < 0) return k;
      return kinds[0];
    };
    let loginCounter = 0;
    let window = { latencies: [], unexpected: 0, count: 0 };
    const unexpectedSamples = [];
    const build = (req, context) => {
      let k = draw();
      const chain = k.kind === 'refresh' || k.kind === 'me' ? chains.find((c) => !c.busy) : null;
      if ((k.kind === 'refresh' || k.kind === 'me') && !chain) k = kinds[2];
      context.kind = k;
      context.chain = null;
      if (k.kind === 'me')
        return {
          ...req,
          method: 'GET',
          path: '/api/v1/auth/me',
          headers: { ...HEADERS, authorization: `Bearer ${chain.accessToken}` },
          body: undefined,
        };
      if (k.kind === 'bad-token')
        return {
          ...req,
          method: 'GET',
          path: '/api/v1/auth/me',
          headers: { ...HEADERS, authorization: `Bearer ${badToken}` },
          body: undefined,
        };
      if (k.kind === 'admin-users') {
        return {
          ...req,
          method: 'GET',
          path: '/v1/admin/users?limit=50&sort=-createdAt&status=active&search=soak',
          headers: { ...HEADERS, authorization: `Bearer ${admin}`, 'x-realm-id': 'default' },
          body: undefined,
        };
      }
      if (k.kind === 'login') {
        return {
          ...req,
          method: 'POST',
          path: '/api/v1/auth/login',
          headers: JSON_HEADERS,
          body: JSON.stringify({ email: email(loginCounter++ % USERS), password: PASSWORD }),
        };
      }
      chain.busy = true;
      context.chain = chain;
      return {
        ...req,
        method: 'POST',
        path: '/api/v1/auth/refresh',
        headers: JSON_HEADERS,
        body: JSON.stringify({ refreshToken: chain.refreshToken }),
      };
    };
    const onResponse = (status, body, context) => {
      const { kind, chain } = context;
      if (status !== kind.expect) {
        window.unexpected++;
        if (unexpectedSamples.length < 20) unexpectedSamples.push({ kind: kind.kind, status, body: String(body).slice(0, 200) });
      }
      if (chain) {
        chain.busy = false;
        if (status === 200) {
          const { tokens } = JSON.parse(body);
          chain.refreshToken = tokens.refreshToken;
          chain.accessToken = tokens.accessToken;
        } else {
          chains.splice(chains.indexOf(chain), 1); // a broken chain is dropped (and counted above)
        }
      }
    };

    log(`soak: ${DURATION} s at ${CONNECTIONS} connections, a sample every ${SAMPLE} s`);
    const samples = [];
    const started = Date.now();
    const instance = autocannon({
      url: origin,
      connections: CONNECTIONS,
      duration: DURATION,
      timeout: 30,
      requests: [{ setupRequest: build, onResponse }],
    });
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      window.latencies.push(responseTime);
      window.count++;
    });
    let socketErrors = 0;
    instance.on('reqError', () => socketErrors++);
    const sampler = setInterval(async () => {
      const current = window;
      window = { latencies: [], unexpected: 0, count: 0 };
      const sample = {
        at: Math.round((Date.now() - started) / 1000),
        requests: current.count,
        perSecond: Math.round(current.count / SAMPLE),
        p99Ms: percentile(current.latencies, 99),
        unexpected: current.unexpected,
        rssMb: (rssBytes(server.pid) ?? NaN) / 2 ** 20,
        eventLoopP99Ms: await eventLoopP99(origin).catch(() => NaN),
        latencies: current.latencies,
      };
      samples.push(sample);
      log(
        `${String(sample.at).padStart(4)} s: ${sample.perSecond}/s, p99 ${sample.p99Ms.toFixed(1)} ms, event loop p99 ${sample.eventLoopP99Ms.toFixed(1)} ms, RSS ${sample.rssMb.toFixed(1)} MB, unexpected ${sample.unexpected}`,
      );
    }, SAMPLE * 1000);
    const result = await instance;
    clearInterval(sampler);

    // Verdict: the first minute is the baseline.
    const firstMinute = samples.filter((s) => s.at <= 60);
    const later = samples.filter((s) => s.at > 60);
    const baseRss = firstMinute.at(-1)?.rssMb ?? NaN;
    const maxLaterRss = Math.max(...later.map((s) => s.rssMb));
    const baseP99 = percentile(
      firstMinute.flatMap((s) => s.latencies),
      99,
    );
    const minutes = [];
    for (let m = 2; m <= Math.ceil(DURATION / 60); m++) {
      const inMinute = samples.filter((s) => s.at > (m - 1) * 60 && s.at <= m * 60);
      if (inMinute.length)
        minutes.push({
          minute: m,
          p99Ms: percentile(
            inMinute.flatMap((s) => s.latencies),
            99,
          ),
        });
    }
    const worstP99 = Math.max(...minutes.map((m) => m.p99Ms));
    const unexpected = samples.reduce((sum, s) => sum + s.unexpected, 0) + result.errors + result.timeouts + socketErrors;
    const checks = [
      [
        `RSS after the first minute grows < 10 % (${baseRss.toFixed(1)} → max ${maxLaterRss.toFixed(1)} MB)`,
        later.length > 0 && maxLaterRss < baseRss * 1.1,
      ],
      [
        `every later minute's p99 ≤ 1.5 × the first minute's (${baseP99.toFixed(1)} ms → worst ${worstP99.toFixed(1)} ms)`,
        minutes.length > 0 && worstP99 <= baseP99 * 1.5,
      ],
      [`no errors (${unexpected}: unexpected answers, socket errors, time-outs)`, unexpected === 0],
    ];
    const lines = [
      `identity-service soak ${stamp}: ${DURATION} s at ${CONNECTIONS} connections, PostgreSQL + Redis, ${result.requests.total} requests`,
      '',
      '| at s | requests/s | p99 ms | event-loop p99 ms | RSS MB | unexpected |',
      '|---:|---:|---:|---:|---:|---:|',
      ...samples.map(
        (s) =>
          `| ${s.at} | ${s.perSecond} | ${s.p99Ms.toFixed(1)} | ${s.eventLoopP99Ms.toFixed(1)} | ${s.rssMb.toFixed(1)} | ${s.unexpected} |`,
      ),
      '',
      ...checks.map(([what, ok]) => `${ok ? 'PASS' : 'FAIL'} ${what}`),
      ...unexpectedSamples.map((u) => `unexpected: ${JSON.stringify(u)}`),
    ];
    console.log(lines.join('\n'));
    fs.writeFileSync(path.join(resultsDir, 'summary.md'), `${lines.join('\n')}\n`);
    fs.writeFileSync(
      path.join(resultsDir, 'results.json'),
      JSON.stringify(
        { stamp, DURATION, CONNECTIONS, samples: samples.map((s) => ({ ...s, latencies: undefined })), minutes, checks, unexpectedSamples },
        null,
        2,
      ),
    );
    log(`results: ${path.relative(process.cwd(), resultsDir)}/`);
    process.exitCode = checks.every(([, ok]) => ok) ? 0 : 1;
  } finally {
    if (server) await server.stop().catch(() => undefined);
    if (!KEEP) await database.drop().catch((e) => log(`dropping the database: ${e.message}`));
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
