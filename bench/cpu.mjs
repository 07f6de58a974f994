#!/usr/bin/env node
// Server CPU per request of one scenario against a running service: reads the server's
// utime+stime (all threads) from /proc before and after a fixed number of requests.
// Far steadier than requests/s on a shared machine.
//
//   node bench/cpu.mjs --origin http://127.0.0.1:3900 --pid <server pid> --scenario me --requests 20000
//   (--seconds 8 instead of --requests: a fixed-duration run, whose req/s is exact)
//   scenarios: seed, me, me-dpop, refresh, refresh-cookie, login, admin-users
import autocannon from 'autocannon';
import fs from 'node:fs';
import { randomUUID, createHash } from 'node:crypto';
import * as jose from 'jose';
import pg from 'pg';
import { httpCall } from './lib/http.mjs';
import { option } from './lib/options.mjs';

const ORIGIN = option('origin', 'http://127.0.0.1:3900');
const PID = Number(option('pid', fs.existsSync('/tmp/perf/server.pid') ? fs.readFileSync('/tmp/perf/server.pid', 'utf8') : 0));
const SCENARIO = option('scenario', 'me');
const REQUESTS = Number(option('requests', 10000));
const CONNECTIONS = Number(option('connections', 4));
const REPEAT = Number(option('repeat', 3));
// --seconds N: run for N seconds instead of a number of requests (for throughput: autocannon
// ends an `amount` run only on its next one-second tick, so its req/s is quantised).
const SECONDS = Number(option('seconds', 0));
const USERS = Number(option('users', 1000));
const DB = option('db', null);
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const COMMON = { 'user-agent': UA, 'accept-language': 'en-US,en;q=0.9' };
const PASSWORD = 'vs-bench-Passw0rd!26';
const seedEmail = (i) => `vs-seed-${String(i).padStart(5, '0')}@bench.example.com`;
let ipCounter = Math.floor(Math.random() * 1e6);
const nextIp = () => {
  const n = ++ipCounter;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
};
const TICK = 100;

function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICK;
}
function threadCpu(pid) {
  const out = {};
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      // The event loop is the task whose id is the process id. Node 20 names its other threads
      // (V8's helpers, then libuv's pool, in the order they were started) all `node`: the id tells them apart.
      const name = t === String(pid) ? 'main' : `${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}#${t}`;
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) / TICK;
    } catch {
      /* gone */
    }
  }
  return out;
}
function rssMb(pid) {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return { rss: Number(/VmRSS:\s+(\d+)/.exec(s)[1]) / 1024, hwm: Number(/VmHWM:\s+(\d+)/.exec(s)[1]) / 1024 };
}

const call = (method, p, options = {}) => httpCall(ORIGIN, method, p, { ...options, clientHeaders: COMMON });

async function login(email, password, ip, { realm, headers = {} } = {}) {
  const r = await call('POST', '/api/v1/auth/login', {
    body: { email, password },
    headers: { 'x-forwarded-for': ip, ...(realm ? { 'x-realm-id': realm } : {}), ...headers },
  });
  if (r.status !== 200) throw new Error(`login ${email}: ${r.status} ${r.text}`);
  return r;
}

// DPoP proofs made with jose, an independent implementation.
let dpopKey;
async function dpopSetup() {
  const { privateKey, publicKey } = await jose.generateKeyPair('ES256');
  dpopKey = { privateKey, jwk: await jose.exportJWK(publicKey) };
}
async function proof(method, url, accessToken) {
  const payload = { htm: method, htu: url, jti: randomUUID(), iat: Math.floor(Date.now() / 1000) };
  if (accessToken) payload.ath = createHash('sha256').update(accessToken).digest('base64url');
  return new jose.SignJWT(payload).setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: dpopKey.jwk }).sign(dpopKey.privateKey);
}

