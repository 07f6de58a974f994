#!/usr/bin/env node
// `npm run bench:scale [-- options]`: how each path's cost grows with the data. For each size it
// seeds a database by SQL (bench/lib/scale-seed.mjs: N users in three realms, 3N sessions of which
// 2N are due for purging, 10N audit events, N/2 webhook deliveries, N/5 sent emails), starts the
// production build on it and times every path with autocannon, then (optionally) the housekeeping
// purge while refreshes run. Not a test: nothing here runs in `npm test`.
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/scale.mjs --sizes 1000,10000
//
// Options: --sizes 1000,10000,100000,1000000 (or --users N)   --connections 4  --duration 5  --runs 3  --warmup 1
//          --only login,me,…   --purge (also the purge under refresh traffic, at the largest size)
//          --explain (EXPLAIN (ANALYZE, BUFFERS) of every list statement, into the results folder)
//          --keep (keep the last database)   --reuse (measure the kept database, no seeding)
//          --database bench_scale (its name on the DATABASE_URL server)
//          --pglite (the embedded database instead of DATABASE_URL)
//          --members 100000 (the organization of the `organization-members` measurement: the members
//          list, bench/organization-members-list.mjs, on a database of its own; PostgreSQL only)
//          --only organization-members (that measurement alone, no sizes seeded)
// Writes bench/results/scale-<stamp>/scale.json; `node bench/scale-chart.mjs <that file>` draws the chart.
import bcrypt from 'bcrypt';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchDatabase, serverVersion } from './lib/database.mjs';
import { measureScenario, median, preHash } from './lib/measure.mjs';
import { machineDescription } from './lib/proc.mjs';
import { benchEnv, freePort, startServer } from './lib/server.mjs';
import { option } from './lib/options.mjs';
import { httpCall } from './lib/http.mjs';
import {
  BIG_REALM,
  FAMILY_NAMES,
  scaleEmail,
  scalePlan,
  scaleRefreshToken,
  scaleStatus,
  seedDeliveries,
  seedScale,
  userId,
  WEBHOOKS,
} from './lib/scale-seed.mjs';
import { explainPaths } from './lib/scale-explain.mjs';
import { measureOrganizationMembers } from './organization-members-list.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

const SIZES = String(option('sizes', option('users', '1000,10000,100000,1000000')))
  .split(',')
  .map(Number);
const CONNECTIONS = Number(option('connections', 4));
const DURATION = Number(option('duration', 5));
const RUNS = Number(option('runs', 3));
const WARMUP = Number(option('warmup', 1));
const ONLY = option('only', null) ? String(option('only')).split(',') : null;
const PURGE = Boolean(option('purge', false));
const EXPLAIN = Boolean(option('explain', false));
const KEEP = Boolean(option('keep', false));
const REUSE = Boolean(option('reuse', false));
const PGLITE = Boolean(option('pglite', false));
const DATABASE = String(option('database', 'bench_scale'));
const MEMBERS = Number(option('members', 100000));
// Measurements beside the sizes': they seed a database of their own, once.
const OWN_DATABASE = ['organization-members'];
const SIZE_PATHS = ONLY ? ONLY.filter((name) => !OWN_DATABASE.includes(name)) : null;
const wanted = (name) => !ONLY || ONLY.includes(name);
const BCRYPT_COST = 10;
const PASSWORD = 'Bench-Copper-Kettle-2026!';
const USER_AGENT = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const FINGERPRINT = JSON.stringify({
  ua: USER_AGENT,
  platform: 'MacIntel',
  lang: 'en-US',
  tz: 'Europe/Berlin',
  screen: '1728x1117',
  cores: 10,
});
const CLIENT_HEADERS = { 'user-agent': USER_AGENT, 'accept-language': 'en-US,en;q=0.9' };
const JSON_HEADERS = { ...CLIENT_HEADERS, 'content-type': 'application/json' };
const REALM_HEADERS = { 'x-realm-id': BIG_REALM };

