// The scale benchmark's data, written by SQL into a migrated PostgreSQL database: users in three
// realms (80 % in the first), three sessions per user (one live, one revoked and one expired long
// enough ago to be purged), ten audit events per user (half older than the audit retention),
// webhook deliveries and sent emails. Every row is derived from its number, so the benchmark
// knows each user's email and each session's refresh token without reading them back.
import { FIRST_NAMES, seedAdmin } from './database.mjs';

export const REALMS = [
  { id: 'scale-a', name: 'Scale A', share: 0.8 },
  { id: 'scale-b', name: 'Scale B', share: 0.1 },
  { id: 'scale-c', name: 'Scale C', share: 0.1 },
];
export const BIG_REALM = REALMS[0].id;

// 100 family names: each is 1 % of a realm's users, so a name search has a known share.
export const FAMILY_NAMES = (
  'Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Lopez Wilson Anderson Thomas Taylor Moore Martin ' +
  'Perez Thompson White Harris Sanchez Clark Lewis Walker Young Allen King Wright Scott Nguyen Hill Muller Dubois Rossi Tanaka ' +
  'Kowalski Novak Silva Fischer Weber Schneider Becker Hoffmann Richter Klein Wolf Neumann Schwarz Zimmermann Braun Hartmann ' +
  'Lange Krause Lehmann Jensen Hansen Nielsen Larsen Andersen Pedersen Eriksson Lindberg Virtanen Korhonen Nakamura Suzuki ' +
  'Takahashi Watanabe Yamamoto Kobayashi Sato Ito Kato Yoshida Yamada Sasaki Matsumoto Inoue Kimura Shimizu Hayashi Ramirez ' +
  'Flores Rivera Gomez Diaz Reyes Morales Ortiz Gutierrez Chavez Ramos Ruiz Alvarez Castillo Jimenez Vasquez Romero Herrera'
).split(' ');
if (FAMILY_NAMES.length !== 100) throw new Error(`FAMILY_NAMES has ${FAMILY_NAMES.length} names, not 100`);
const DOMAINS = ['example.com', 'example.org', 'mail.example.net', 'corp.example.com', 'example.io', 'example.dev', 'example.co.uk'];
const EVENT_TYPES = [
  ['login.succeeded', 60],
  ['login.failed', 10],
  ['session.revoked', 10],
  ['mfa.succeeded', 8],
  ['user.registered', 5],
  ['password.changed', 3],
  ['user.locked', 2],
  ['email.verified', 2],
];
export const WEBHOOKS = 5;
const DAY = 86400;

/** Sizes derived from the number of users (the issue's 1,000,000 users scale every table). */
export function scalePlan(users) {
  let from = 0;
  const realms = REALMS.map((realm, k) => {
    const count = k === REALMS.length - 1 ? users - from : Math.round(users * realm.share);
    const r = { ...realm, from, count };
    from += count;
    return r;
  });
  return { users, realms, sessions: users * 3, events: users * 10, deliveries: Math.round(users / 2), emails: Math.round(users / 5) };
}

/** Ids are ordered (so that seeding appends to the primary keys) and carry the table in their first digit. */
const SQL_ID = (table, n) => `('${table}0000000-0000-4000-8000-' || lpad(to_hex(${n}), 12, '0'))::uuid`;
export const userId = (i) => `10000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;

/** User i (global number) of realm r (its own number k = i - r.from): the email the benchmark signs in with. */
export function scaleEmail(realm, k) {
  return `u${k}.${FIRST_NAMES[k % 40].toLowerCase()}.${FAMILY_NAMES[Math.floor(k / 40) % 100].toLowerCase()}@${DOMAINS[k % 7]}`;
}
export const scaleStatus = (k) => (k % 50 === 17 ? 'suspended' : k % 50 === 33 ? 'locked' : 'active');
/** The refresh token of live session i (the live session of user i); only its hash is stored. */
export const scaleRefreshToken = (i) => `rt.scale.${String(i).padStart(9, '0')}.bench-seeded-refresh-token`;

const SQL_TOKEN_HASH = (expr) => `rtrim(translate(encode(sha256(convert_to(${expr}, 'UTF8')), 'base64'), '+/', '-_'), '=')`;

/** Secondary indexes of the big tables are dropped before the bulk writes and built again after. */
const BIG_TABLES = ['users', 'sessions', 'refresh_tokens', 'audit_events', 'webhook_deliveries', 'email_outbox'];

async function timed(log, what, fn) {
  const t0 = Date.now();
  await fn();
  log(`  ${what}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/** Runs `statement(from, to)` over 0..count-1 in slices, so no single statement holds gigabytes of WAL. */
