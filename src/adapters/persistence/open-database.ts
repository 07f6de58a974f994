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
    } finally {
      await runner.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
      await runner.release();
    }
  } else {
    await dataSource.runMigrations({ transaction: 'each' });
  }
  return dataSource;
}
