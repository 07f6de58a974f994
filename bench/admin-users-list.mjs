#!/usr/bin/env node
// The administrative users list (GET /v1/admin/users, the admin API) on a realm of 100,000 users:
// seeds a fresh PostgreSQL database by SQL, then times the repository's own statements (the
// production adapter from dist/, one statement per page) for a set of filtered, sorted pages, and prints
// p50/p99 per query and EXPLAIN ANALYZE of each statement. Not a test.
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/admin-users-list.mjs
//
// Options: --users 100000  --iterations 200  --warmup 20  --keep (keep the database)  --no-explain
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase, seedUsers } from './lib/database.mjs';

const require = createRequire(import.meta.url);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  if (i === -1) return fallback;
  const value = process.argv[i + 1];
  return value === undefined || value.startsWith('--') ? true : value;
}

const USERS = Number(option('users', 100000));
const ITERATIONS = Number(option('iterations', 200));
const WARMUP = Number(option('warmup', 20));
const KEEP = Boolean(option('keep', false));
const EXPLAIN = !process.argv.includes('--no-explain');
const REALM = 'bench-users';
const log = (line) => process.stderr.write(`${line}\n`);

if (!process.env.DATABASE_URL) {
  console.error('DATABASE_URL must point at a PostgreSQL server (a database bench_users_<stamp> is created there and dropped).');
  process.exit(2);
}
for (const file of ['dist/src/adapters/persistence/open-database.js', 'dist/src/adapters/persistence/typeorm-user.repository.js']) {
  if (!fs.existsSync(path.join(ROOT, file))) {
    console.error(`${file} is missing: run npm run build first.`);
    process.exit(2);
  }
}

const { loadConfig } = require(path.join(ROOT, 'dist/src/config/load-config.js'));
const { openDatabase } = require(path.join(ROOT, 'dist/src/adapters/persistence/open-database.js'));
const { TypeOrmTransaction } = require(path.join(ROOT, 'dist/src/adapters/persistence/typeorm-transaction.js'));
const { TypeOrmUserRepository } = require(path.join(ROOT, 'dist/src/adapters/persistence/typeorm-user.repository.js'));

/** The pages an administrator asks for; each is one `UserRepository.list` call. */
const QUERIES = [
  { name: 'newest first (default)', query: { sort: '-createdAt' } },
  { name: 'status=active, -createdAt', query: { status: 'active', sort: '-createdAt' } },
  { name: 'status=suspended, email', query: { status: 'suspended', sort: 'email' } },
  { name: 'status=locked, -lastLoginAt', query: { status: 'locked', sort: '-lastLoginAt' } },
  { name: 'emailVerified=false, createdAt', query: { emailVerified: false, sort: 'createdAt' } },
  { name: 'search=garcia, -createdAt', query: { search: 'garcia', sort: '-createdAt' } },
  {
    name: 'search=garcia + status=active, -createdAt, limit 50',
    query: { search: 'garcia', status: 'active', sort: '-createdAt', limit: 50 },
  },
  { name: 'search=olivia.smith, email', query: { search: 'olivia.smith', sort: 'email' } },
  {
    name: 'search=example.org + emailVerified=true, -lastLoginAt',
    query: { search: 'example.org', emailVerified: true, sort: '-lastLoginAt' },
  },
  { name: 'search="Mia Lee" (name), lastLoginAt', query: { search: 'Mia Lee', sort: 'lastLoginAt' } },
  { name: 'search=zz (no match), -createdAt', query: { search: 'zzqx', sort: '-createdAt' } },
  { name: 'page 10 of 100, -email', query: { sort: '-email', page: 10, limit: 100 } },
];

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

