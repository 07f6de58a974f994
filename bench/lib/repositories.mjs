// The production persistence adapters (from dist/) on a PostgreSQL database, with every statement
// they send recorded, so that a benchmark can time them and EXPLAIN exactly what they ran.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (file) => {
  const full = path.join(ROOT, 'dist/src', file);
  if (!fs.existsSync(full)) throw new Error(`${path.relative(ROOT, full)} is missing: run npm run build first.`);
  return require(full);
};

/** Opens `databaseUrl` as the service does (migrations included); `tx` records while `recording` is an array. */
export async function openRecorded(databaseUrl) {
  const { loadConfig } = dist('config/load-config.js');
  const { openDatabase } = dist('adapters/persistence/open-database.js');
  const { TypeOrmTransaction } = dist('adapters/persistence/typeorm-transaction.js');
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });
  const dataSource = await openDatabase(config);
  const tx = new TypeOrmTransaction(dataSource);
  const state = { recording: null, timings: null };
  const manager = dataSource.manager;
  // The transaction's own manager inside `run`, the data source's outside, as in the service.
  const scoped = Object.getOwnPropertyDescriptor(TypeOrmTransaction.prototype, 'manager').get;
  Object.defineProperty(tx, 'manager', {
    get: () => {
      const current = scoped.call(tx);
      return {
        query: async (sql, params) => {
          state.recording?.push({ sql, params: params ? [...params] : params });
          const t0 = performance.now();
          try {
            return await current.query(sql, params);
          } finally {
            state.timings?.push({ sql, ms: performance.now() - t0 });
          }
        },
        getRepository: (entity) => current.getRepository(entity),
      };
    },
  });
  // Statements sent as named prepared statements bypass the manager: record those too.
  const prepared = tx.prepared.bind(tx);
  tx.prepared = (name, sql, params) => {
    state.recording?.push({ sql, params: [...params] });
    return prepared(name, sql, params);
  };
  return {
    config,
    dataSource,
    tx,
    manager,
    adapter: (file, name, ...args) => new (dist(`adapters/persistence/${file}`)[name])(tx, ...args),
    /** Every statement sent through the manager from now on, with its duration (failed ones too). */
    timeStatements() {
      state.timings = [];
      return state.timings;
    },
    /** The statements `work` sends. */
    async record(work) {
      state.recording = [];
      try {
        await work();
        return state.recording;
      } finally {
        state.recording = null;
      }
    },
    close: () => dataSource.destroy(),
  };
}
