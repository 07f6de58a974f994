import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When one of the service's sessions ends, the OpenID provider's sessions that point at it are
 * found by `serviceSessionId` (the index below), and each client with a back-channel logout URI
 * that got tokens in it is sent a logout token: `op_backchannel_logouts` is that outbox, one row
 * per (client, session), claimed with a lease and retried like webhook deliveries.
 */
export class OpSessionEnds1764510000000 implements MigrationInterface {
  name = 'OpSessionEnds1764510000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX op_artifacts_service_session_idx ON op_artifacts (realm_id, (payload->>'serviceSessionId')) WHERE model = 'Session'`,
    );
    await q.query(`
      CREATE TABLE op_backchannel_logouts (
        id uuid PRIMARY KEY,
        realm_id text NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
        client_id text NOT NULL,
        sub text NOT NULL,
        sid text NOT NULL,
        status text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL,
        locked_until timestamptz NULL,
        last_status_code integer NULL,
        last_error text NULL,
        last_attempt_at timestamptz NULL,
        created_at timestamptz NOT NULL,
        delivered_at timestamptz NULL
      )`);
    await q.query(`CREATE INDEX op_backchannel_logouts_due_idx ON op_backchannel_logouts (next_attempt_at) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX op_backchannel_logouts_created_idx ON op_backchannel_logouts (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE op_backchannel_logouts`);
    await q.query(`DROP INDEX op_artifacts_service_session_idx`);
  }
}
