#!/usr/bin/env node
// The members list of a 100,000-member organization (GET /v1/admin/organizations/:id/members and
// the org-admins' GET /api/v1/auth/organizations/:id/members): seeds a fresh PostgreSQL database by
// SQL, then times the production repository (dist/) from 4 concurrent connections for pages near
// the start, the middle and the end, and prints p50/p99 per page with the exact total, and EXPLAIN
// ANALYZE of the statement. Not a test. `npm run bench:scale` runs it too (its
// `organization-members` measurement, `measureOrganizationMembers` below).
//
//   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/organization-members-list.mjs
//
// Options: --members 100000  --iterations 400  --warmup 40  --connections 4  --keep (keep the database)
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase, seedUsers } from './lib/database.mjs';
import { option } from './lib/options.mjs';

const require = createRequire(import.meta.url);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REALM = 'bench-orgs';
const ORGANIZATION = '0192f1c4-7a2b-4c3d-8e4f-5a6b7c8d9e0f';
const BUILT = ['dist/src/adapters/persistence/open-database.js', 'dist/src/adapters/persistence/typeorm-organization-member.repository.js'];

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Seeds a database of its own on DATABASE_URL's server with an organization of `members` members,
 * times the repository's list for five pages from `connections` concurrent callers, explains the
 * middle page's statement, and drops the database (unless `keep`). Returns the figures and the
 * printable `text`; throws if a total is not exactly `members`.
 */
