// The benchmark's database: a fresh PostgreSQL database (DATABASE_URL) or an embedded PGlite data
// directory in a temp folder, and the SQL that seeds it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Creates the database the service will use; returns what the server and the seeder need. */
export async function createBenchDatabase(stamp) {
  const database = benchDatabase(`bench_${stamp}`);
  await database.create();
  return database;
}

/**
 * The database `name` on the DATABASE_URL server (created by `create()`), or an embedded PGlite
 * data directory in a temp folder when DATABASE_URL is unset.
 */
export function benchDatabase(name) {
  const adminUrl = process.env.DATABASE_URL;
  if (adminUrl) {
    const { Client } = require('pg');
    const onAdmin = async (sql) => {
      const admin = new Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        await admin.query(sql);
      } finally {
        await admin.end();
      }
    };
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return {
      kind: 'postgresql',
      name,
      serverEnv: { DATABASE_URL: url.toString() },
      url: url.toString(),
      create: () => onAdmin(`CREATE DATABASE ${name}`),
      async open() {
        const client = new Client({ connectionString: url.toString() });
        await client.connect();
        return {
          query: (text, params) => client.query(text, params),
          close: () => client.end(),
        };
      },
      drop: () => onAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
    };
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'identity-bench-'));
  return {
    kind: 'pglite',
    name: dataDir,
    serverEnv: { DATA_DIR: dataDir },
    url: null,
    create: async () => undefined,
    async open() {
      // The server must be stopped: PGlite is one process's database.
      const { PGlite } = await import('@electric-sql/pglite');
      // The same extensions as the service's driver (src/adapters/persistence/data-source.ts).
      const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
      const { btree_gin } = await import('@electric-sql/pglite/contrib/btree_gin');
      const db = await PGlite.create({ dataDir: path.join(dataDir, 'pglite'), extensions: { pg_trgm, btree_gin } });
      return {
        query: async (text, params) => {
          if (params && params.length) return db.query(text, params);
          const results = await db.exec(text);
          return results[results.length - 1] ?? { rows: [] };
        },
        close: () => db.close(),
      };
    },
    async drop() {
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The PostgreSQL server's version string, for the report. */
export async function serverVersion(db) {
  const { rows } = await db.query('SELECT version() AS v');
  return rows[0].v;
}

// Realistic-looking people: 40 × 40 names over a handful of domains.
export const FIRST_NAMES = [
  'Olivia',
  'Liam',
  'Emma',
  'Noah',
  'Amelia',
  'Oliver',
  'Sophia',
  'Elijah',
  'Mia',
  'Lucas',
  'Isabella',
  'Mateo',
  'Charlotte',
  'Levi',
  'Ava',
  'Leo',
  'Harper',
  'Ezra',
  'Luna',
  'James',
  'Camila',
  'Aiden',
  'Sofia',
  'Hugo',
  'Chloe',
  'Ines',
  'Yuki',
  'Arjun',
  'Fatima',
  'Mohamed',
  'Zoe',
  'Lea',
  'Jonas',
  'Elena',
  'Marco',
  'Anna',
  'Sven',
  'Priya',
  'Diego',
  'Nora',
];
export const LAST_NAMES = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Garcia',
  'Miller',
  'Davis',
  'Rodriguez',
  'Martinez',
  'Lopez',
  'Wilson',
  'Anderson',
  'Thomas',
  'Taylor',
  'Moore',
  'Martin',
  'Lee',
  'Perez',
  'Thompson',
  'White',
  'Harris',
  'Sanchez',
  'Clark',
  'Lewis',
  'Walker',
  'Young',
  'Allen',
  'King',
  'Wright',
  'Scott',
  'Nguyen',
  'Hill',
  'Muller',
  'Dubois',
  'Rossi',
  'Tanaka',
  'Kowalski',
  'Novak',
  'Silva',
];
export const DOMAINS = ['example.com', 'example.org', 'mail.example.net', 'corp.example.com', 'example.io', 'example.dev', 'example.co.uk'];

/** The email of seeded user i of a realm; the same formula as the seeding SQL. */
export function seededEmail(prefix, i) {
  const first = FIRST_NAMES[i % FIRST_NAMES.length].toLowerCase();
  const last = LAST_NAMES[Math.floor(i / FIRST_NAMES.length) % LAST_NAMES.length].toLowerCase();
  return `${first}.${last}.${prefix}${i}@${DOMAINS[i % DOMAINS.length]}`;
}

/** Status of seeded user i (same formula as the SQL): 1 in 50 suspended, 1 in 50 locked. */
export function seededStatus(i) {
  if (i % 50 === 17) return 'suspended';
  if (i % 50 === 33) return 'locked';
  return 'active';
}

/** The refresh token of seeded session j (the SQL stores only its hash, as the service does). */
export function seededRefreshToken(tag, j) {
  return `rt.${tag}.${String(j).padStart(9, '0')}.bench-seeded-refresh-token`;
}

export function tokenHash(token) {
  return createHash('sha256').update(token).digest('base64url');
}

/** A session of the seeded set is live when it is not revoked and its user is active. */
export function seededSessionIsLive(j, users) {
  return j % 10 !== 9 && seededStatus(j % users) === 'active';
}

// SQL fragments shared by the statements below.
const SQL_TOKEN_HASH = (expr) => `rtrim(translate(encode(sha256(convert_to(${expr}, 'UTF8')), 'base64'), '+/', '-_'), '=')`;
const SQL_UUID = (expr) => `overlay(overlay(md5(${expr}) placing '4' from 13) placing '8' from 17)::uuid`;

/**
 * Inserts `count` users of `realm` in one statement (ids, names, emails, statuses and dates
 * derived from the row number, so the benchmark knows every email without reading it back).
 */
export async function seedUsers(db, { realm, prefix, count, passwordHash }) {
  await db.query(
    `INSERT INTO users (id, realm_id, email, email_verified, password_hash, first_name, last_name, avatar, status,
                        locked_until, failed_login_count, roles, created_at, updated_at, last_login_at)
     SELECT ${SQL_UUID(`'user:' || $1 || ':' || i`)}, $1,
            lower(($4::text[])[1 + i % 40]) || '.' || lower(($5::text[])[1 + (i / 40) % 40]) || '.' || $2 || i || '@' || ($6::text[])[1 + i % 7],
            i % 10 <> 3, $3, ($4::text[])[1 + i % 40], ($5::text[])[1 + (i / 40) % 40],
            CASE WHEN i % 3 = 0 THEN 'https://cdn.example.com/avatars/' || i || '.png' END,
            CASE WHEN i % 50 = 17 THEN 'suspended' WHEN i % 50 = 33 THEN 'locked' ELSE 'active' END,
            CASE WHEN i % 50 = 33 THEN now() + interval '1 hour' END,
            CASE WHEN i % 50 = 33 THEN 10 ELSE 0 END,
            '{}',
            now() - make_interval(secs => (($7 - i) * 63072000.0 / $7)::float8),
            now() - make_interval(secs => (($7 - i) * 31536000.0 / $7)::float8),
            CASE WHEN i % 4 = 0 THEN NULL ELSE now() - make_interval(secs => ((i * 7919) % 2592000)) END
     FROM generate_series(0, $7 - 1) AS i`,
    [realm, prefix, passwordHash, FIRST_NAMES, LAST_NAMES, DOMAINS, count],
  );
}

/** An administrator of `realm` (role realm-admin) with one live session; returns its refresh token. */
export async function seedAdmin(db, { realm, email, passwordHash, tag, template, roles = ['realm-admin'] }) {
  const userId = crypto.randomUUID();
  const sessionId = crypto.randomUUID();
  const token = `rt.${tag}.admin.${realm}.bench-seeded-refresh-token`;
  await db.query(
    `INSERT INTO users (id, realm_id, email, email_verified, password_hash, first_name, last_name, status, roles,
                        created_at, updated_at)
     VALUES ($1, $2, $3, true, $4, 'Bench', 'Administrator', 'active', $5, now(), now())`,
    [userId, realm, email, passwordHash, roles],
  );
  await insertSessionFor(db, { realm, userId, sessionId, token, template });
  return token;
}

async function insertSessionFor(db, { realm, userId, sessionId, token, template }) {
  await db.query(
    `INSERT INTO sessions (id, realm_id, user_id, device_id, device_name, device_type, fingerprint, reference_fingerprint,
                           ip, user_agent, amr, status, created_at, last_active_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, '{pwd}', 'active', now(), now(), now() + interval '30 days')`,
    [
      sessionId,
      realm,
      userId,
      crypto.randomUUID(),
      template.device_name,
      template.device_type,
      template.fingerprint,
      JSON.stringify(template.reference_fingerprint),
      template.ip,
      template.user_agent,
    ],
  );
  await db.query(`INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES ($1, $2, now())`, [tokenHash(token), sessionId]);
}

/**
 * `count` sessions in `realm`, session j belonging to seeded user j mod `users`, each with one
 * unrotated refresh token whose plaintext is seededRefreshToken(tag, j). Sessions of users who are
 * not active, and one in ten of the rest, are revoked; the live ones carry the device (and the
 * reference fingerprint) of the benchmark's client, so refreshing them passes hijack detection.
 */
export async function seedSessions(db, { realm, users, count, tag, template }) {
  const batch = 25000;
  for (let from = 0; from < count; from += batch) {
    const to = Math.min(count, from + batch) - 1;
    await db.query(
      `INSERT INTO sessions (id, realm_id, user_id, device_id, device_name, device_type, fingerprint, reference_fingerprint,
                             ip, country, city, user_agent, amr, status, created_at, last_active_at, expires_at,
                             revoked_at, revoke_reason)
       SELECT ${SQL_UUID(`'session:' || $8 || ':' || j`)}, $1, ${SQL_UUID(`'user:' || $1 || ':' || (j % $2)`)},
              md5('device:' || j), $3, $4, $5, $6::jsonb, $7,
              CASE WHEN j % 5 = 0 THEN 'DE' WHEN j % 5 = 1 THEN 'US' ELSE NULL END,
              CASE WHEN j % 5 = 0 THEN 'Berlin' WHEN j % 5 = 1 THEN 'Boston' ELSE NULL END,
              $9, '{pwd}', 'active',
              now() - make_interval(secs => 3600 + (j * 37) % 518400),
              now() - make_interval(secs => (j * 37) % 3600),
              now() - make_interval(secs => 3600 + (j * 37) % 518400) + interval '30 days',
              CASE WHEN j % 10 = 9 OR (j % $2) % 50 IN (17, 33) THEN now() - interval '10 minutes' END,
              CASE WHEN j % 10 = 9 THEN 'logout' WHEN (j % $2) % 50 IN (17, 33) THEN 'suspended' END
       FROM generate_series($10::int, $11::int) AS j`,
      [
        realm,
        users,
        template.device_name,
        template.device_type,
        template.fingerprint,
        JSON.stringify(template.reference_fingerprint),
        template.ip,
        tag,
        template.user_agent,
        from,
        to,
      ],
    );
    await db.query(
      `INSERT INTO refresh_tokens (token_hash, session_id, created_at)
       SELECT ${SQL_TOKEN_HASH(`'rt.' || $1 || '.' || lpad(j::text, 9, '0') || '.bench-seeded-refresh-token'`)},
              ${SQL_UUID(`'session:' || $1 || ':' || j`)}, now() - interval '1 hour'
       FROM generate_series($2::int, $3::int) AS j`,
      [tag, from, to],
    );
  }
}

/** The seeded formula and the service must agree on token hashes: check one row. */
export async function checkSeededToken(db, tag) {
  const token = seededRefreshToken(tag, 0);
  const { rows } = await db.query('SELECT 1 FROM refresh_tokens WHERE token_hash = $1', [tokenHash(token)]);
  if (rows.length !== 1) throw new Error("seeded refresh token hashes do not match the benchmark's formula");
}
