import { SessionLifetime } from '../../domain/session/session';
import { Injectable } from '@nestjs/common';
import { FailedLoginOutcome, SignInRefusedError, UserQuery, UserRepository } from '../../application/ports/user.repository';
import { DomainError } from '../../domain/errors';
import { Email } from '../../domain/user/email';
import { LockoutPolicy, User, UserSummary } from '../../domain/user/user';
import { sqlState, UNIQUE_VIOLATION } from './database-errors';
import { UserRecord } from './records/user.record';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';
import { LIVE, sessionById } from './session.mapper';
import { toUser, toUserRecord, toUserSummary, USER_COLUMNS, USER_SUMMARY_COLUMNS, UserRow, UserSummaryRow } from './user.mapper';

// Each order is an index read forwards or backwards (migration 1764121000000): the tie-breaker
// runs in the same direction as the key, and never-logged-in users sort as the oldest logins.
// `key` is the column the order reads besides the id.
const SORTS: Record<UserQuery['sort'], { key: string; order: string }> = {
  createdAt: { key: 'created_at', order: 'u.created_at ASC, u.id ASC' },
  '-createdAt': { key: 'created_at', order: 'u.created_at DESC, u.id DESC' },
  email: { key: 'email', order: 'u.email ASC' },
  '-email': { key: 'email', order: 'u.email DESC' },
  lastLoginAt: { key: 'last_login_at', order: 'u.last_login_at ASC NULLS FIRST, u.id ASC' },
  '-lastLoginAt': { key: 'last_login_at', order: 'u.last_login_at DESC NULLS LAST, u.id DESC' },
};

const RECORD_LOGIN = `UPDATE users SET last_login_at = $3, updated_at = $3, failed_login_count = 0, status = 'active', locked_until = NULL
  WHERE realm_id = $1 AND id = $2
    AND (status = 'active' OR (status = 'locked' AND locked_until IS NOT NULL AND locked_until <= $3))`;

/** The user of realm $1 with the (normalised) email $2. */
export const USER_BY_EMAIL = `SELECT ${USER_COLUMNS} FROM users u WHERE u.realm_id = $1 AND u.email = $2`;

/**
 * A user with the session $1 when it is live ($2 realm, $3 user; $4 now, $5 idle and $6 absolute
 * lifetime in seconds). The session is read by its primary key alone (`sessionById`).
 */
export const USER_WITH_LIVE_SESSION = `SELECT (SELECT row_to_json(y) FROM (SELECT ${USER_COLUMNS}) y) AS "user"
  FROM ${sessionById('$1')} s JOIN users u ON u.id = s.user_id
  WHERE s.realm_id = $2 AND s.user_id = $3 AND ${LIVE('$4', '$5', '$6')}`;

