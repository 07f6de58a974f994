import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { PGlite, PGliteOptions, Results } from '@electric-sql/pglite';

type PGliteModule = typeof import('@electric-sql/pglite');
type Callback<T> = (err: Error | null, value?: T) => void;

export interface PGliteDriverOptions {
  /** A directory on disk; unset means in-memory. Its parent directory is created if missing. */
  dataDir?: string;
  /** PGlite extensions, e.g. `{ citext }` from `@electric-sql/pglite/contrib/citext`. */
  extensions?: Record<string, unknown>;
  /** A `dumpDataDir()` tarball to start an in-memory database from. */
  loadDataDir?: Blob;
}

/** The subset of a `pg` query result that TypeORM's PostgresQueryRunner reads. */
export interface PGliteQueryResult {
  rows: Record<string, unknown>[];
  /** As in `pg`: the count from the command tag (rows selected, inserted, updated…), null for DDL. */
  rowCount: number | null;
  command: string;
  fields: { name: string; dataTypeID: number }[];
}

export interface PGliteDriver {
  Pool: new (config?: unknown) => PGlitePool;
  /**
   * The whole database as a `dumpDataDir()` tarball, to start other in-memory databases from
   * (`loadDataDir`). Call it only while no query runs.
   */
  dump(): Promise<Blob>;
}

/**
 * An embedded-PostgreSQL driver for TypeORM's `postgres` dialect (`driver:` option), used when no
 * DATABASE_URL is set. It mimics the small part of `pg` that TypeORM touches: `new Pool()`,
 * callback-style `pool.connect`, `client.query` (promise and callback forms) and `pool.end`.
 *
 * Why our own instead of `typeorm-pglite`: PGlite is a single backend session, and that adapter
 * hands the same session to every query runner at once. Two concurrent transactions then share one
 * transaction: one request's COMMIT commits the other's half-done work, whose ROLLBACK later does
 * nothing (measured: a rolled-back insert persisted). Here `connect()` is a FIFO mutex around the
 * session, the equivalent of `pg` with `max: 1`, so a query runner owns the session from connect
 * to release. The cost is that database work is serialised, and a query issued outside a running
 * `dataSource.transaction()` waits for it: hence the acquire timeout, which turns that deadlock
 * into an error instead of a hang.
 *
 * One PGlite instance per driver (no module-level singleton). Values come back as `pg` returns
 * them: int8 as string, bytea as Buffer, date as local midnight (see `pgCompatibleTypes`).
 */
export function createPGliteDriver(options: PGliteDriverOptions = {}, acquireTimeoutMs = 30_000): PGliteDriver {
  const lock = new FifoLock(acquireTimeoutMs);
  let instance: Promise<PGlite> | undefined;

  const session: Session = {
    lock,
    open() {
      instance ??= openPGlite(options).catch((err: unknown) => {
        instance = undefined; // let a later connect retry
        throw err;
      });
      return instance;
    },
    async close() {
      const opened = instance;
      instance = undefined; // a new Pool on this driver (DataSource re-initialised) reopens it
      if (!opened) return;
      const db = await opened.catch(() => undefined);
      if (db && !db.closed) await db.close();
    },
  };

  class Pool extends PGlitePool {
    constructor(_config?: unknown) {
      super(session);
    }
  }
  return {
    Pool,
    async dump() {
      const db = await session.open();
      return (await db.dumpDataDir('none')) as Blob;
    },
  };
}

interface Session {
  lock: FifoLock;
  open(): Promise<PGlite>;
  close(): Promise<void>;
}

export class PGlitePool extends EventEmitter {
  private ended = false;

  constructor(private readonly session: Session) {
    super();
  }

  connect(): Promise<PGliteClient>;
  connect(cb: (err: Error | null, client?: PGliteClient, release?: (err?: unknown) => void) => void): void;
  connect(cb?: (err: Error | null, client?: PGliteClient, release?: (err?: unknown) => void) => void): Promise<PGliteClient> | void {
    const acquired = this.acquire();
    if (!cb) return acquired;
    acquired.then(
      (client) => cb(null, client, client.release),
      (err: unknown) => cb(toError(err)),
    );
  }

