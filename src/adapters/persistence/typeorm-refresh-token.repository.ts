import { Injectable } from '@nestjs/common';
import { RefreshTokenContext, RefreshTokenRepository } from '../../application/ports/refresh-token.repository';
import { Session } from '../../domain/session/session';
import { RefreshTokenRecord } from './records/refresh-token.record';
import { SessionRecord } from './records/session.record';
import { SESSION_COLUMNS, toSession } from './session.mapper';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';
import { toUser, USER_COLUMNS, UserRow } from './user.mapper';

@Injectable()
export class TypeOrmRefreshTokenRepository implements RefreshTokenRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  /** Batchable (`TypeOrmTransaction.write`). */
  async insert(tokenHash: string, sessionId: string, now: Date): Promise<void> {
    await this.tx.write(`INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES ($1, $2, $3)`, [tokenHash, sessionId, now]);
  }

  async findWithSession(tokenHash: string): Promise<RefreshTokenContext | null> {
    // Token, session and user in one round trip: refresh is a hot path.
    const rows = await this.tx.prepared<{ token: RefreshTokenRecord; session: SessionRecord; user: UserRow }>(
      'refresh-token-with-session',
      `SELECT json_build_object('tokenHash', rt.token_hash, 'sessionId', rt.session_id,
                'createdAt', rt.created_at, 'rotatedAt', rt.rotated_at) AS "token",
              (SELECT row_to_json(x) FROM (SELECT ${SESSION_COLUMNS}) x) AS "session",
              (SELECT row_to_json(y) FROM (SELECT ${USER_COLUMNS}) y) AS "user"
       FROM refresh_tokens rt
       JOIN sessions s ON s.id = rt.session_id
       JOIN users u ON u.id = s.user_id
       WHERE rt.token_hash = $1`,
      [tokenHash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      token: {
        tokenHash: row.token.tokenHash,
        sessionId: row.token.sessionId,
        createdAt: new Date(row.token.createdAt),
        rotatedAt: row.token.rotatedAt ? new Date(row.token.rotatedAt) : null,
      },
      session: toSession(row.session),
      user: toUser(row.user),
    };
  }

  async markRotated(tokenHash: string, now: Date): Promise<boolean> {
    const rows = unwrapRows<{ token_hash: string }>(
      await this.tx.manager.query(
        `UPDATE refresh_tokens SET rotated_at = $2 WHERE token_hash = $1 AND rotated_at IS NULL RETURNING token_hash`,
        [tokenHash, now],
      ),
    );
    return rows.length === 1;
  }

  async rotate(tokenHash: string, successorHash: string, session: Session, now: Date): Promise<boolean> {
    // One statement, one round trip, atomic without a transaction: the row lock of the UPDATE
    // makes concurrent rotations of one token queue, and only the first finds rotated_at NULL.
    const { lastActiveAt, ip, location } = session.snapshot();
    const rows = await this.tx.prepared<{ rotated: number }>(
      'refresh-token-rotate',
      `WITH rotated AS (
         UPDATE refresh_tokens SET rotated_at = $2 WHERE token_hash = $1 AND rotated_at IS NULL RETURNING session_id
       ), successor AS (
         INSERT INTO refresh_tokens (token_hash, session_id, created_at) SELECT $3, session_id, $2 FROM rotated RETURNING session_id
       ), used AS (
         UPDATE sessions SET last_active_at = $4, ip = $5, country = $6, city = $7
         WHERE id IN (SELECT session_id FROM successor) RETURNING id
       )
       SELECT count(*)::int AS rotated FROM used`,
      [tokenHash, now, successorHash, lastActiveAt, ip, location.country, location.city],
    );
    return Number(rows[0]?.rotated ?? 0) === 1;
  }

  async rotatedAt(tokenHash: string): Promise<Date | null> {
    const rows: { rotated_at: Date | null }[] = await this.tx.manager.query(`SELECT rotated_at FROM refresh_tokens WHERE token_hash = $1`, [
      tokenHash,
    ]);
    return rows[0]?.rotated_at ? new Date(rows[0].rotated_at) : null;
  }

  async deleteAllForSession(sessionId: string): Promise<number> {
    const result = await this.tx.manager.getRepository(RefreshTokenRecord).delete({ sessionId });
    return result.affected ?? 0;
  }
}
