import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { EndedSessions, SessionEndListener } from '../../application/ports/session-end-listener';
import { TypeOrmTransaction } from './typeorm-transaction';

/** One client's part in one of the provider's sessions (its `authorizations` entry). */
interface Authorization {
  sid?: string;
  grantId?: string;
  /** Set by the library when the client got a grant that outlives the session (offline_access). */
  persistsLogout?: boolean;
}

interface ProviderSession {
  id: string;
  payload: { accountId?: string; authorizations?: Record<string, Authorization> } | string;
}

/**
 * Ends, with the service's sessions, what the realm's OpenID provider holds through them, in
 * `op_artifacts` and in the caller's transaction: the provider's sessions that point at them
 * (`serviceSessionId`), the grants the apps got in them with every code and token under those
 * grants (but an `offline_access` grant, unless every session of the user ended), and, for each
 * app with a back-channel logout URI, a row of `op_backchannel_logouts`, the outbox its logout
 * token is sent from.
 */
@Injectable()
export class TypeOrmOpSessionEnds implements SessionEndListener {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async sessionsEnded({ realmId, sessionIds, allOfUser, at }: EndedSessions): Promise<void> {
    if (sessionIds.length === 0 && !allOfUser) return;
    const sessions: ProviderSession[] = await this.tx.manager.query(
      `SELECT id, payload FROM op_artifacts WHERE realm_id = $1 AND model = 'Session' AND payload->>'serviceSessionId' = ANY($2::text[])`,
      [realmId, sessionIds],
    );
    const grants: string[] = [];
    const logouts: { clientId: string; sub: string; sid: string }[] = [];
    for (const row of sessions) {
      const payload =
        typeof row.payload === 'string' ? (JSON.parse(row.payload) as Exclude<ProviderSession['payload'], string>) : row.payload;
      for (const [clientId, authorization] of Object.entries(payload.authorizations ?? {})) {
        if (authorization.grantId && (allOfUser || !authorization.persistsLogout)) grants.push(authorization.grantId);
        if (payload.accountId && authorization.sid) logouts.push({ clientId, sub: payload.accountId, sid: authorization.sid });
      }
    }
    if (sessions.length > 0) {
      await this.tx.manager.query(`DELETE FROM op_artifacts WHERE realm_id = $1 AND model = 'Session' AND id = ANY($2::text[])`, [
        realmId,
        sessions.map((s) => s.id),
      ]);
    }
    if (grants.length > 0) {
      await this.tx.manager.query(
        `DELETE FROM op_artifacts WHERE realm_id = $1 AND ((model = 'Grant' AND id = ANY($2::text[])) OR grant_id = ANY($2::text[]))`,
        [realmId, grants],
      );
    }
    if (allOfUser) {
      // The user's remaining grants (offline_access, or made in sessions that ended before).
      await this.tx.manager.query(
        `DELETE FROM op_artifacts
          WHERE realm_id = $1
            AND ((model = 'Grant' AND payload->>'accountId' = $2)
                 OR grant_id IN (SELECT id FROM op_artifacts WHERE realm_id = $1 AND model = 'Grant' AND payload->>'accountId' = $2))`,
        [realmId, allOfUser],
      );
    }
    if (logouts.length > 0) {
      await this.tx.manager.query(
        `INSERT INTO op_backchannel_logouts (id, realm_id, client_id, sub, sid, status, next_attempt_at, created_at)
         SELECT x.id, $1, x.client_id, x.sub, x.sid, 'pending', $2, $2
           FROM unnest($3::uuid[], $4::text[], $5::text[], $6::text[]) AS x(id, client_id, sub, sid)
           JOIN oauth_clients c ON c.realm_id = $1 AND c.client_id = x.client_id AND c.backchannel_logout_uri IS NOT NULL`,
        [
          realmId,
          at,
          logouts.map(() => randomUUID()),
          logouts.map((l) => l.clientId),
          logouts.map((l) => l.sub),
          logouts.map((l) => l.sid),
        ],
      );
    }
  }
}
