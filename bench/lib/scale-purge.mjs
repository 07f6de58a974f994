// The housekeeping purge as the housekeeping job runs it (the production adapter, batches of
// PURGE_BATCH_SIZE rows, the same cut-offs), run to the end of the backlog, timing every statement.
import { openRecorded } from './repositories.mjs';

const DAY_MS = 86_400_000;

export function purgeBatches(databaseUrl, log) {
  const state = { done: false, result: null };
  state.result = (async () => {
    const db = await openRecorded(databaseUrl);
    try {
      const purger = db.adapter('typeorm-expired-data-purger.js', 'TypeOrmExpiredDataPurger');
      const { PURGE_BATCH_SIZE } = await import('../../dist/src/application/housekeeping/housekeeping.use-case.js');
      const now = Date.now();
      const { sessionRetentionDays, auditRetentionDays } = db.config;
      const statementsMs = [];
      const slowest = {};
      const drain = async (what, purge) => {
        let total = 0;
        for (let batch = 1; ; batch += 1) {
          const t0 = performance.now();
          const n = await purge();
          const ms = performance.now() - t0;
          statementsMs.push(ms);
          if (!slowest[what] || ms > slowest[what].ms) slowest[what] = { ms: Math.round(ms * 10) / 10, batch };
          total += n;
          if (n < PURGE_BATCH_SIZE) break;
        }
        log(`  purged ${total} ${what} (slowest batch: ${JSON.stringify(slowest[what])})`);
        return total;
      };
      const t0 = performance.now();
      const sessions = await drain('sessions', () =>
        purger.purgeEndedSessions(new Date(now - sessionRetentionDays * DAY_MS), PURGE_BATCH_SIZE),
      );
      const events = await drain('audit events', () =>
        purger.purgeAuditEvents(new Date(now - auditRetentionDays * DAY_MS), PURGE_BATCH_SIZE),
      );
      const seconds = (performance.now() - t0) / 1000;
      statementsMs.sort((a, b) => a - b);
      const at = (p) => statementsMs[Math.min(statementsMs.length - 1, Math.ceil((p / 100) * statementsMs.length) - 1)];
      return {
        sessions,
        events,
        seconds,
        batchSize: PURGE_BATCH_SIZE,
        statements: statementsMs.length,
        statementP50Ms: at(50),
        statementP99Ms: at(99),
        statementMaxMs: statementsMs[statementsMs.length - 1],
        slowest,
      };
    } finally {
      await db.close();
      state.done = true;
    }
  })();
  return state;
}
