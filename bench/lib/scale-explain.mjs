// EXPLAIN (ANALYZE, BUFFERS) of the statements behind each list path of the scale benchmark, as
// the production adapters send them.
import { openRecorded } from './repositories.mjs';

export async function explainPaths(databaseUrl, { realmId, someUser, webhookId, since }) {
  const db = await openRecorded(databaseUrl);
  try {
    const users = db.adapter('typeorm-user.repository.js', 'TypeOrmUserRepository');
    const sessions = db.adapter('typeorm-session.repository.js', 'TypeOrmSessionRepository');
    const events = db.adapter('typeorm-audit-log.js', 'TypeOrmAuditLog');
    const webhooks = db.adapter('typeorm-webhook.repository.js', 'TypeOrmWebhookRepository', null);
    const now = new Date();
    const lifetime = { idleTimeoutSeconds: db.config.sessionIdleTimeoutSeconds, maxLifetimeSeconds: db.config.sessionMaxLifetimeSeconds };
    const page = { page: 1, limit: 20 };
    const userList = (query) => () => users.list({ realmId, ...page, sort: '-createdAt', now, ...query });
    const calls = {
      users: userList({}),
      'users-page-200': userList({ page: 200 }),
      'users-email-prefix': userList({ search: 'u8000' }),
      'users-name-1pct': userList({ search: 'kowalski' }),
      'users-suspended': userList({ status: 'suspended' }),
      sessions: () => sessions.list({ realmId, ...page, now, lifetime }),
      'sessions-user': () => sessions.list({ realmId, userId: someUser, ...page, now, lifetime }),
      'events-type': () => events.list({ realmId, type: 'login.failed', ...page }),
      'events-user': () => events.list({ realmId, userId: someUser, ...page }),
      'events-since': () => events.list({ realmId, since: new Date(since), ...page }),
      deliveries: () => webhooks.listDeliveries({ realmId, webhookId, ...page }),
    };
    const out = [];
    for (const [name, call] of Object.entries(calls)) {
      await call(); // warm
      for (const { sql, params } of await db.record(call)) {
        const plan = await db.manager.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
        out.push(
          `### ${name}\n${sql.replace(/\s+/g, ' ').trim()}\n${JSON.stringify(params)}\n\n${plan.map((r) => r['QUERY PLAN']).join('\n')}\n`,
        );
      }
    }
    return out.join('\n');
  } finally {
    await db.close();
  }
}