if (PGLITE) delete process.env.DATABASE_URL;
else if (!process.env.DATABASE_URL) {
  console.error('DATABASE_URL must point at a PostgreSQL server (a database bench_scale is created there), or pass --pglite.');
  process.exit(2);
}

const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '_').toLowerCase();
const resultsDir = path.join(HERE, 'results', `scale-${stamp}`);
fs.mkdirSync(resultsDir, { recursive: true });
const log = (line) => process.stderr.write(`${line}\n`);
const call = (origin, method, urlPath, options = {}) => httpCall(origin, method, urlPath, { ...options, clientHeaders: CLIENT_HEADERS });

async function expectOk(origin, method, urlPath, options) {
  const res = await call(origin, method, urlPath, options);
  if (res.status < 200 || res.status > 299) throw new Error(`${method} ${urlPath} → ${res.status} ${res.text.slice(0, 300)}`);
  return res.json;
}

/** Migrates an empty database through the service itself, and records the device of a real login. */
async function seed(database, users) {
  const port = await freePort();
  const env = benchEnv({ port, database, bcryptCost: BCRYPT_COST });
  let server = await startServer({ env, logFile: path.join(resultsDir, 'server.log') });
  const email = 'template@scale.example.com';
  await expectOk(server.origin, 'POST', '/api/v1/auth/register', { body: { email, password: PASSWORD, name: 'Template User' } });
  await expectOk(server.origin, 'POST', '/api/v1/auth/login', { body: { email, password: PASSWORD, deviceFingerprint: FINGERPRINT } });
  await server.stop();
  server = null;
  let db = await database.open();
  try {
    const [template] = (
      await db.query(
        `SELECT s.device_name, s.device_type, s.fingerprint, s.reference_fingerprint, s.ip, s.user_agent
         FROM users u JOIN sessions s ON s.user_id = u.id WHERE u.email = $1`,
        [email],
      )
    ).rows;
    if (typeof template.reference_fingerprint === 'string') template.reference_fingerprint = JSON.parse(template.reference_fingerprint);
    const passwordHash = await bcrypt.hash(preHash(PASSWORD), BCRYPT_COST);
    const t0 = Date.now();
    await seedScale(db, { users, passwordHash, template, log });
    if (database.kind === 'pglite') await db.close();
    // Webhooks through the API (their secrets are encrypted by the service), then their deliveries by SQL.
    server = await startServer({ env, logFile: path.join(resultsDir, 'server.log') });
    const headers = await adminHeaders(server.origin);
    const webhookIds = [];
    for (let w = 0; w < WEBHOOKS; w++) {
      const { webhook } = await expectOk(server.origin, 'POST', '/v1/admin/webhooks', {
        body: { url: `http://127.0.0.1:9/scale-hook-${w}`, events: ['user.deleted'], description: `hook ${w}` },
        headers,
      });
      webhookIds.push(webhook.id);
    }
    await server.stop();
    server = null;
    if (database.kind === 'pglite') db = await database.open();
    await seedDeliveries(db, { users, webhookIds, log });
    const seconds = (Date.now() - t0) / 1000;
    const { rows } = await db.query(
      `SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM sessions)::int AS sessions,
              (SELECT count(*) FROM audit_events)::int AS events, (SELECT count(*) FROM webhook_deliveries)::int AS deliveries,
              (SELECT count(*) FROM email_outbox)::int AS emails, pg_database_size(current_database())::bigint AS bytes`,
    );
    const version = await serverVersion(db);
    return { seconds, counts: rows[0], version };
  } finally {
    await db.close();
    if (server) await server.stop();
  }
}

/** Headers of the big realm's administrator, signed in with its password. */
async function adminHeaders(origin) {
  const admin = await expectOk(origin, 'POST', '/api/v1/auth/login', {
    body: { email: `admin@${BIG_REALM}.example.com`, password: PASSWORD, deviceFingerprint: FINGERPRINT },
    headers: REALM_HEADERS,
  });
  return { ...CLIENT_HEADERS, ...REALM_HEADERS, authorization: `Bearer ${admin.tokens.accessToken}` };
}

