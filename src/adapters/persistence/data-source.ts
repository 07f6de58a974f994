import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DataSource, DataSourceOptions } from 'typeorm';
import { InitialSchema1764028800000 } from '../../../migrations/1764028800000-initial-schema';
import { WebauthnRegistrationChallenges1764115205000 } from '../../../migrations/1764115205000-webauthn-registration-challenges';
import { EmailOutboxFailedIndex1764120000000 } from '../../../migrations/1764120000000-email-outbox-failed-index';
import { AdminUserListIndexes1764121000000 } from '../../../migrations/1764121000000-admin-user-list-indexes';
import { SessionListIndex1764130000000 } from '../../../migrations/1764130000000-session-list-index';
import { HousekeepingIndexes1764150000000 } from '../../../migrations/1764150000000-housekeeping-indexes';
import { RealmScopedUserSearch1764160000000 } from '../../../migrations/1764160000000-realm-scoped-user-search';
import { SessionDpopBinding1764170000000 } from '../../../migrations/1764170000000-session-dpop-binding';
import { Webhooks1764180000000 } from '../../../migrations/1764180000000-webhooks';
import { RealmSettings1764190000000 } from '../../../migrations/1764190000000-realm-settings';
import { WebhookDeliveryRetention1764200000000 } from '../../../migrations/1764200000000-webhook-delivery-retention';
import { StoredUserSearchKeys1764210000000 } from '../../../migrations/1764210000000-stored-user-search-keys';
import { RequiredBatchWrites1764220000000 } from '../../../migrations/1764220000000-required-batch-writes';
import { Passwordless1764233000000 } from '../../../migrations/1764233000000-passwordless';
import { Federation1764240000000 } from '../../../migrations/1764240000000-federation';
import { KeptListCounts1764262000000 } from '../../../migrations/1764262000000-kept-list-counts';
import { SessionEndIndexes1764263000000 } from '../../../migrations/1764263000000-session-end-indexes';
import { RealmRolesAndAppMetadata1764290000000 } from '../../../migrations/1764290000000-realm-roles-and-app-metadata';
import { RealmReturnUrls1764300000000 } from '../../../migrations/1764300000000-realm-return-urls';
import { WebauthnCredentialDisabled1764310000000 } from '../../../migrations/1764310000000-webauthn-credential-disabled';
import { RealmClientRegistration1764320000000 } from '../../../migrations/1764320000000-realm-client-registration';
import { ClientsAndResources1764330000000 } from '../../../migrations/1764330000000-clients-and-resources';
import { OpenidProvider1764420000000 } from '../../../migrations/1764420000000-openid-provider';
import { Hooks1764500000000 } from '../../../migrations/1764500000000-hooks';
import { OpSessionEnds1764510000000 } from '../../../migrations/1764510000000-op-session-ends';
import { Organizations1764520000000 } from '../../../migrations/1764520000000-organizations';
import { AppConfig } from '../../config/app-config';
import { RECORDS } from './records';

/** Migrations as classes, so the same list works under tsc output, Jest and the CLI. */
export const MIGRATIONS = [
  InitialSchema1764028800000,
  WebauthnRegistrationChallenges1764115205000,
  EmailOutboxFailedIndex1764120000000,
  AdminUserListIndexes1764121000000,
  SessionListIndex1764130000000,
  HousekeepingIndexes1764150000000,
  RealmScopedUserSearch1764160000000,
  SessionDpopBinding1764170000000,
  Webhooks1764180000000,
  RealmSettings1764190000000,
  WebhookDeliveryRetention1764200000000,
  StoredUserSearchKeys1764210000000,
  RequiredBatchWrites1764220000000,
  Passwordless1764233000000,
  Federation1764240000000,
  KeptListCounts1764262000000,
  SessionEndIndexes1764263000000,
  RealmRolesAndAppMetadata1764290000000,
  RealmReturnUrls1764300000000,
  WebauthnCredentialDisabled1764310000000,
  RealmClientRegistration1764320000000,
  ClientsAndResources1764330000000,
  OpenidProvider1764420000000,
  Hooks1764500000000,
  OpSessionEnds1764510000000,
  Organizations1764520000000,
];

/**
 * PostgreSQL when `DATABASE_URL` is set; otherwise the embedded PGlite in `DATA_DIR/pglite`
 * (or in memory when `DATA_DIR=memory`), through a driver that serialises access.
 */
export interface EmbeddedDatabaseOptions {
  /** A `PGliteDriver.dump()` to start the in-memory database from, instead of an empty one. */
  pgliteSnapshot?: Blob;
}

export function dataSourceOptions(
  config: Pick<AppConfig, 'databaseUrl' | 'dataDir'>,
  embedded: EmbeddedDatabaseOptions = {},
): DataSourceOptions {
  const common = {
    type: 'postgres' as const,
    entities: RECORDS,
    migrations: MIGRATIONS,
    migrationsRun: false,
    migrationsTransactionMode: 'each' as const,
    synchronize: false,
    logging: false,
  };
  if (config.databaseUrl) {
    return {
      ...common,
      url: config.databaseUrl,
      // Two cores: a handful of connections keeps PostgreSQL busy without queueing inside it.
      poolSize: 10,
      // No JIT compilation and no parallel workers: every statement here is short, and a plan
      // picked from an estimate over the whole table (a count of the few open sessions that ended,
      // estimated from every session) would spend milliseconds starting workers and compiling
      // for a range of a few index entries — 2 s instead of 2 ms at 3,000,000 sessions.
      extra: { connectionTimeoutMillis: 5000, idleTimeoutMillis: 30000, options: '-c jit=off -c max_parallel_workers_per_gather=0' },
    };
  }
  // Loaded lazily: a PostgreSQL deployment never loads the wasm build.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createPGliteDriver } = require('./pglite-serial-driver') as typeof import('./pglite-serial-driver');
  const inMemory = config.dataDir === 'memory';
  const dir = inMemory ? undefined : resolve(join(config.dataDir, 'pglite'));
  if (dir) mkdirSync(dir, { recursive: true });
  // pg_trgm and btree_gin: the realm-scoped trigram indexes of the users search (migration 1764160000000).
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { pg_trgm } = require('@electric-sql/pglite/contrib/pg_trgm') as typeof import('@electric-sql/pglite/contrib/pg_trgm');
  const { btree_gin } = require('@electric-sql/pglite/contrib/btree_gin') as typeof import('@electric-sql/pglite/contrib/btree_gin');
  /* eslint-enable @typescript-eslint/no-require-imports */
  return {
    ...common,
    driver: createPGliteDriver({
      dataDir: dir,
      extensions: { pg_trgm, btree_gin },
      loadDataDir: inMemory ? embedded.pgliteSnapshot : undefined,
    }),
  } as DataSourceOptions;
}

export function createDataSource(config: Pick<AppConfig, 'databaseUrl' | 'dataDir'>, embedded: EmbeddedDatabaseOptions = {}): DataSource {
  return new DataSource(dataSourceOptions(config, embedded));
}