async function main() {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '_').toLowerCase();
  const database = await createBenchDatabase(`users_${stamp}`);
  log(`database ${database.name}`);
  let dataSource;
  try {
    const config = loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
    dataSource = await openDatabase(config); // runs every migration, as the service does at start
    const db = await database.open();
    try {
      const started = Date.now();
      await db.query(`INSERT INTO realms (id, name, created_at) VALUES ($1, 'Users benchmark', now()), ('bench-other', 'Other', now())`, [
        REALM,
      ]);
      await seedUsers(db, {
        realm: REALM,
        prefix: 'u',
        count: USERS,
        passwordHash: '$2b$12$benchbenchbenchbenchbeOx2Yk3o9J7cQk7w0y8W6q9T0f8N2lG',
      });
      // Another realm of a tenth the size, so the realm condition has something to exclude.
      await seedUsers(db, { realm: 'bench-other', prefix: 'd', count: Math.round(USERS / 10), passwordHash: 'x' });
      // MFA rows feed the EXISTS columns of every listed user: 1 in 10 with TOTP, 1 in 25 with a security key.
      await db.query(
        `INSERT INTO totp_credentials (user_id, secret_encrypted, confirmed_at, created_at)
         SELECT id, 'bench', now(), now() FROM users WHERE realm_id = $1 AND abs(hashtext(id::text)) % 10 = 0`,
        [REALM],
      );
      await db.query(
        `INSERT INTO webauthn_credentials (id, user_id, name, public_key, created_at)
         SELECT 'cred-' || id, id, 'Key', '\\x00'::bytea, now() FROM users WHERE realm_id = $1 AND abs(hashtext(id::text)) % 25 = 1`,
        [REALM],
      );
      // What autovacuum does on a live server: statistics for the planner, visibility map for index-only counts.
      await db.query('VACUUM ANALYZE users');
      await db.query('VACUUM ANALYZE totp_credentials');
      await db.query('VACUUM ANALYZE webauthn_credentials');
      const { rows } = await db.query('SELECT version() AS v, (SELECT count(*) FROM users WHERE realm_id = $1) AS n', [REALM]);
      log(`seeded ${rows[0].n} users in ${((Date.now() - started) / 1000).toFixed(1)} s on ${rows[0].v.split(',')[0]}`);
    } finally {
      await db.close();
    }

    // The production adapter, with its manager wrapped to record the statements it sends.
    const tx = new TypeOrmTransaction(dataSource);
    let recording = null;
    const manager = dataSource.manager;
    Object.defineProperty(tx, 'manager', {
      get: () => ({
        query: (sql, params) => {
          if (recording) recording.push({ sql, params: params ? [...params] : params });
          return manager.query(sql, params);
        },
      }),
    });
    // Statements sent as named prepared statements bypass the manager: record those too.
    const prepared = tx.prepared.bind(tx);
    tx.prepared = (name, sql, params) => {
      if (recording) recording.push({ sql, params: [...params] });
      return prepared(name, sql, params);
    };
    const users = new TypeOrmUserRepository(tx);
    const results = [];
    const explains = [];
    for (const { name, query } of QUERIES) {
      const input = { realmId: REALM, page: 1, limit: 20, now: new Date(), ...query };
      for (let i = 0; i < WARMUP; i += 1) await users.list(input);
      const times = [];
      let total = 0;
      let listed = 0;
      for (let i = 0; i < ITERATIONS; i += 1) {
        const t0 = process.hrtime.bigint();
        const page = await users.list(input);
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
        total = page.total;
        listed = page.users.length;
      }
      times.sort((a, b) => a - b);
      results.push({ name, total, listed, p50: percentile(times, 50), p99: percentile(times, 99), max: times[times.length - 1] });
      if (EXPLAIN) {
        recording = [];
        await users.list(input);
        const statements = recording;
        recording = null;
        for (const { sql, params } of statements) {
          const plan = await manager.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
          explains.push({ name, sql: sql.replace(/\s+/g, ' ').trim(), plan: plan.map((r) => r['QUERY PLAN']).join('\n') });
        }
      }
      log(`${name}: p50 ${percentile(times, 50).toFixed(2)} ms`);
    }

    const pad = (s, n) => String(s).padEnd(n);
    const lines = [
      `Users list on ${USERS} users (realm ${REALM}), ${ITERATIONS} calls per query after ${WARMUP} warm-up, UserRepository.list (one statement: count and page), client on loopback`,
      '',
      `${pad('query', 58)} ${pad('total', 7)} ${pad('rows', 5)} ${pad('p50 ms', 8)} ${pad('p99 ms', 8)} max ms`,
      ...results.map(
        (r) =>
          `${pad(r.name, 58)} ${pad(r.total, 7)} ${pad(r.listed, 5)} ${pad(r.p50.toFixed(2), 8)} ${pad(r.p99.toFixed(2), 8)} ${r.max.toFixed(2)}`,
      ),
    ];
    console.log(lines.join('\n'));
    if (EXPLAIN) {
      const dir = path.join(ROOT, 'bench', 'results');
      fs.mkdirSync(dir, { recursive: true });
      const file = path.join(dir, `admin-users-list-${stamp}.txt`);
      fs.writeFileSync(file, `${lines.join('\n')}\n\n${explains.map((e) => `### ${e.name}\n${e.sql}\n\n${e.plan}\n`).join('\n')}`);
      console.log(`\nEXPLAIN (ANALYZE, BUFFERS) of every statement: ${path.relative(ROOT, file)}`);
    }
    const slow = results.filter((r) => r.p99 >= 50);
    if (slow.length) console.log(`\nOver 50 ms at p99: ${slow.map((r) => r.name).join('; ')}`);
  } finally {
    if (dataSource?.isInitialized) await dataSource.destroy();
    if (!KEEP) await database.drop();
    else log(`kept database ${database.name}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
