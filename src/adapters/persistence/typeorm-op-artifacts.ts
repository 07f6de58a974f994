import { Injectable } from '@nestjs/common';
import { AppGrant, OpGrants } from '../../application/ports/op-grants';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';

/** What the provider library stores: its payload, as it gave it. */
export type OpPayload = Record<string, unknown>;

interface Row {
  payload: OpPayload;
  consumed_at: Date | string | null;
}

/** Models whose artifacts live under a grant: revoking the grant ends them. */
const GRANT_MEMBERS = ['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest'];

/**
 * The OpenID provider's artifacts (sessions, interactions, grants, codes, tokens), one row per
 * (realm, model, id) in `op_artifacts`; the library's Adapter interface maps onto these methods
 * (openid-provider/op-artifact-adapter.ts). Expired rows are never answered, and housekeeping
 * deletes them.
 */
@Injectable()
export class TypeOrmOpArtifacts implements OpGrants {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async upsert(realmId: string, model: string, id: string, payload: OpPayload, expiresInSeconds: number | undefined): Promise<void> {
    const expiresAt = typeof expiresInSeconds === 'number' ? new Date(Date.now() + expiresInSeconds * 1000) : null;
    const text = (key: string) => (typeof payload[key] === 'string' ? (payload[key] as string) : null);
    await this.tx.manager.query(
      `INSERT INTO op_artifacts (realm_id, model, id, payload, grant_id, uid, user_code, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (realm_id, model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
         uid = EXCLUDED.uid, user_code = EXCLUDED.user_code, expires_at = EXCLUDED.expires_at`,
      [realmId, model, id, JSON.stringify(payload), text('grantId'), text('uid'), text('userCode'), expiresAt],
    );
  }

  async find(realmId: string, model: string, id: string): Promise<OpPayload | undefined> {
    return this.one(`realm_id = $1 AND model = $2 AND id = $3`, [realmId, model, id]);
  }

  async findByUid(realmId: string, model: string, uid: string): Promise<OpPayload | undefined> {
    return this.one(`realm_id = $1 AND model = $2 AND uid = $3`, [realmId, model, uid]);
  }

  async findByUserCode(realmId: string, model: string, userCode: string): Promise<OpPayload | undefined> {
    return this.one(`realm_id = $1 AND model = $2 AND user_code = $3`, [realmId, model, userCode]);
  }

  async consume(realmId: string, model: string, id: string): Promise<void> {
    await this.tx.manager.query(`UPDATE op_artifacts SET consumed_at = now() WHERE realm_id = $1 AND model = $2 AND id = $3`, [
      realmId,
      model,
      id,
    ]);
  }

  async destroy(realmId: string, model: string, id: string): Promise<void> {
    await this.tx.manager.query(`DELETE FROM op_artifacts WHERE realm_id = $1 AND model = $2 AND id = $3`, [realmId, model, id]);
  }

  async revokeByGrantId(realmId: string, grantId: string): Promise<void> {
    await this.tx.manager.query(`DELETE FROM op_artifacts WHERE realm_id = $1 AND grant_id = $2`, [realmId, grantId]);
  }

  /** Wrong device codes entered by one browser (`key`) in its current window; 0 when none. */
  async deviceCodeFailures(realmId: string, key: string): Promise<{ count: number; retryAfterSeconds: number }> {
    const rows: { count: number; left: number }[] = await this.tx.manager.query(
      `SELECT (payload->>'count')::int AS count, ceil(extract(epoch FROM expires_at - now()))::int AS left
         FROM op_artifacts WHERE realm_id = $1 AND model = 'DeviceCodeFailures' AND id = $2 AND expires_at > now()`,
      [realmId, key],
    );
    return { count: Number(rows[0]?.count ?? 0), retryAfterSeconds: Math.max(1, Number(rows[0]?.left ?? 1)) };
  }