export async function measureOrganizationMembers({
  members: MEMBERS = 100000,
  iterations: ITERATIONS = 400,
  warmup: WARMUP = 40,
  connections: CONNECTIONS = 4,
  keep: KEEP = false,
  log = (line) => process.stderr.write(`${line}\n`),
} = {}) {
  if (!process.env.DATABASE_URL) {
    throw new Error('DATABASE_URL must point at a PostgreSQL server (a database bench_members_<stamp> is created there and dropped).');
  }
  for (const file of BUILT) if (!fs.existsSync(path.join(ROOT, file))) throw new Error(`${file} is missing: run npm run build first.`);
  const { loadConfig } = require(path.join(ROOT, 'dist/src/config/load-config.js'));
  const { openDatabase } = require(path.join(ROOT, 'dist/src/adapters/persistence/open-database.js'));
  const { TypeOrmTransaction } = require(path.join(ROOT, 'dist/src/adapters/persistence/typeorm-transaction.js'));
  const { TypeOrmOrganizationMemberRepository } = require(
    path.join(ROOT, 'dist/src/adapters/persistence/typeorm-organization-member.repository.js'),
  );
  const last = Math.ceil(MEMBERS / 20);
  /** The pages asked for: `[name, page, limit]`. */
  const PAGES = [
    ['first page, limit 20', 1, 20],
    ['page 2, limit 100', 2, 100],
    ['page 50, limit 20 (offset 980)', 50, 20],
    [`middle page ${Math.ceil(last / 2)}, limit 20`, Math.ceil(last / 2), 20],
    [`last page ${last}, limit 20`, last, 20],
  ];
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '_').toLowerCase();
  const database = await createBenchDatabase(`members_${stamp}`);
  log(`database ${database.name}`);
  let dataSource;
  try {
    const config = loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
    dataSource = await openDatabase(config); // runs every migration, as the service does at start
    const db = await database.open();
    try {
      const started = Date.now();
      await db.query(`INSERT INTO realms (id, name, created_at) VALUES ($1, 'Organizations benchmark', now())`, [REALM]);
      await seedUsers(db, { realm: REALM, prefix: 'm', count: MEMBERS + 1000, passwordHash: 'x' });
      await db.query(
        `INSERT INTO organizations (id, realm_id, name, slug, domains, created_at, updated_at) VALUES ($1, $2, 'Big', 'big', '{}', now(), now()),
           ('0192f1c4-7a2b-4c3d-8e4f-000000000001', $2, 'Small', 'small', '{}', now(), now())`,
        [ORGANIZATION, REALM],
      );
      // One statement: the member count is kept by the trigger. 1 in 50 an org-admin, 1 in 5 with a realm role.
      await db.query(
        `INSERT INTO organization_members (organization_id, user_id, realm_id, roles, joined_at)
         SELECT $1, id, realm_id,
                CASE WHEN n % 50 = 0 THEN ARRAY['org-admin'] WHEN n % 5 = 0 THEN ARRAY['billing'] ELSE '{}' END,
                now() - make_interval(secs => n)
         FROM (SELECT id, realm_id, row_number() OVER (ORDER BY id) AS n FROM users WHERE realm_id = $2) u WHERE n <= $3`,
        [ORGANIZATION, REALM, MEMBERS],
      );
      // Another organization sharing the members' index, so the organization condition has something to exclude.
      await db.query(
        `INSERT INTO organization_members (organization_id, user_id, realm_id, roles, joined_at)
         SELECT '0192f1c4-7a2b-4c3d-8e4f-000000000001', id, realm_id, '{}', now() FROM users WHERE realm_id = $1 LIMIT 1000`,
        [REALM],
      );
      await db.query('VACUUM ANALYZE organization_members');
      await db.query('VACUUM ANALYZE users');
      await db.query('VACUUM ANALYZE organizations');
      const { rows } = await db.query('SELECT version() AS v, member_count AS n FROM organizations WHERE id = $1', [ORGANIZATION]);
      log(`seeded ${rows[0].n} members in ${((Date.now() - started) / 1000).toFixed(1)} s on ${rows[0].v.split(',')[0]}`);
    } finally {
      await db.close();
    }

    const tx = new TypeOrmTransaction(dataSource);
    const members = new TypeOrmOrganizationMemberRepository(tx);
    const results = [];
    for (const [name, page, limit] of PAGES) {
      const run = async (count, times) => {
        const worker = async () => {
          for (let i = 0; i < count / CONNECTIONS; i += 1) {
            const t0 = process.hrtime.bigint();
            const answer = await members.list(ORGANIZATION, page, limit);
            times?.push(Number(process.hrtime.bigint() - t0) / 1e6);
            if (answer.total !== MEMBERS) throw new Error(`total ${answer.total}, expected ${MEMBERS}`);
          }
        };
        await Promise.all(Array.from({ length: CONNECTIONS }, worker));
      };
      await run(WARMUP, null);
      const times = [];
      const t0 = Date.now();
      await run(ITERATIONS, times);
      const seconds = (Date.now() - t0) / 1000;
      const listed = (await members.list(ORGANIZATION, page, limit)).members.length;
      times.sort((a, b) => a - b);
      results.push({
        name,
        listed,
        p50: percentile(times, 50),
        p99: percentile(times, 99),
        max: times[times.length - 1],
        rate: times.length / seconds,
      });
      log(`${name}: p50 ${percentile(times, 50).toFixed(2)} ms`);
    }
    // The statement the repository sends, recorded from the transaction, explained for the middle page (the deepest).
    let recorded = null;
    const prepared = tx.prepared.bind(tx);
    tx.prepared = (name, sql, params) => {
      recorded = { sql, params: [...params] };
      return prepared(name, sql, params);
    };
    await members.list(ORGANIZATION, Math.ceil(last / 2), 20);
    const plan = await dataSource.manager.query(`EXPLAIN (ANALYZE, BUFFERS) ${recorded.sql}`, recorded.params);

    const pad = (s, n) => String(s).padEnd(n);
    const text = [
      `Members list of an organization of ${MEMBERS} members, ${CONNECTIONS} connections, ${ITERATIONS} calls per page after ${WARMUP} warm-up,`,
      `OrganizationMemberRepository.list (one statement: the kept count and the page), total ${MEMBERS} exact on every call, client on loopback`,
      '',
      `${pad('page', 36)} ${pad('rows', 5)} ${pad('p50 ms', 8)} ${pad('p99 ms', 8)} ${pad('max ms', 8)} calls/s`,
      ...results.map(
        (r) =>
          `${pad(r.name, 36)} ${pad(r.listed, 5)} ${pad(r.p50.toFixed(2), 8)} ${pad(r.p99.toFixed(2), 8)} ${pad(r.max.toFixed(2), 8)} ${r.rate.toFixed(0)}`,
      ),
      '',
      'EXPLAIN (ANALYZE, BUFFERS) of the middle page:',
      ...plan.map((r) => r['QUERY PLAN']),
    ].join('\n');
    const slow = results.filter((r) => r.p99 > 50).map((r) => r.name);
    return { members: MEMBERS, connections: CONNECTIONS, iterations: ITERATIONS, results, slow, plan, text };
  } finally {
    if (dataSource?.isInitialized) await dataSource.destroy();
    if (!KEEP) await database.drop();
    else log(`kept database ${database.name}`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  measureOrganizationMembers({
    members: Number(option('members', 100000)),
    iterations: Number(option('iterations', 400)),
    warmup: Number(option('warmup', 40)),
    connections: Number(option('connections', 4)),
    keep: Boolean(option('keep', false)),
  })
    .then(({ text, slow }) => {
      console.log(text);
      if (slow.length) console.log(`\nOver 50 ms at p99: ${slow.join('; ')}`);
    })
    .catch((error) => {
      console.error(error.message ?? error);
      process.exit(error.message?.startsWith('DATABASE_URL') || error.message?.includes('npm run build') ? 2 : 1);
    });
}