/** The paths of the issue, in the big realm, as autocannon scenarios. */
async function scenarios(origin, users) {
  const plan = scalePlan(users);
  const big = plan.realms[0];
  const active = [];
  for (let k = 0; k < big.count; k += Math.max(1, Math.floor(big.count / 5000))) if (scaleStatus(k) === 'active') active.push(k);
  const headers = await adminHeaders(origin);
  // Live seeded sessions of active users: the first 64 give /me and /sessions their tokens, the rest start refresh chains.
  // A kept database (--reuse) has spent some seeded tokens already: start at a random place.
  const offset = REUSE ? Math.floor(Math.random() * active.length) : 0;
  const starters = [...active.slice(offset), ...active.slice(0, offset)].map((k) => scaleRefreshToken(big.from + k));
  const meTokens = [];
  for (const refreshToken of starters.splice(0, 64)) {
    const { tokens } = await expectOk(origin, 'POST', '/api/v1/auth/refresh', {
      body: { refreshToken, deviceFingerprint: FINGERPRINT },
      headers: REALM_HEADERS,
    });
    meTokens.push(tokens.accessToken);
  }
  let counter = 0;
  const ready = [];
  const refresh = {
    name: 'refresh',
    what: 'POST /api/v1/auth/refresh, each token used once, the successor presented next',
    beforeRun: () => {
      ready.length = 0;
    },
    requests: [
      {
        method: 'POST',
        path: '/api/v1/auth/refresh',
        headers: { ...JSON_HEADERS, ...REALM_HEADERS },
        setupRequest: (req) => {
          const refreshToken = ready.pop() ?? starters.shift();
          if (!refreshToken) throw new Error('refresh: no seeded session left to start a rotation');
          req.body = JSON.stringify({ refreshToken, deviceFingerprint: FINGERPRINT });
          return req;
        },
        onResponse: (status, body) => {
          if (status === 200) ready.push(JSON.parse(body).tokens.refreshToken);
        },
      },
    ],
  };
  const get = (name, urlPath, what) => ({
    name,
    what: what ?? `GET ${urlPath}`,
    probe: urlPath,
    requests: [{ method: 'GET', path: urlPath, headers }],
  });
  const bearer = (name, urlPath) => ({
    name,
    what: `GET ${urlPath}, ${meTokens.length} users' access tokens in turn`,
    requests: [
      {
        method: 'GET',
        path: urlPath,
        setupRequest: (req) => {
          req.headers = { ...CLIENT_HEADERS, ...REALM_HEADERS, authorization: `Bearer ${meTokens[counter++ % meTokens.length]}` };
          return req;
        },
      },
    ],
  });
  const someUser = userId(big.from + active[Math.floor(active.length / 2)]);
  const { webhooks } = await expectOk(origin, 'GET', '/v1/admin/webhooks', { headers });
  const webhookId = webhooks[0].id;
  const since = new Date(Date.now() - 86400_000).toISOString();
  return {
    refresh,
    list: [
      {
        name: 'login',
        what: `POST /api/v1/auth/login, ${active.length} active users in turn, bcrypt cost ${BCRYPT_COST}`,
        requests: [
          {
            method: 'POST',
            path: '/api/v1/auth/login',
            headers: { ...JSON_HEADERS, ...REALM_HEADERS },
            setupRequest: (req) => {
              const k = active[counter++ % active.length];
              req.body = JSON.stringify({ email: scaleEmail(BIG_REALM, k), password: PASSWORD, deviceFingerprint: FINGERPRINT });
              return req;
            },
          },
        ],
      },
      refresh,
      bearer('me', '/api/v1/auth/me'),
      bearer('own-sessions', '/api/v1/auth/sessions'),
      get('users', '/v1/admin/users'),
      get('users-page-200', '/v1/admin/users?page=200'),
      get('users-email-prefix', `/v1/admin/users?search=u${Math.floor(big.count / 100)}`),
      get('users-name-1pct', `/v1/admin/users?search=${FAMILY_NAMES[36].toLowerCase()}`),
      get('users-suspended', '/v1/admin/users?status=suspended'),
      get('sessions', '/v1/admin/sessions'),
      get('sessions-user', `/v1/admin/sessions?userId=${someUser}`),
      get('events-type', '/v1/admin/events?type=login.failed'),
      get('events-user', `/v1/admin/events?userId=${someUser}`),
      get('events-since', `/v1/admin/events?since=${encodeURIComponent(since)}`),
      get('deliveries', `/v1/admin/webhooks/${webhookId}/deliveries`),
    ],
    adminHeaders: headers,
    someUser,
    webhookId,
    since,
    starters,
  };
}