  end(): Promise<void>;
  end(cb: (err?: Error) => void): void;
  end(cb?: (err?: Error) => void): Promise<void> | void {
    this.ended = true;
    const closing = this.closeWhenIdle();
    if (!cb) return closing;
    closing.then(
      () => cb(),
      (err: unknown) => cb(toError(err)),
    );
  }

  private async acquire(): Promise<PGliteClient> {
    if (this.ended) throw new Error('PGlite driver: cannot connect, the pool has been ended');
    const db = await this.session.open();
    const unlock = await this.session.lock.acquire();
    return new PGliteClient(db, () => void this.resetThenUnlock(db, unlock));
  }

  /** A runner that releases inside a transaction must not hand that transaction to the next one. */
  private async resetThenUnlock(db: PGlite, unlock: () => void): Promise<void> {
    try {
      if (!db.closed && db.isInTransaction()) {
        await db.exec('ROLLBACK');
        this.emitError(new Error('PGlite driver: session released inside an open transaction; it was rolled back'));
      }
    } catch (err) {
      this.emitError(toError(err));
    } finally {
      unlock();
    }
  }

  private async closeWhenIdle(): Promise<void> {
    // Wait for the current holder so a running query is not cut off; close anyway if it never ends.
    const unlock = await this.session.lock.acquire().catch(() => undefined);
    try {
      await this.session.close();
    } finally {
      unlock?.();
    }
  }

  private emitError(err: Error): void {
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }
}

export class PGliteClient extends EventEmitter {
  private released = false;

  constructor(
    private readonly db: PGlite,
    private readonly onRelease: () => void,
  ) {
    super();
  }

  /** Idempotent, as a second call must not free the session for a second waiter. */
  readonly release = (_err?: unknown): void => {
    if (this.released) return;
    this.released = true;
    this.onRelease();
  };

  query(text: string, params?: unknown[]): Promise<PGliteQueryResult>;
  query(text: string, cb: Callback<PGliteQueryResult>): void;
  query(text: string, params: unknown[] | undefined, cb: Callback<PGliteQueryResult>): void;
  query(
    text: string,
    paramsOrCb?: unknown[] | Callback<PGliteQueryResult>,
    cb?: Callback<PGliteQueryResult>,
  ): Promise<PGliteQueryResult> | void {
    const callback = typeof paramsOrCb === 'function' ? paramsOrCb : cb;
    const params = typeof paramsOrCb === 'function' ? undefined : paramsOrCb;
    const result = this.run(text, params);
    if (!callback) return result;
    result.then(
      (res) => callback(null, res),
      (err: unknown) => callback(toError(err)),
    );
  }

  private async run(text: unknown, params: unknown[] | undefined): Promise<PGliteQueryResult> {
    if (typeof text !== 'string') {
      throw new Error('PGlite driver: only query(text, params) is supported (no query config objects or streams)');
    }
    if (this.released) throw new Error('PGlite driver: client used after release');
    const onNotice = (notice: unknown): void => void this.emit('notice', notice);
    if (params && params.length > 0) {
      return toPgResult(await this.db.query(text, params, { onNotice }), text);
    }
    // Simple protocol: several statements in one string (migrations) run; pg returns the last result.
    const results = await this.db.exec(text, { onNotice });
    return toPgResult(results[results.length - 1], text);
  }
}

class FifoLock {
  private held = false;
  private readonly waiters: Array<(unlock: () => void) => void> = [];

  constructor(private readonly timeoutMs: number) {}

  acquire(): Promise<() => void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve(this.unlocker());
    }
    return new Promise((resolve, reject) => {
      const grant = (unlock: () => void): void => {
        clearTimeout(timer);
        resolve(unlock);
      };
      const timer = setTimeout(() => {
        const index = this.waiters.indexOf(grant);
        if (index !== -1) this.waiters.splice(index, 1);
        reject(
          new Error(
            `PGlite driver: timed out after ${this.timeoutMs} ms waiting for the database session. ` +
              'PGlite has a single session, held by another query runner; a query made outside a running ' +
              "transaction (another repository or manager than the transaction's) waits for that transaction.",
          ),
        );
      }, this.timeoutMs);
      this.waiters.push(grant);
    });
  }

  /** Hands the lock straight to the next waiter, so no newcomer can overtake the queue. */
  private unlocker(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiters.shift();
      if (next) next(this.unlocker());
      else this.held = false;
    };
  }
}

