import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Transaction } from '../../application/ports/transaction';
import { sqlState } from './database-errors';

/** The part of a `pg` pool used for prepared statements. */
interface PgPool {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/** One parameterised statement that returns nothing the caller reads. */
export interface Write {
  text: string;
  params: unknown[];
  /** A write that must change a row: the error its batch or transaction fails with when it changes none. */
  unmatched?: () => Error;
}

/** The SQLSTATE `require_written` raises when a required write of a batch matched no row. */
const REQUIRED_WRITE_UNMATCHED = 'IDB01';

/** Inside `run`: the transaction's manager. Inside `batch`: the writes queued so far. */
type Scope = ({ kind: 'run'; manager: EntityManager } | { kind: 'batch'; writes: Write[]; ended: boolean }) & { effects: (() => void)[] };

@Injectable()
export class TypeOrmTransaction implements Transaction {
  private readonly scope = new AsyncLocalStorage<Scope>();

  /** Statement text → its name; the texts come from a bounded set of fragments, and so does this map. */
  private readonly statementNames = new Map<string, string>();

  constructor(private readonly dataSource: DataSource) {}

  /** The transaction's manager inside `run`, the data source's outside. Refused inside `batch`. */
  get manager(): EntityManager {
    const scope = this.scope.getStore();
    if (!scope) return this.dataSource.manager;
    if (scope.kind === 'run') return scope.manager;
    throw insideBatch('a read or a statement other than `write`');
  }

  /**
   * For reads of shared data that are no part of the caller's unit of work (the signing keys'
   * cache, refilled by whichever request finds it stale): like `manager`, but inside `batch`,
   * which holds no connection, the data source's. Inside `run` it stays the transaction's: on the
   * embedded database the transaction holds the only session.
   */
  get sharedReadManager(): EntityManager {
    const scope = this.scope.getStore();
    return scope?.kind === 'run' ? scope.manager : this.dataSource.manager;
  }

  /**
   * One statement. Inside `run` it joins the transaction; outside, on PostgreSQL, it runs straight
   * on the pool as a named prepared statement: parsed and planned once per connection instead of
   * on every call, and without a TypeORM query runner. For the hot paths (access-token check,
   * refresh, login); `name` must always come with the same `text`. Refused inside `batch`.
   */
  async prepared<T>(name: string, text: string, params: unknown[]): Promise<T[]> {
    const scope = this.scope.getStore();
    if (scope?.kind === 'batch') throw insideBatch('a read or a statement other than `write`');
    if (scope) return scope.manager.query(text, params);
    const pool = this.pool();
    if (!pool) return this.dataSource.manager.query(text, params);
    return (await pool.query({ name, text, values: params })).rows as T[];
  }