@Injectable()
export class TypeOrmUserRepository implements UserRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async findById(realmId: string, id: string): Promise<User | null> {
    if (!isUuid(id)) return null;
    const rows = await this.tx.prepared<UserRow>('user-by-id', `SELECT ${USER_COLUMNS} FROM users u WHERE u.realm_id = $1 AND u.id = $2`, [
      realmId,
      id,
    ]);
    return rows[0] ? toUser(rows[0]) : null;
  }

  async findWithLiveSession(
    realmId: string,
    userId: string,
    sessionId: string,
    now: Date,
    lifetime: SessionLifetime,
  ): Promise<User | null> {
    if (!isUuid(userId) || !isUuid(sessionId)) return null;
    // Every authenticated request runs this: the user comes back as one JSON column, which `pg`
    // decodes with one JSON.parse instead of describing and converting seventeen columns.
    const rows = await this.tx.prepared<{ user: UserRow }>('user-with-live-session', USER_WITH_LIVE_SESSION, [
      sessionId,
      realmId,
      userId,
      now,
      lifetime.idleTimeoutSeconds,
      lifetime.maxLifetimeSeconds,
    ]);
    return rows[0] ? toUser(rows[0].user) : null;
  }

  async findByIdForUpdate(realmId: string, id: string): Promise<User | null> {
    if (!isUuid(id)) return null;
    const rows: UserRow[] = await this.tx.manager.query(
      `SELECT ${USER_COLUMNS} FROM users u WHERE u.realm_id = $1 AND u.id = $2 FOR UPDATE OF u`,
      [realmId, id],
    );
    return rows[0] ? toUser(rows[0]) : null;
  }

  async findByEmail(realmId: string, email: string): Promise<User | null> {
    const rows = await this.tx.prepared<UserRow>('user-by-email', USER_BY_EMAIL, [realmId, email]);
    return rows[0] ? toUser(rows[0]) : null;
  }

  async insert(user: User): Promise<void> {
    try {
      await this.tx.manager.getRepository(UserRecord).insert(toUserRecord(user));
    } catch (error) {
      if (sqlState(error) === UNIQUE_VIOLATION) {
        throw new DomainError('EMAIL_ALREADY_REGISTERED', 'This email is already registered');
      }
      throw error;
    }
  }

  async save(user: User): Promise<void> {
    const { id, realmId, createdAt: _createdAt, ...fields } = toUserRecord(user);
    try {
      await this.tx.manager.getRepository(UserRecord).update({ id, realmId }, fields);
    } catch (error) {
      if (sqlState(error) === UNIQUE_VIOLATION) {
        throw new DomainError('EMAIL_ALREADY_REGISTERED', 'This email is already registered');
      }
      throw error;
    }
  }

  async recordFailedLogin(realmId: string, userId: string, policy: LockoutPolicy, now: Date): Promise<FailedLoginOutcome | null> {
    // One statement, so concurrent failures serialise on the row lock and the count is exact.
    // An expired lock starts counting again from zero (lock expiry resets the counter).
    const lockedUntil = policy.durationSeconds > 0 ? new Date(now.getTime() + policy.durationSeconds * 1000) : null;
    const rows: { failures: number; status: string }[] = await this.tx.manager.query(
      `UPDATE users SET
         failed_login_count = (CASE WHEN status = 'locked' THEN 0 ELSE failed_login_count END) + 1,
         status = CASE WHEN (CASE WHEN status = 'locked' THEN 0 ELSE failed_login_count END) + 1 >= $3
                       THEN 'locked' ELSE 'active' END,
         locked_until = CASE WHEN (CASE WHEN status = 'locked' THEN 0 ELSE failed_login_count END) + 1 >= $3
                             THEN $4::timestamptz ELSE NULL END,
         updated_at = $5
       WHERE realm_id = $1 AND id = $2
         AND (status = 'active' OR (status = 'locked' AND locked_until IS NOT NULL AND locked_until <= $5))
       RETURNING failed_login_count AS failures, status`,
      [realmId, userId, policy.maxFailures, lockedUntil, now],
    );
    const row = unwrapRows(rows)[0];
    if (!row) return null;
    return { failures: Number(row.failures), lockedNow: row.status === 'locked' };
  }

  /** Batchable (`TypeOrmTransaction.write`). */
  async recordSuccessfulLogin(realmId: string, userId: string, now: Date, provenPasswordHash?: string): Promise<void> {
    await this.tx.write(
      // The account may have been locked (by concurrent wrong passwords, or an administrator),
      // suspended, or lost the password just checked while it was being checked: then nothing of
      // the sign-in is stored. A lock whose time has passed is lifted.
      provenPasswordHash === undefined ? RECORD_LOGIN : `${RECORD_LOGIN} AND password_hash = $4`,
      provenPasswordHash === undefined ? [realmId, userId, now] : [realmId, userId, now, provenPasswordHash],
      () => new SignInRefusedError(),
    );
  }

  async delete(realmId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const result = await this.tx.manager.getRepository(UserRecord).delete({ realmId, id });
    return (result.affected ?? 0) > 0;
  }

  async list(query: UserQuery): Promise<{ users: UserSummary[]; total: number }> {
    const { whereSql, params } = userFilter(query);
    const { key, order } = SORTS[query.sort];
    params.push(query.limit, (query.page - 1) * query.limit);
    const [limit, offset] = [`$${params.length - 1}`, `$${params.length}`];
    // One round trip: the count and the page. The page is picked narrow (the sort keys and each
    // row's address, `ctid`) and only its rows are then read whole, by address within the same
    // snapshot: a sort over every match carries no user row, and the per-user MFA lookups run for
    // the page's rows only. It comes back as one JSON array (one value to decode, not 13 per user).
    const page = (rows: string, address: string): string =>
      `(SELECT json_agg((SELECT row_to_json(r) FROM (SELECT ${USER_SUMMARY_COLUMNS}) r) ORDER BY ${order})
        FROM users u WHERE u.ctid = ANY (ARRAY(SELECT ${address} FROM ${rows} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset})))`;
    // With a search, the matches are found once (through the trigram indexes when the term is
    // rare) and kept with their sort key for both; that plan stays right for every term when
    // PostgreSQL reuses it. Without one, the count reads only an index (or, for the whole realm,
    // the kept count) and the page stops after `limit` entries of the sort's index.
    const [row] = await this.tx.preparedText<{ total: string; users: UserSummaryRow[] | null }>(
      query.search
        ? `WITH matched AS MATERIALIZED (
             SELECT u.ctid AS address, u.id, u.${key} FROM users u WHERE ${whereSql}
           )
           SELECT (SELECT count(*) FROM matched) AS total, ${page('matched u', 'u.address')} AS users`
        : `SELECT ${filtered(query) ? `(SELECT count(*) FROM users u WHERE ${whereSql})` : KEPT_USER_COUNT} AS total,
                  ${page(`users u WHERE ${whereSql}`, 'u.ctid')} AS users`,
      params,
    );
    return { users: (row.users ?? []).map(toUserSummary), total: Number(row.total) };
  }

  async existsWithRole(realmId: string, role: string): Promise<boolean> {
    const rows: unknown[] = await this.tx.manager.query(`SELECT 1 FROM users WHERE realm_id = $1 AND roles @> ARRAY[$2]::text[] LIMIT 1`, [
      realmId,
      role,
    ]);
    return rows.length > 0;
  }

  async idsWithRole(realmId: string, role: string): Promise<string[]> {
    const rows: { id: string }[] = await this.tx.manager.query(`SELECT id FROM users WHERE realm_id = $1 AND roles @> ARRAY[$2]::text[]`, [
      realmId,
      role,
    ]);
    return rows.map((row) => row.id);
  }
}

