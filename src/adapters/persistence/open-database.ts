import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { createDataSource, EmbeddedDatabaseOptions } from './data-source';
import { lockDataDir } from './data-dir-lock';

const MIGRATION_LOCK = 7263000;

/**
 * Opens the database and applies pending migrations before anything else starts. On a
 * PostgreSQL server an advisory lock keeps instances starting together from migrating twice.
 */
export async function openDatabase(config: AppConfig, embedded: EmbeddedDatabaseOptions = {}): Promise<DataSource> {
  const dataSource = createDataSource(config, embedded);
  // The embedded database is one process's: a second (the CLI beside a running server) is told so.
  if (!config.databaseUrl && config.dataDir !== 'memory') {
    const release = lockDataDir(config.dataDir);
    const destroy = dataSource.destroy.bind(dataSource);
    dataSource.destroy = () => destroy().finally(release);
    process.once('exit', release);
    try {
      await dataSource.initialize();
    } catch (error) {
      release();
      throw error;
    }
  } else {
    await dataSource.initialize();
  }
  if (config.databaseUrl) {
    const runner = dataSource.createQueryRunner();
    try {
      await runner.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
      await dataSource.runMigrations({ transaction: 'each' });
      await analyzeUnanalyzedTables((sql) => runner.query(sql));
    } finally {
      await runner.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
      await runner.release();
    }
  } else {
    await dataSource.runMigrations({ transaction: 'each' });
    await analyzeUnanalyzedTables((sql) => dataSource.query(sql));
  }
  return dataSource;
}

/**
 * Gives statistics to the tables PostgreSQL has never analysed: those of a new database, until
 * autovacuum gets to them (never, where it is off; the embedded database has none). Without any,
 * the planner rates an index on the realm alone and a unique one alike at one row, and a prepared
 * statement's generic plan may then read every user of a realm to find one by email. Analysed
 * once, even empty, a table's estimates follow its real size from then on. A no-op afterwards.
 */
async function analyzeUnanalyzedTables(query: (sql: string) => Promise<{ name: string }[]>): Promise<void> {
  const tables = await query(
    `SELECT quote_ident(c.relname) AS name FROM pg_class c
     WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.reltuples < 0`,
  );
  if (tables.length > 0) await query(`ANALYZE ${tables.map((table) => table.name).join(', ')}`);
}