  /**
   * `prepared` for statements assembled from a bounded set of fragments (list filters and sorts):
   * each distinct text is its own prepared statement, named by its hash.
   */
  preparedText<T>(text: string, params: unknown[]): Promise<T[]> {
    let name = this.statementNames.get(text);
    if (name === undefined) {
      name = `s${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
      this.statementNames.set(text, name);
    }
    return this.prepared<T>(name, text, params);
  }

  /**
   * A write whose result nobody reads: one INSERT, UPDATE or DELETE (no WITH of its own, no
   * trailing semicolon, `$n` only as placeholders). Inside `batch` it is queued and sent with the
   * batch's other writes; inside `run` it executes at once in the transaction; outside both it
   * executes at once, as a prepared statement on PostgreSQL. With `unmatched`, the write is a
   * condition of the work: when it changes no row, nothing of the batch is stored (inside `run`,
   * the transaction rolls back) and the work fails with `unmatched()`.
   */
  async write(text: string, params: unknown[], unmatched?: () => Error): Promise<void> {
    const scope = this.scope.getStore();
    if (scope?.kind !== 'batch') {
      if (!unmatched) {
        await this.preparedText(text, params);
        return;
      }
      const rows = unwrapRows(await this.preparedText<unknown>(`${text} RETURNING 1`, params));
      if (rows.length === 0) throw unmatched();
      return;
    }
    if (scope.ended) throw new Error('Programming error: a write queued after its batch was sent (work left a call running)');
    scope.writes.push({ text, params, unmatched });
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    const scope = this.scope.getStore();
    if (scope?.kind === 'batch') throw insideBatch('a transaction (`run`)');
    if (scope) return work(); // nested: join the outer transaction
    const effects: (() => void)[] = [];
    const result = await this.dataSource.transaction((manager) => this.scope.run({ kind: 'run', manager, effects }, work));
    runEffects(effects);
    return result;
  }

  afterCommit(effect: () => void): void {
    const scope = this.scope.getStore();
    if (scope) scope.effects.push(effect);
    else runEffects([effect]);
  }

  /**
   * The writes of `work` as one statement: a single statement is atomic without BEGIN/COMMIT,
   * and its foreign keys are checked when all its parts have run. Prepared on PostgreSQL: a
   * given sequence of writes (a login's) always makes the same text.
   */
  async batch<T>(work: () => Promise<T>): Promise<T> {
    if (this.scope.getStore()) return work(); // inside `run`: write at once; inside `batch`: join its queue
    const scope: Scope = { kind: 'batch', writes: [], ended: false, effects: [] };
    let result: T;
    try {
      result = await this.scope.run(scope, work);
    } finally {
      scope.ended = true;
    }
    const statement = combineWrites(scope.writes);
    if (statement) {
      try {
        await this.preparedText(statement.text, statement.params);
      } catch (error) {
        throw unmatchedWrite(scope.writes, error) ?? error;
      }
    }
    runEffects(scope.effects);
    return result;
  }

  private pool(): PgPool | null {
    // The embedded database's driver takes plain queries only (and serialises them anyway).
    if ((this.dataSource.options as { driver?: unknown }).driver) return null;
    const master = (this.dataSource.driver as unknown as { master?: Partial<PgPool> }).master;
    return master && typeof master.query === 'function' ? (master as PgPool) : null;
  }
}

/** `manager.query` of an UPDATE … RETURNING yields `[rows, count]` on PostgreSQL. */
export function unwrapRows<T>(result: T[] | [T[], number]): T[] {
  return Array.isArray(result[0]) ? (result[0] as T[]) : (result as T[]);
}

/** Effects never fail the work whose writes they follow. */
function runEffects(effects: readonly (() => void)[]): void {
  for (const effect of effects) {
    try {
      effect();
    } catch {
      // a log line or a metric that cannot be written is lost, not the stored writes
    }
  }
}

/**
 * Writes as one statement of data-modifying CTEs, `WITH w0 AS (…), w1 AS (…) SELECT 1`, each
 * write's placeholders shifted past the parameters of the writes before it. A required write
 * returns its rows and the final SELECT fails the statement (`require_written`) when it has none.
 * One plain write is sent as it is; none gives null.
 */
export function combineWrites(writes: readonly Write[]): Write | null {
  if (writes.length === 0) return null;
  if (writes.length === 1 && !writes[0].unmatched) return writes[0];
  const params: unknown[] = [];
  const parts = writes.map((write, index) => {
    const offset = params.length;
    params.push(...write.params);
    const text = write.text.replace(/\$(\d+)/g, (_, digits: string) => {
      const n = Number(digits);
      if (n < 1 || n > write.params.length) {
        throw new Error(`Programming error: placeholder $${n} of a batched write that has ${write.params.length} parameters`);
      }
      return `$${n + offset}`;
    });
    return `w${index} AS (${text}${write.unmatched ? ' RETURNING 1' : ''})`;
  });
  const checks = writes.flatMap((write, index) => (write.unmatched ? [`require_written(EXISTS (SELECT 1 FROM w${index}), ${index})`] : []));
  return { text: `WITH ${parts.join(', ')} SELECT ${checks.length ? checks.join(' + ') : '1'}`, params };
}

/** The error of the required write a failed batch statement names, if that is why it failed. */
function unmatchedWrite(writes: readonly Write[], error: unknown): Error | null {
  if (sqlState(error) !== REQUIRED_WRITE_UNMATCHED) return null;
  const part = /write (\d+) of the batch/.exec(error instanceof Error ? error.message : '')?.[1];
  const unmatched = part === undefined ? undefined : writes[Number(part)]?.unmatched;
  return unmatched ? unmatched() : null;
}

function insideBatch(what: string): Error {
  return new Error(
    `Programming error: ${what} inside Transaction.batch, which only queues writes (\`TypeOrmTransaction.write\`) ` +
      'and sends them as one statement when its work returns; read before the batch, or use `run`',
  );
}