async function measureSize(users) {
  // A fixed name, so that a seeded database can be kept and measured again (--reuse).
  const database = benchDatabase(DATABASE);
  log(`== ${users} users: database ${database.kind} ${database.name}`);
  let server = null;
  let monitor = null;
  const out = { users, database: database.kind };
  try {
    if (!REUSE) {
      if (database.kind === 'postgresql') await database.drop();
      await database.create();
      Object.assign(out, { seed: await seed(database, users) });
      log(`  seeded: ${JSON.stringify(out.seed.counts)} in ${out.seed.seconds.toFixed(0)} s`);
    }
    const port = await freePort();
    const env = benchEnv({ port, database, bcryptCost: BCRYPT_COST });
    server = await startServer({ env, logFile: path.join(resultsDir, 'server.log') });
    if (database.kind === 'postgresql') monitor = await database.open();
    const databasePids = async () =>
      monitor
        ? (await monitor.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows.map(
            (r) => r.pid,
          )
        : [];
    const paths = await scenarios(server.origin, users);
    out.totals = {};
    out.results = [];
    for (const scenario of paths.list) {
      if (SIZE_PATHS && !SIZE_PATHS.includes(scenario.name)) continue;
      if (scenario.probe) {
        const probe = await call(server.origin, 'GET', scenario.probe, { headers: paths.adminHeaders });
        if (probe.status !== 200) throw new Error(`${scenario.name}: ${probe.status} ${probe.text.slice(0, 200)}`);
        out.totals[scenario.name] = probe.json.pagination.total;
      }
      log(`-- ${scenario.name}: ${scenario.what}`);
      const r = await measureScenario({
        origin: server.origin,
        scenario,
        connections: CONNECTIONS,
        duration: DURATION,
        warmup: WARMUP,
        runs: RUNS,
        server,
        databasePids,
        log,
      });
      delete r.runs;
      out.results.push(r);
    }
    if (EXPLAIN && database.kind === 'postgresql') {
      const file = path.join(resultsDir, `explain-${users}.txt`);
      fs.writeFileSync(file, await explainPaths(database.url, { realmId: BIG_REALM, ...paths, users }));
      log(`  plans: ${path.relative(process.cwd(), file)}`);
    }
    // The embedded database belongs to the server's process: no second process can purge beside it.
    if (PURGE && database.kind === 'postgresql') out.purge = await purgeUnderRefresh({ server, database, paths, databasePids });
  } finally {
    if (monitor) await monitor.close().catch(() => undefined);
    if (server) await server.stop().catch(() => undefined);
    if (!KEEP) await database.drop().catch((e) => log(`dropping the database: ${e.message}`));
    else log(`kept the database: ${database.url ?? database.name}`);
  }
  return out;
}

/**
 * The housekeeping purge (the production adapter's statements, batch after batch, as the
 * housekeeping job runs them) on a second connection while refreshes run at `CONNECTIONS`;
 * refresh latency without and with it, and the longest statement of the purge (it holds the
 * row locks of its batch, and nothing else, for that long).
 */
async function purgeUnderRefresh({ server, database, paths, databasePids }) {
  const { purgeBatches } = await import('./lib/scale-purge.mjs');
  const common = { origin: server.origin, connections: CONNECTIONS, duration: DURATION, warmup: 0, runs: 1, server, databasePids, log };
  log('-- refresh without the purge');
  const before = await measureScenario({ ...common, scenario: paths.refresh });
  const before2 = await measureScenario({ ...common, scenario: paths.refresh });
  log('-- refresh while the purge runs');
  const purging = purgeBatches(database.url, log);
  const during = [];
  while (!purging.done) {
    during.push(await measureScenario({ ...common, scenario: paths.refresh }));
  }
  const purge = await purging.result;
  return {
    refreshWithout: { p50: median([before.p50, before2.p50]), p99: median([before.p99, before2.p99]) },
    refreshDuring: {
      runs: during.length,
      p50: median(during.map((r) => r.p50)),
      p99: median(during.map((r) => r.p99)),
      worstP99: Math.max(...during.map((r) => r.p99)),
    },
    ...purge,
  };
}

async function main() {
  const machine = machineDescription();
  log(`scale benchmark ${stamp}: ${machine.cpus} CPUs, load ${machine.loadAverage.join(' ')}, sizes ${SIZES.join(', ')}`);
  const sizes = [];
  let organizationMembers = null;
  if (!SIZE_PATHS || SIZE_PATHS.length) {
    for (const users of SIZES) {
      sizes.push(await measureSize(users));
      write({ machine, sizes });
    }
  }
  if (wanted('organization-members')) {
    if (PGLITE) log('== organization-members: skipped, it needs PostgreSQL (DATABASE_URL)');
    else {
      log(`== organization-members: the members list of an organization of ${MEMBERS} members, ${CONNECTIONS} connections`);
      const { text, ...figures } = await measureOrganizationMembers({ members: MEMBERS, connections: CONNECTIONS, log });
      organizationMembers = { ...figures, text };
      write({ machine, sizes, organizationMembers: figures });
    }
  }
  const table = [sizes.length ? report(sizes) : null, organizationMembers?.text].filter(Boolean).join('\n\n');
  console.log(table);
  fs.writeFileSync(path.join(resultsDir, 'summary.md'), `${table}\n`);
  log(`results: ${path.relative(process.cwd(), resultsDir)}/scale.json`);
}

function write(data) {
  fs.writeFileSync(
    path.join(resultsDir, 'scale.json'),
    JSON.stringify(
      {
        stamp,
        connections: CONNECTIONS,
        duration: DURATION,
        runs: RUNS,
        bcryptCost: BCRYPT_COST,
        ...data,
        machineAfter: machineDescription(),
      },
      null,
      2,
    ),
  );
}

function report(sizes) {
  const names = [...new Set(sizes.flatMap((s) => s.results.map((r) => r.name)))];
  const cell = (s, name) => {
    const r = s.results.find((x) => x.name === name);
    return r ? `${r.p50} / ${r.p99}` : '';
  };
  const lines = [
    `| path | ${sizes.map((s) => `${s.users.toLocaleString('en')} users${s.database === 'pglite' ? ' (PGlite)' : ''}`).join(' | ')} |`,
    `|---|${sizes.map(() => '---:').join('|')}|`,
    ...names.map((name) => `| ${name} | ${sizes.map((s) => cell(s, name)).join(' | ')} |`),
    '',
    'p50 / p99 ms at ' + CONNECTIONS + ' connections. CPU per request (server + PostgreSQL, ms):',
    `| path | ${sizes.map((s) => s.users.toLocaleString('en')).join(' | ')} |`,
    `|---|${sizes.map(() => '---:').join('|')}|`,
    ...['login', 'refresh', 'me', 'own-sessions'].map(
      (name) =>
        `| ${name} | ${sizes
          .map((s) => {
            const r = s.results.find((x) => x.name === name);
            return r ? `${r.serverCpuMsPerReq.toFixed(2)} + ${(r.databaseCpuMsPerReq || 0).toFixed(2)}` : '';
          })
          .join(' | ')} |`,
    ),
  ];
  for (const s of sizes) if (s.purge) lines.push('', `purge at ${s.users} users: ${JSON.stringify(s.purge)}`);
  return lines.join('\n');
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