/**
 * The realm's number of users, kept by triggers in the same transactions that add and remove
 * users (migration 1764262000000): exact, and a sum over at most 16 rows instead of a count over
 * every user of the realm.
 */
const KEPT_USER_COUNT = `(SELECT coalesce(sum(c.n), 0) FROM realm_user_counts c WHERE c.realm_id = $1)`;

/** Whether the query narrows the realm's users (else its total is the realm's kept count). */
function filtered(query: UserQuery): boolean {
  return Boolean(query.search) || query.status !== undefined || query.emailVerified !== undefined;
}

/** The conditions of a users query, `u` being the users table, and their parameters ($1: the realm). */
function userFilter(query: UserQuery): { whereSql: string; params: unknown[] } {
  const where = ['u.realm_id = $1'];
  const params: unknown[] = [query.realmId];
  if (query.search) {
    const pattern = (term: string): string => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    // Stored lower-case keys (realm-scoped trigram indexes on both): emails are kept normalised
    // as Email.normalise does, so the term is normalised the same way for them; `name_search`
    // is lower(first_name || ' ' || last_name), compared with lower(term) from the same function.
    // Whole patterns as parameters: nothing is concatenated per row of a reused plan.
    params.push(pattern(Email.normalise(query.search)), pattern(query.search));
    where.push(`(u.email LIKE $${params.length - 1} OR u.name_search LIKE lower($${params.length}))`);
  }
  if (query.status === 'suspended') where.push(`u.status = 'suspended'`);
  else if (query.status) {
    // A lock whose time has passed reads as active (User.statusAt).
    params.push(query.now);
    const now = `$${params.length}`;
    if (query.status === 'locked') where.push(`u.status = 'locked' AND (u.locked_until IS NULL OR u.locked_until > ${now})`);
    else where.push(`(u.status = 'active' OR (u.status = 'locked' AND u.locked_until <= ${now}))`);
  }
  if (query.emailVerified !== undefined) {
    params.push(query.emailVerified);
    where.push(`u.email_verified = $${params.length}`);
  }
  return { whereSql: where.join(' AND '), params };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids from URLs are untrusted: anything that is not a UUID cannot exist (and must not reach a uuid cast). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
