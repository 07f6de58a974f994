// The housekeeping purge as the housekeeping job runs it (the production adapter, batches of
// PURGE_BATCH_SIZE rows, the same cut-offs, each statement under the adapter's time bound), run
// to the end of the backlog, timing every purge statement (those the bound cancelled included).
import { openRecorded } from './repositories.mjs';

const DAY_MS = 86_400_000;

export function purgeBatches(databaseUrl, log) {
  const state = { done: false, result: null };
  state.result = (async () => {
    const db = await openRecorded(databaseUrl);
    try {
      const purger = db.adapter('typeorm-expired-data-purger.js', 'TypeOrmExpiredDataPurger');
      const { PURGE_BATCH_SIZE } = await import('../../dist/src/application/housekeeping/housekeeping.use-case.js');
      const { PURGE_STATEMENT_TIMEOUT_MS } = await import('../../dist/src/adapters/persistence/typeorm-expired-data-purger.js');
      const now = Date.now();
      const { sessionRetentionDays, auditRetentionDays } = db.config;
      const { PurgeStalledError } = await import('../../dist/src/application/ports/expired-data-purger.js');
      const statementsMs = [];
      const slowest = {};
      let cancelled = 0;
      let stalled = 0;
      const timings = db.timeStatements();
      const drain = async (what, purge) => {
        let total = 0;
        for (let batch = 1; ; batch += 1) {
          timings.length = 0;
          let n;
          try {
            n = await purge();
          } catch (error) {
            if (!(error instanceof PurgeStalledError)) throw error;
            stalled += 1;
            n = error.deleted;
          }
          for (const { sql, ms } of timings) {
            if (sql.includes('set_config')) continue;
            statementsMs.push(ms);
            if (ms >= PURGE_STATEMENT_TIMEOUT_MS) cancelled += 1;
            if (!slowest[what] || ms > slowest[what].ms) slowest[what] = { ms: Math.round(ms * 10) / 10, batch };
          }
          total += n;
          if (n < PURGE_BATCH_SIZE) break;
        }
        log(`  purged ${total} ${what} (slowest statement: ${JSON.stringify(slowest[what])})`);
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
        statementTimeoutMs: PURGE_STATEMENT_TIMEOUT_MS,
        statements: statementsMs.length,
        cancelledStatements: cancelled,
        stalledCalls: stalled,
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