async function seed() {
  let done = 0;
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= USERS) return;
      const r = await call('POST', '/api/v1/auth/register', {
        body: { email: seedEmail(i), password: PASSWORD, name: `Seed User ${i}` },
        headers: { 'x-forwarded-for': nextIp() },
      });
      if (r.status !== 201 && r.status !== 409) throw new Error(`register ${i}: ${r.status} ${r.text}`);
      done++;
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  console.log(`seeded ${done}`);
}

/** autocannon request definitions for a scenario (fresh for each run). */
async function scenario(name) {
  const json = { 'content-type': 'application/json' };
  if (name === 'me') {
    const ip = nextIp();
    const { json: j } = await login(seedEmail(0), PASSWORD, ip);
    return [
      {
        method: 'GET',
        path: '/api/v1/auth/me',
        headers: { ...COMMON, authorization: `Bearer ${j.tokens.accessToken}`, 'x-forwarded-for': ip },
      },
    ];
  }
  if (name === 'me-dpop') {
    const ip = nextIp();
    const { json: j } = await login(seedEmail(0), PASSWORD, ip, {
      headers: { dpop: await proof('POST', `${ORIGIN}/api/v1/auth/login`) },
    });
    if (j.tokens.tokenType !== 'DPoP') throw new Error('not DPoP-bound');
    const token = j.tokens.accessToken;
    // Proofs are made ahead (signing in the request loop would slow the load generator down).
    const proofs = [];
    for (let i = 0; i < REQUESTS + CONNECTIONS * 2; i++) proofs.push(await proof('GET', `${ORIGIN}/api/v1/auth/me`, token));
    let n = 0;
    return [
      {
        method: 'GET',
        path: '/api/v1/auth/me',
        headers: { ...COMMON, authorization: `DPoP ${token}`, 'x-forwarded-for': ip },
        setupRequest: (req) => {
          req.headers = { ...req.headers, dpop: proofs[n++] };
          return req;
        },
      },
    ];
  }
  if (name === 'refresh' || name === 'refresh-cookie') {
    const cookie = name === 'refresh-cookie';
    const pool = [];
    for (let i = 0; i < CONNECTIONS * 2; i++) {
      const ip = nextIp();
      const r = await login(seedEmail(i + 1), PASSWORD, ip, { headers: cookie ? { 'x-refresh-token-transport': 'cookie' } : {} });
      const token = cookie ? /__Host-refresh-default=([^;]+)/.exec(r.headers.get('set-cookie'))[1] : r.json.tokens.refreshToken;
      pool.push({ ip, token });
    }
    return [
      {
        method: 'POST',
        path: '/api/v1/auth/refresh',
        headers: { ...COMMON, ...json, ...(cookie ? { 'x-refresh-token-transport': 'cookie' } : {}) },
        setupRequest: (req, ctx) => {
          const c = pool.find((x) => !x.busy);
          c.busy = true;
          ctx.chain = c;
          if (cookie) {
            req.headers = { ...req.headers, 'x-forwarded-for': c.ip, cookie: `__Host-refresh-default=${c.token}` };
            req.body = '{}';
          } else {
            req.headers = { ...req.headers, 'x-forwarded-for': c.ip };
            req.body = JSON.stringify({ refreshToken: c.token });
          }
          return req;
        },
        onResponse: (status, body, ctx, headers) => {
          ctx.chain.busy = false;
          if (status !== 200) return;
          if (cookie) {
            const set = headers?.['set-cookie'] ?? headers?.['Set-Cookie'];
            const text = Array.isArray(set) ? set.join(';') : String(set);
            const m = /__Host-refresh-default=([^;]+)/.exec(text);
            if (m) ctx.chain.token = m[1];
          } else ctx.chain.token = JSON.parse(body).tokens.refreshToken;
        },
      },
    ];
  }
  if (name === 'login') {
    let n = 0;
    return [
      {
        method: 'POST',
        path: '/api/v1/auth/login',
        headers: { ...COMMON, ...json },
        setupRequest: (req) => {
          const i = n++ % USERS;
          req.headers = { ...req.headers, 'x-forwarded-for': nextIp() };
          req.body = JSON.stringify({ email: seedEmail(i), password: PASSWORD });
          return req;
        },
      },
    ];
  }
  if (name === 'admin-users') {
    const { json: j } = await login('bench-root@bench.example.com', 'Bench-Root-Pw-2026!', nextIp(), { realm: 'master' });
    return [
      {
        method: 'GET',
        path: '/v1/admin/users?limit=50&sort=-createdAt&search=seed',
        headers: { ...COMMON, authorization: `Bearer ${j.tokens.accessToken}`, 'x-realm-id': 'default' },
      },
    ];
  }
  throw new Error(`unknown scenario ${name}`);
}

