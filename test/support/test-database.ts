import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/**
 * A database of its own for one test file: a fresh PostgreSQL database when DATABASE_URL is set
 * (dropped afterwards), otherwise an in-memory PGlite.
 */
export interface TestDatabase {
  databaseUrl: string | null;
  dataDir: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const base = process.env.DATABASE_URL;
  if (!base) return { databaseUrl: null, dataDir: 'memory', drop: async () => undefined };
  const name = `it_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    databaseUrl: url.toString(),
    dataDir: 'memory',
    async drop() {
      const client = new Client({ connectionString: base });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
