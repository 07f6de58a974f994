import { loadConfig } from '../../config/load-config';
import { openDatabase } from './open-database';

/** `npm run migration:run`: applies pending migrations and exits. */
async function main(): Promise<void> {
  const dataSource = await openDatabase(loadConfig());
  const pending = await dataSource.showMigrations();
  await dataSource.destroy();
  console.warn(pending ? 'Migrations are still pending' : 'All migrations are applied');
  process.exitCode = pending ? 1 : 0;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