async function openPGlite(options: PGliteDriverOptions): Promise<PGlite> {
  // Loaded here, not at the top: the app on a real PostgreSQL server never loads the wasm.
  // require, not import(): the same (CommonJS) build as the contrib extensions passed in.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pglite = require('@electric-sql/pglite') as PGliteModule;
  const { dataDir, extensions, loadDataDir } = options;
  if (dataDir && !/^[a-z][a-z0-9+.-]*:\/\//i.test(dataDir)) {
    mkdirSync(dirname(dataDir), { recursive: true }); // PGlite creates the directory but not its parents
  }
  return pglite.PGlite.create({
    dataDir,
    loadDataDir,
    // The caller passes PGlite Extension objects; the option is typed loosely so that callers need no PGlite types.
    extensions: extensions as PGliteOptions['extensions'],
    ...pgCompatibleTypes(pglite),
  });
}

/**
 * PGlite's default parsers and serializers differ from `pg` where TypeORM and our mappers notice:
 * int8 comes back as a number (or a BigInt past 2^53) instead of a string, bytea as Uint8Array
 * instead of Buffer, date as UTC midnight instead of local midnight (TypeORM reads it back with
 * local getters, so west of UTC it loses a day), and a Date parameter for a timestamp/date column is
 * sent in UTC instead of local time (so it does not round-trip outside UTC). Array types follow,
 * since PGlite builds their parsers from the element type's. Not aligned: interval stays a string
 * (pg: an object), numeric[] stays strings (pg: numbers), bytea assumes `bytea_output = hex`.
 */
function pgCompatibleTypes(pglite: PGliteModule): Pick<PGliteOptions, 'parsers' | 'serializers'> {
  const { types } = pglite;
  const defaults = types.serializers;
  const localDateTime =
    (withTime: boolean, fallback: (value: unknown) => string) =>
    (value: unknown): string =>
      value instanceof Date ? formatLocal(value, withTime) : fallback(value);
  return {
    parsers: {
      [types.INT8]: (value: string) => value,
      [types.BYTEA]: (value: string) => Buffer.from(value.slice(2), 'hex'),
      [types.DATE]: parseLocalDate,
    },
    serializers: {
      [types.BYTEA]: (value: unknown) => {
        if (typeof value === 'string') return value;
        if (value instanceof Uint8Array) {
          return `\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
        }
        throw new TypeError('PGlite driver: a bytea parameter must be a Buffer, a Uint8Array or a string');
      },
      [types.DATE]: localDateTime(false, defaults[types.DATE]),
      [types.TIMESTAMP]: localDateTime(true, defaults[types.TIMESTAMP]),
    },
  };
}

/** Like `postgres-date` (used by `pg`): 'YYYY-MM-DD' is local midnight. */
function parseLocalDate(value: string): Date | number | string {
  if (value === 'infinity') return Infinity;
  if (value === '-infinity') return -Infinity;
  const match = /^(\d+)-(\d{2})-(\d{2})( BC)?$/.exec(value);
  if (!match) return value;
  const year = match[4] ? 1 - Number(match[1]) : Number(match[1]);
  const date = new Date(year, Number(match[2]) - 1, Number(match[3]));
  date.setFullYear(year); // years 0–99 would otherwise mean 1900–1999
  return date;
}

function formatLocal(date: Date, withTime: boolean): string {
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  const year = date.getFullYear();
  let text = `${pad(year < 1 ? 1 - year : year, 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  if (withTime) {
    text += ` ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
  }
  return year < 1 ? `${text} BC` : text;
}

const COUNTED_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'COPY']);

function toPgResult(result: Results | undefined, text: string): PGliteQueryResult {
  const command = result?.command ?? firstKeyword(text);
  return {
    rows: (result?.rows ?? []) as Record<string, unknown>[],
    // PGlite reports the statement's own count from the command tag, as pg does; its affectedRows
    // is cumulative over a multi-statement exec and 0 for SELECT, so it is only a fallback.
    rowCount: result?.rowCount ?? (COUNTED_COMMANDS.has(command) ? (result?.affectedRows ?? null) : null),
    command,
    fields: result?.fields ?? [],
  };
}

function firstKeyword(sql: string): string {
  const body = sql.replace(/^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/|\()*/, '');
  return /^[A-Za-z]+/.exec(body)?.[0].toUpperCase() ?? '';
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
