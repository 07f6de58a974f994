import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { Test, TestingModuleBuilder } from '@nestjs/testing';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/application/ports/clock';
import { configureApp } from '../../src/adapters/http/configure-app';
import { JsonReplyExpressAdapter } from '../../src/adapters/http/json-reply-adapter';
import { AppModule } from '../../src/app.module';
import { AppConfig } from '../../src/config/app-config';
import { loadConfig } from '../../src/config/load-config';
import { openDatabase } from '../../src/adapters/persistence/open-database';
import { pgliteSnapshot } from './pglite-snapshot';
import { createTestDatabase, TestDatabase } from './test-database';
import { TestClock } from './test-clock';

export interface TestApp {
  app: INestApplication;
  http: ReturnType<INestApplication['getHttpServer']>;
  config: AppConfig;
  clock: TestClock;
  dataSource: DataSource;
  database: TestDatabase;
  /** supertest agent bound to the app */
  api(): ReturnType<typeof request>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment variables as the service would read them, e.g. { LOCKOUT_MAX_FAILURES: '3' }. */
  env?: Record<string, string>;
  /** Adjustments to the parsed configuration. */
  config?: (config: AppConfig) => void;
  /** Further provider overrides. */
  override?: (builder: TestingModuleBuilder) => TestingModuleBuilder;
  /** Reuse a database (e.g. a second instance against the same data). */
  database?: TestDatabase;
}

/** Rate limits high enough that tests which are not about rate limiting never meet them. */
export const RELAXED_LIMITS: Record<string, string> = {
  RATE_LIMIT_LOGIN: '10000/60',
  RATE_LIMIT_REGISTER: '10000/60',
  RATE_LIMIT_REFRESH: '10000/60',
  RATE_LIMIT_MFA_VERIFY: '10000/60',
  RATE_LIMIT_EMAIL: '10000/60',
  RATE_LIMIT_EMAIL_CODE: '10000/60',
  RATE_LIMIT_EMAIL_CODE_IP: '10000/60',
  RATE_LIMIT_SIGN_IN_VERIFY: '10000/60',
  RATE_LIMIT_FEDERATION: '10000/60',
  RATE_LIMIT_DEVICE_CODE: '10000/60',
  RATE_LIMIT_OP_TOKEN: '10000/60',
  RATE_LIMIT_OP_REGISTRATION: '10000/60',
  RATE_LIMIT_INVITATION_ACCEPT: '10000/60',
  RATE_LIMIT_DEFAULT: '100000/60',
};

/** Boots AppModule exactly as main.ts does, on a database of its own, with a controllable clock. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const env: Record<string, string | undefined> = {
    BCRYPT_COST: '4',
    LOG_LEVEL: 'silent',
    OUTBOX_POLL_INTERVAL_MS: '0',
    HOUSEKEEPING_INTERVAL_SECONDS: '0',
    REDIS_URL: process.env.REDIS_URL,
    // Counters of one app are its own; instances meant to share them pass the same prefix in `env`.
    REDIS_KEY_PREFIX: `test:${randomUUID()}:`,
    ...RELAXED_LIMITS,
    ...options.env,
  };
  const config = loadConfig(env);
  config.databaseUrl = database.databaseUrl;
  config.dataDir = database.dataDir;
  options.config?.(config);
  const clock = new TestClock();
  let builder = Test.createTestingModule({ imports: [AppModule] })
    .overrideProvider(AppConfig)
    .useValue(config)
    .overrideProvider(Clock)
    .useValue(clock);
  if (!config.databaseUrl && config.dataDir === 'memory') {
    // The embedded database starts from a migrated snapshot instead of an empty one.
    const snapshot = await pgliteSnapshot();
    builder = builder.overrideProvider(DataSource).useFactory({ factory: () => openDatabase(config, { pgliteSnapshot: snapshot }) });
  }
  if (options.override) builder = options.override(builder);
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication(new JsonReplyExpressAdapter(), { bodyParser: false, logger: false });
  configureApp(app);
  await app.init();
  const http = app.getHttpServer();
  return {
    app,
    http,
    config,
    clock,
    dataSource: app.get(DataSource),
    database,
    api: () => request(http),
    async close() {
      await app.close();
      if (!options.database) await database.drop();
    },
  };
}
