import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import type { PGliteDriver } from '../../src/adapters/persistence/pglite-serial-driver';
import { openDatabase } from '../../src/adapters/persistence/open-database';
import { AppConfig } from '../../src/config/app-config';

const ROOT = join(__dirname, '../..');

/** Names the migrated schema: the migrations' sources and the PGlite version. */
function schemaKey(): string {
  const hash = createHash('sha256');
  const folder = join(ROOT, 'migrations');
  for (const file of readdirSync(folder).sort()) hash.update(file).update(readFileSync(join(folder, file)));
  hash.update(JSON.parse(readFileSync(join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')).version);
  return hash.digest('hex').slice(0, 16);
}

let cached: Blob | undefined;

/**
 * An embedded database with every migration applied, as a tarball that new in-memory databases
 * start from: creating and migrating a PGlite takes seconds, loading this well under one. Kept in
 * the system's temp folder, named by the migrations, so test files and workers share it.
 */
export async function pgliteSnapshot(): Promise<Blob> {
  if (cached) return cached;
  const file = join(tmpdir(), `identity-pglite-${schemaKey()}.tar`);
  if (!existsSync(file)) {
    const config = Object.assign(new AppConfig(), { databaseUrl: null, dataDir: 'memory' });
    const dataSource: DataSource = await openDatabase(config);
    const dump = await (dataSource.options as unknown as { driver: PGliteDriver }).driver.dump();
    await dataSource.destroy();
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file); // atomic: a worker reading it never sees half a file
  }
  cached = new Blob([readFileSync(file)]);
  return cached;
}