  /** Counts one more wrong device code of `key` in one statement (a window of `windowSeconds` from the first); returns the count. */
  async addDeviceCodeFailure(realmId: string, key: string, windowSeconds: number): Promise<number> {
    const rows = unwrapRows<{ count: number }>(
      await this.tx.manager.query(
        `INSERT INTO op_artifacts (realm_id, model, id, payload, expires_at)
         VALUES ($1, 'DeviceCodeFailures', $2, '{"count": 1}'::jsonb, now() + make_interval(secs => $3))
         ON CONFLICT (realm_id, model, id) DO UPDATE SET
           payload = CASE WHEN op_artifacts.expires_at <= now() THEN EXCLUDED.payload
                          ELSE jsonb_build_object('count', (op_artifacts.payload->>'count')::int + 1) END,
           expires_at = CASE WHEN op_artifacts.expires_at <= now() THEN EXCLUDED.expires_at ELSE op_artifacts.expires_at END
         RETURNING (payload->>'count')::int AS count`,
        [realmId, key, windowSeconds],
      ),
    );
    return Number(rows[0]?.count ?? 1);
  }

  async listForUser(realmId: string, userId: string): Promise<AppGrant[]> {
    const rows: { client_id: string; payload: OpPayload; last_used: string | number | null }[] = await this.tx.manager.query(
      `SELECT DISTINCT ON (g.payload->>'clientId') g.payload->>'clientId' AS client_id, g.payload,
         (SELECT max((t.payload->>'iat')::bigint) FROM op_artifacts t
           WHERE t.realm_id = g.realm_id AND t.grant_id = g.id AND t.model = ANY($3)) AS last_used
       FROM op_artifacts g
       WHERE g.realm_id = $1 AND g.model = 'Grant' AND g.payload->>'accountId' = $2
         AND (g.expires_at IS NULL OR g.expires_at > now())
       ORDER BY g.payload->>'clientId', (g.payload->>'iat')::bigint DESC`,
      [realmId, userId, GRANT_MEMBERS],
    );
    return rows.map((row) => {
      const openid = (row.payload.openid as { scope?: string } | undefined)?.scope ?? '';
      const resources = Object.values((row.payload.resources as Record<string, string> | undefined) ?? {});
      const scopes = [...new Set([openid, ...resources].flatMap((scope) => scope.split(' ')).filter(Boolean))];
      return {
        clientId: row.client_id,
        scopes,
        grantedAt: new Date(Number(row.payload.iat) * 1000),
        lastUsedAt: row.last_used === null ? null : new Date(Number(row.last_used) * 1000),
      };
    });
  }

  async revokeForUser(realmId: string, userId: string, clientId: string): Promise<boolean> {
    return this.tx.run(async () => {
      const grants = unwrapRows<{ id: string }>(
        await this.tx.manager.query(
          `DELETE FROM op_artifacts WHERE realm_id = $1 AND model = 'Grant' AND payload->>'accountId' = $2 AND payload->>'clientId' = $3
           RETURNING id`,
          [realmId, userId, clientId],
        ),
      );
      if (grants.length === 0) return false;
      await this.tx.manager.query(`DELETE FROM op_artifacts WHERE realm_id = $1 AND grant_id = ANY($2)`, [
        realmId,
        grants.map((grant) => grant.id),
      ]);
      return true;
    });
  }

  private async one(where: string, params: unknown[]): Promise<OpPayload | undefined> {
    const rows: Row[] = await this.tx.manager.query(
      `SELECT payload, consumed_at FROM op_artifacts WHERE ${where} AND (expires_at IS NULL OR expires_at > now()) LIMIT 1`,
      params,
    );
    const row = rows[0];
    if (!row) return undefined;
    const payload = typeof row.payload === 'string' ? (JSON.parse(row.payload) as OpPayload) : row.payload;
    // The library tells a used code or a rotated refresh token by `consumed`.
    return row.consumed_at ? { ...payload, consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) } : payload;
  }
}
