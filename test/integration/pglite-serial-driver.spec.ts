import 'reflect-metadata';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Column, DataSource, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { createPGliteDriver, type PGliteClient } from '../../src/adapters/persistence/pglite-serial-driver';

@Entity({ name: 'items' })
class ItemRecord {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;
  @Column({ type: 'text' }) name: string;
  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` }) meta: Record<string, unknown>;
  @Column({ type: 'bytea', nullable: true }) payload: Buffer | null;
  @Column({ type: 'timestamptz', name: 'created_at', default: () => 'now()' }) createdAt: Date;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('PGlite serial driver through TypeORM', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = new DataSource({
      type: 'postgres',
      driver: createPGliteDriver({}),
      entities: [ItemRecord],
      synchronize: false,
    });
    await dataSource.initialize();
    await dataSource.query(`
      CREATE TABLE items (
        id bigserial PRIMARY KEY, name text NOT NULL, meta jsonb NOT NULL DEFAULT '{}'::jsonb,
        payload bytea NULL, created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE counters (id int PRIMARY KEY, value int NOT NULL);`);
  });

  afterAll(async () => {
    await dataSource?.destroy();
  });

  beforeEach(async () => {
    await dataSource.query(`TRUNCATE items RESTART IDENTITY; DELETE FROM counters`);
  });

  const names = async (): Promise<string[]> =>
    (await dataSource.getRepository(ItemRecord).find({ order: { id: 'ASC' } })).map((item) => item.name);

  it('keeps a rolled-back transaction invisible while another request saves concurrently', async () => {
    const failing = dataSource.transaction(async (manager) => {
      await manager.insert(ItemRecord, { name: 'inside' });
      await sleep(50);
      throw new Error('boom');
    });
    const outside = (async () => {
      await sleep(5); // the transaction above has begun and is sleeping
      await dataSource.getRepository(ItemRecord).save({ name: 'outside' });
    })();

    await expect(failing).rejects.toThrow('boom');
    await outside;
    expect(await names()).toEqual(['outside']);
  });

  it('reports affected rows for query-builder UPDATE and DELETE', async () => {
    await dataSource.getRepository(ItemRecord).insert([{ name: 'a' }, { name: 'a' }, { name: 'b' }]);

    const updated = await dataSource
      .createQueryBuilder()
      .update(ItemRecord)
      .set({ name: 'c' })
      .where('name = :name', { name: 'a' })
      .execute();
    const deleted = await dataSource.getRepository(ItemRecord).delete({ name: 'b' });

    expect(updated.affected).toBe(2);
    expect(deleted.affected).toBe(1);
    expect(await names()).toEqual(['c', 'c']);
  });

  it('gives 20 when 20 concurrent transactions each read and increment a counter', async () => {
    await dataSource.query(`INSERT INTO counters (id, value) VALUES (1, 0)`);

    await Promise.all(
      Array.from({ length: 20 }, () =>
        dataSource.transaction(async (manager) => {
          const [row] = (await manager.query(`SELECT value FROM counters WHERE id = $1`, [1])) as { value: number }[];
          await sleep(1); // widen the read-modify-write window
          await manager.query(`UPDATE counters SET value = $1 WHERE id = $2`, [row.value + 1, 1]);
        }),
      ),
    );

    const [counter] = (await dataSource.query(`SELECT value FROM counters WHERE id = 1`)) as { value: number }[];
    expect(counter.value).toBe(20);
  });

  it('runs multi-statement SQL without parameters and returns the last result', async () => {
    const queryRunner = dataSource.createQueryRunner();
    try {
      const last = (await queryRunner.query(`
        -- a migration-style script
        CREATE TABLE multi (a int);
        INSERT INTO multi (a) VALUES (1), (2), (3);
        SELECT count(*)::int AS n, sum(a)::int AS total FROM multi;`)) as { n: number; total: number }[];
      expect(last).toEqual([{ n: 3, total: 6 }]);
    } finally {
      await queryRunner.query(`DROP TABLE IF EXISTS multi`);
      await queryRunner.release();
    }
  });

  it('returns int8 as string, jsonb as object, timestamptz as Date and bytea as Buffer, like pg', async () => {
    const before = Date.now();
    await dataSource.getRepository(ItemRecord).save({
      name: 'typed',
      meta: { roles: ['admin'], nested: { n: 1 } },
      payload: Buffer.from([0, 1, 254, 255]),
    });

    const item = await dataSource.getRepository(ItemRecord).findOneByOrFail({ name: 'typed' });
    expect(item.id).toBe('1');
    expect(item.meta).toEqual({ roles: ['admin'], nested: { n: 1 } });
    expect(item.createdAt).toBeInstanceOf(Date);
    expect(Math.abs(item.createdAt.getTime() - before)).toBeLessThan(60_000);
    expect(Buffer.isBuffer(item.payload)).toBe(true);
    expect([...(item.payload ?? [])]).toEqual([0, 1, 254, 255]);

    const [raw] = (await dataSource.query(
      `SELECT 9007199254740993::int8 AS big, ARRAY[1, 2]::int8[] AS bigs, $1::int8 AS param,
              '{"a": [1]}'::jsonb AS doc, '2024-02-29'::date AS day`,
      ['42'],
    )) as { big: unknown; bigs: unknown; param: unknown; doc: unknown; day: Date }[];
    expect(raw.big).toBe('9007199254740993');
    expect(raw.bigs).toEqual(['1', '2']);
    expect(raw.param).toBe('42');
    expect(raw.doc).toEqual({ a: [1] });
    // pg parses a date as local midnight, so local getters give back the stored day in any TZ
    expect([raw.day.getFullYear(), raw.day.getMonth() + 1, raw.day.getDate()]).toEqual([2024, 2, 29]);
  });

  it('round-trips a Date through a timestamp-without-time-zone parameter in local time, like pg', async () => {
    const moment = new Date(2024, 5, 1, 12, 30, 15, 250); // local wall-clock time
    const [row] = (await dataSource.query(`SELECT $1::timestamp AS ts, $1::date::text AS day`, [moment])) as {
      ts: Date;
      day: string;
    }[];
    expect(row.ts.getTime()).toBe(moment.getTime());
    expect(row.day).toBe('2024-06-01');
  });
});

describe('PGlite serial driver pool', () => {
  const { Pool } = createPGliteDriver({}, 200);
  const pool = new Pool();

  const connect = (): Promise<[PGliteClient, (err?: unknown) => void]> =>
    new Promise((resolve, reject) => {
      pool.connect((err, client, release) => (err || !client || !release ? reject(err) : resolve([client, release])));
    });

  afterAll(async () => {
    await new Promise<void>((resolve, reject) => pool.end((err) => (err ? reject(err) : resolve())));
  });

  it('fails an acquire that waits longer than the timeout, and keeps serving afterwards', async () => {
    const [, release] = await connect();

    const started = Date.now();
    await expect(connect()).rejects.toThrow(/timed out after 200 ms waiting for the database session/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);

    release();
    const [client, releaseNext] = await connect();
    await expect(client.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
    releaseNext();
  });

  it('hands the session to one waiter at a time, in order, even if a holder releases twice', async () => {
    const [, releaseFirst] = await connect();
    const granted: string[] = [];
    const second = connect().then((held) => (granted.push('second'), held));
    const third = connect().then((held) => (granted.push('third'), held));
    await sleep(20); // both are queued behind the holder
    expect(granted).toEqual([]);

    releaseFirst();
    releaseFirst();
    const [, releaseSecond] = await second;
    await sleep(20);
    expect(granted).toEqual(['second']);

    releaseSecond();
    const [, releaseThird] = await third;
    expect(granted).toEqual(['second', 'third']);
    releaseThird();
  });

  it('reports command and rowCount like pg, with and without parameters, and supports callbacks', async () => {
    const [client, release] = await connect();
    try {
      const created = await client.query('CREATE TABLE t (a int)');
      const inserted = await client.query('INSERT INTO t VALUES (1), (2), (3)');
      const updated = await client.query('UPDATE t SET a = a + $1 WHERE a > $2', [10, 1]);
      const selected = await client.query('/* hint */ SELECT a FROM t ORDER BY a');
      const deleted = await new Promise((resolve, reject) =>
        client.query('DELETE FROM t', (err, res) => (err ? reject(err) : resolve(res))),
      );

      expect(created).toMatchObject({ command: 'CREATE', rowCount: null });
      expect(inserted).toMatchObject({ command: 'INSERT', rowCount: 3 });
      expect(updated).toMatchObject({ command: 'UPDATE', rowCount: 2 });
      expect(selected).toMatchObject({ command: 'SELECT', rowCount: 3, rows: [{ a: 1 }, { a: 12 }, { a: 13 }] });
      expect(deleted).toMatchObject({ command: 'DELETE', rowCount: 3 });
    } finally {
      await client.query('DROP TABLE IF EXISTS t');
      release();
    }
  });

  it('rolls back a transaction left open by a released client, and refuses the stale client', async () => {
    const errors: Error[] = [];
    pool.on('error', (err: Error) => errors.push(err));
    const [setup, releaseSetup] = await connect();
    await setup.query('CREATE TABLE leak (a int)');
    releaseSetup();

    const [leaky, releaseLeaky] = await connect();
    await leaky.query('BEGIN');
    await leaky.query('INSERT INTO leak VALUES ($1)', [1]);
    releaseLeaky();

    const [next, releaseNext] = await connect();
    try {
      await next.query('BEGIN');
      await next.query('INSERT INTO leak VALUES ($1)', [2]);
      await next.query('COMMIT');
      const { rows } = await next.query('SELECT a FROM leak ORDER BY a');
      expect(rows).toEqual([{ a: 2 }]);
      expect(errors.map((err) => err.message)).toEqual([expect.stringMatching(/rolled back/)]);
      await expect(leaky.query('SELECT 1')).rejects.toThrow(/used after release/);
    } finally {
      await next.query('DROP TABLE leak');
      releaseNext();
    }
  });

  it('end() waits for the holder, closes the database and refuses new connections', async () => {
    const [client, release] = await connect();
    await client.query('CREATE TABLE gone (a int)');
    let ended = false;
    const ending = new Promise<void>((resolve, reject) => pool.end((err) => (err ? reject(err) : resolve()))).then(
      () => void (ended = true),
    );
    await sleep(20);
    expect(ended).toBe(false);
    await expect(client.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
    release();
    await ending;

    await expect(connect()).rejects.toThrow(/pool has been ended/);
    // The driver reopens a fresh in-memory instance for a new pool: the old one was closed.
    const reopened = new Pool();
    const fresh = await reopened.connect();
    try {
      const { rows } = await fresh.query(`SELECT to_regclass('gone') AS t`);
      expect(rows).toEqual([{ t: null }]);
    } finally {
      fresh.release();
      await reopened.end();
    }
  });
});

describe('PGlite serial driver on disk', () => {
  const root = mkdtempSync(join(tmpdir(), 'pglite-driver-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('creates the parent directories of dataDir and keeps the data for the next driver', async () => {
    const dataDir = join(root, 'nested', 'deeper', 'db');
    const open = async (): Promise<DataSource> =>
      new DataSource({ type: 'postgres', driver: createPGliteDriver({ dataDir }), entities: [] }).initialize();

    const first = await open();
    expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
    await first.query(`CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')`);
    await first.destroy();

    const second = await open();
    try {
      expect(await second.query(`SELECT v FROM kept`)).toEqual([{ v: 'still here' }]);
    } finally {
      await second.destroy();
    }
  });
});