async function pgBackendsCpu(client) {
  if (!client) return 0;
  const { rows } = await client.query('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
  let total = 0;
  for (const { pid } of rows) {
    try {
      total += cpuSeconds(pid);
    } catch {
      /* gone */
    }
  }
  return total;
}

async function run(name, amount) {
  const requests = await scenario(name);
  const before = cpuSeconds(PID);
  const threadsBefore = threadCpu(PID);
  const result = await autocannon({
    url: ORIGIN,
    connections: CONNECTIONS,
    ...(SECONDS ? { duration: SECONDS } : { amount }),
    requests,
    timeout: 30,
  });
  const after = cpuSeconds(PID);
  const threadsAfter = threadCpu(PID);
  const ok = result['2xx'];
  const main = threadsAfter.main - threadsBefore.main;
  // CPU per request of each thread: the event loop (`main`), V8's helpers, libuv's pool.
  const threads = Object.fromEntries(
    Object.keys(threadsAfter).map((k) => [k, ((threadsAfter[k] - (threadsBefore[k] ?? 0)) * 1000) / ok]),
  );
  return {
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    cpuMs: ((after - before) * 1000) / ok,
    mainMs: (main * 1000) / ok,
    threads,
    rps: SECONDS ? ok / SECONDS : result.requests.average,
    p99: result.latency.p99,
  };
}

if (SCENARIO === 'seed') {
  await seed();
} else {
  let client = null;
  if (DB) {
    client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:5432/${DB}` });
    await client.connect();
  }
  if (SCENARIO === 'me-dpop') await dpopSetup();
  const warm = await run(SCENARIO, Math.max(200, Math.floor(REQUESTS / 5)));
  if (warm.non2xx || warm.errors) console.log('warm-up errors', warm);
  const results = [];
  for (let i = 0; i < REPEAT; i++) {
    const pgBefore = await pgBackendsCpu(client);
    const r = await run(SCENARIO, REQUESTS);
    const pgAfter = await pgBackendsCpu(client);
    r.pgMs = client ? ((pgAfter - pgBefore) * 1000) / r.ok : null;
    results.push(r);
    console.log(
      `${SCENARIO} run ${i + 1}: ${r.ok} ok, ${r.non2xx} non-2xx, ${r.errors} errors; server ${r.cpuMs.toFixed(3)} ms/req (main thread ${r.mainMs.toFixed(3)})` +
        (client ? `, pg ${r.pgMs.toFixed(3)} ms/req` : '') +
        `; ${r.rps.toFixed(1)} req/s p99 ${r.p99} ms`,
    );
    const byThread = Object.entries(r.threads).filter(([, ms]) => ms >= 0.005);
    console.log(`  threads, ms/req: ${byThread.map(([k, ms]) => `${k} ${ms.toFixed(3)}`).join(', ')}`);
  }
  const sorted = results.map((r) => r.cpuMs).sort((a, b) => a - b);
  console.log(
    `${SCENARIO} median server CPU ${sorted[Math.floor(sorted.length / 2)].toFixed(3)} ms/req; rss ${JSON.stringify(rssMb(PID))}`,
  );
  await client?.end();
}