async function inSlices(count, size, statement) {
  for (let from = 0; from < count; from += size) await statement(from, Math.min(count, from + size) - 1);
}

export async function seedScale(db, { users, passwordHash, template, log }) {
  const plan = scalePlan(users);
  const t0 = Date.now();
  await db.query(`SET synchronous_commit = off`);
  await db.query(`SET maintenance_work_mem = '256MB'`);
  // No per-row trigger or foreign-key check while bulk loading: the kept counts are set from the data below.
  await db.query(`SET session_replication_role = replica`);
  const { rows: indexes } = await db.query(
    `SELECT i.indexname, i.indexdef FROM pg_indexes i
     WHERE i.schemaname = 'public' AND i.tablename = ANY ($1)
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    [BIG_TABLES],
  );
  for (const { indexname } of indexes) await db.query(`DROP INDEX ${indexname}`);

  await db.query(
    `INSERT INTO realms (id, name, created_at) SELECT * FROM unnest($1::text[], $2::text[], array_fill(now(), ARRAY[$3::int]))`,
    [plan.realms.map((r) => r.id), plan.realms.map((r) => r.name), plan.realms.length],
  );
  await timed(log, `${users} users`, async () => {
    for (const r of plan.realms) {
      await inSlices(r.count, 500000, (from, to) =>
        db.query(
          `INSERT INTO users (id, realm_id, email, email_verified, password_hash, first_name, last_name, status,
                              locked_until, failed_login_count, roles, created_at, updated_at, last_login_at)
           SELECT ${SQL_ID('1', `$2 + k`)}, $1,
                  'u' || k || '.' || lower(($4::text[])[1 + k % 40]) || '.' || lower(($5::text[])[1 + (k / 40) % 100]) || '@' || ($6::text[])[1 + k % 7],
                  k % 10 <> 3, $3, ($4::text[])[1 + k % 40], ($5::text[])[1 + (k / 40) % 100],
                  CASE WHEN k % 50 = 17 THEN 'suspended' WHEN k % 50 = 33 THEN 'locked' ELSE 'active' END,
                  CASE WHEN k % 50 = 33 THEN now() + interval '1 hour' END,
                  CASE WHEN k % 50 = 33 THEN 10 ELSE 0 END,
                  '{}',
                  now() - make_interval(secs => (($7 - k) * 63072000.0 / $7)::float8),
                  now() - make_interval(secs => (($7 - k) * 31536000.0 / $7)::float8),
                  CASE WHEN k % 4 = 0 THEN NULL ELSE now() - make_interval(secs => ((k::bigint * 7919) % 2592000)) END
           FROM generate_series($8::int, $9::int) AS k`,
          [r.id, r.from, passwordHash, FIRST_NAMES, FAMILY_NAMES, DOMAINS, r.count, from, to],
        ),
      );
    }
  });

  // Session s: user s mod N. s < N: live (revoked when its user is suspended); N ≤ s < 2N:
  // revoked 40–70 days ago; 2N ≤ s: ended by their lifetime 40–70 days ago and closed then by
  // housekeeping (marked revoked at their end, reason "expired"). Both of the latter are past the
  // 30-day retention. Realm of user i: the realm whose range holds i.
  const realmOf = (expr) =>
    `CASE ${plan.realms
      .slice(0, -1)
      .map((r) => `WHEN ${expr} < ${r.from + r.count} THEN '${r.id}'`)
      .join(' ')} ELSE '${plan.realms[plan.realms.length - 1].id}' END`;
  const localOf = (expr) =>
    `(${expr} - CASE ${plan.realms
      .slice(0, -1)
      .map((r) => `WHEN ${expr} < ${r.from + r.count} THEN ${r.from}`)
      .join(' ')} ELSE ${plan.realms[plan.realms.length - 1].from} END)`;
  await timed(log, `${plan.sessions} sessions and refresh tokens`, () =>
    inSlices(plan.sessions, 250000, async (from, to) => {
      await db.query(
        `INSERT INTO sessions (id, realm_id, user_id, device_id, device_name, device_type, fingerprint, reference_fingerprint,
                               ip, country, city, user_agent, amr, status, created_at, last_active_at, expires_at, revoked_at, revoke_reason)
         SELECT ${SQL_ID('2', 's')}, ${realmOf('u')}, ${SQL_ID('1', 'u')},
                md5('device:' || s), $2, $3, $4, $5::jsonb, $6,
                CASE WHEN s % 5 = 0 THEN 'DE' WHEN s % 5 = 1 THEN 'US' END,
                CASE WHEN s % 5 = 0 THEN 'Berlin' WHEN s % 5 = 1 THEN 'Boston' END,
                $7, '{pwd}', 'active', created, active, created + interval '30 days',
                CASE WHEN s < $1 THEN CASE WHEN ${localOf('u')} % 50 = 17 THEN now() - interval '10 minutes' END
                     WHEN s < 2 * $1 THEN active ELSE created + interval '30 days' END,
                CASE WHEN s < $1 THEN CASE WHEN ${localOf('u')} % 50 = 17 THEN 'suspended' END
                     WHEN s < 2 * $1 THEN 'logout' ELSE 'expired' END
         FROM generate_series($8::int, $9::int) AS s,
              LATERAL (SELECT s % $1 AS u) uu,
              LATERAL (SELECT CASE WHEN s < $1 THEN now() - make_interval(secs => 3600 + (s * 37) % 518400)
                                   WHEN s < 2 * $1 THEN now() - make_interval(secs => 70 * ${DAY} - (s * 37) % (30 * ${DAY}))
                                   ELSE now() - make_interval(secs => 100 * ${DAY} - (s * 37) % (30 * ${DAY})) END AS created) c,
              LATERAL (SELECT CASE WHEN s < $1 THEN now() - make_interval(secs => (s * 37) % 3600)
                                   WHEN s < 2 * $1 THEN c.created + interval '1 hour'
                                   ELSE c.created + interval '29 days' END AS active) a`,
        [
          users,
          template.device_name,
          template.device_type,
          template.fingerprint,
          JSON.stringify(template.reference_fingerprint),
          template.ip,
          template.user_agent,
          from,
          to,
        ],
      );
      await db.query(
        `INSERT INTO refresh_tokens (token_hash, session_id, created_at)
         SELECT CASE WHEN s < $1 THEN ${SQL_TOKEN_HASH(`'rt.scale.' || lpad(s::text, 9, '0') || '.bench-seeded-refresh-token'`)}
                     ELSE md5('dead:' || s) END,
                ${SQL_ID('2', 's')}, now() - interval '1 hour'
         FROM generate_series($2::int, $3::int) AS s`,
        [users, from, to],
      );
    }),
  );

  // Events over the last two years (the retention is one): event e belongs to user (e * 104729) mod N,
  // so that any stretch of time has events of every realm.
  const types = EVENT_TYPES.flatMap(([type, share]) => Array(share).fill(type));
  await timed(log, `${plan.events} audit events`, () =>
    inSlices(plan.events, 1000000, (from, to) =>
      db.query(
        `INSERT INTO audit_events (id, realm_id, type, user_id, actor_id, session_id, ip, at, details)
         SELECT ${SQL_ID('3', 'e')}, ${realmOf('u')}, ($2::text[])[1 + (e * 13) % 100], ${SQL_ID('1', 'u')}, NULL, NULL, '203.0.113.' || (e % 250),
                now() - make_interval(secs => (($3 - e) * 730.0 * ${DAY} / $3)::float8), '{}'
         FROM generate_series($4::bigint, $5::bigint) AS e, LATERAL (SELECT (e * 104729) % $1 AS u) uu`,
        [users, types, plan.events, from, to],
      ),
    ),
  );

  await timed(log, `${plan.emails} sent emails`, () =>
    db.query(
      `INSERT INTO email_outbox (id, realm_id, recipient, subject, text_body, html_body, status, attempts, next_attempt_at, created_at, sent_at)
       SELECT ${SQL_ID('6', 'm')}, $1, 'u' || m || '@example.com', 'Verify your email', '', '', 'sent', 1, at, at, at
       FROM generate_series(0, $2 - 1) AS m, LATERAL (SELECT now() - make_interval(secs => (($2 - m) * 30.0 * ${DAY} / $2)::float8) AS at) a`,
      [plan.realms[0].id, plan.emails],
    ),
  );

  await timed(log, `${indexes.length} secondary indexes`, async () => {
    for (const { indexdef } of indexes) await db.query(indexdef);
  });
  await db.query(`SET session_replication_role = origin`);
  await db.query(`RESET synchronous_commit`);
  // Kept counts, written by triggers during normal operation, computed once for the bulk load.
  const counted = await db.query(`SELECT to_regclass('realm_user_counts') IS NOT NULL AS kept`);
  if (counted.rows[0].kept) {
    for (const [counts, table, keys, where] of [
      ['realm_user_counts', 'users', 'realm_id', ''],
      ['realm_session_counts', 'sessions', 'realm_id', 'WHERE revoked_at IS NULL'],
      ['audit_event_counts', 'audit_events', 'realm_id, type', ''],
    ]) {
      await db.query(`DELETE FROM ${counts}`);
      await db.query(`INSERT INTO ${counts} (${keys}, slot, n) SELECT ${keys}, 0, count(*) FROM ${table} ${where} GROUP BY ${keys}`);
    }
  }
  // One administrator per realm with a live session, for the admin lists.
  const admins = {};
  for (const r of plan.realms) {
    admins[r.id] = await seedAdmin(db, {
      realm: r.id,
      email: `admin@${r.id}.example.com`,
      passwordHash,
      tag: 'scale',
      template,
      roles: ['realm-admin'],
    });
  }
  await timed(log, 'VACUUM ANALYZE', () => db.query('VACUUM ANALYZE'));
  log(`seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return { plan, admins };
}

/**
 * Deliveries of the big realm's webhooks (made through the API, which encrypts their secrets)
 * over the last 30 days, 1 in 100 failed.
 */
export async function seedDeliveries(db, { users, webhookIds, log }) {
  const plan = scalePlan(users);
  await timed(log, `${plan.deliveries} webhook deliveries`, async () => {
    await db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, realm_id, event_id, type, status, attempts, next_attempt_at, last_status_code,
                                       last_attempt_at, created_at, delivered_at)
       SELECT ${SQL_ID('5', 'd')}, ($3::uuid[])[1 + d % cardinality($3::uuid[])], $1, ${SQL_ID('3', 'd')}, 'login.succeeded',
              CASE WHEN d % 100 = 7 THEN 'failed' ELSE 'delivered' END, 1, at, CASE WHEN d % 100 = 7 THEN 500 ELSE 200 END, at, at,
              CASE WHEN d % 100 = 7 THEN NULL ELSE at END
       FROM generate_series(0, $2 - 1) AS d, LATERAL (SELECT now() - make_interval(secs => (($2 - d) * 30.0 * ${DAY} / $2)::float8) AS at) a`,
      [plan.realms[0].id, plan.deliveries, webhookIds],
    );
    await db.query('VACUUM ANALYZE webhook_deliveries');
  });
}
