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
  const state = { recording: null };
  const manager = dataSource.manager;
  Object.defineProperty(tx, 'manager', {
    get: () => ({
      query: (sql, params) => {
        state.recording?.push({ sql, params: params ? [...params] : params });
        return manager.query(sql, params);
      },
      getRepository: (entity) => manager.getRepository(entity),
    }),
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
