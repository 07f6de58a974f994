import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Transaction } from '../../application/ports/transaction';

/** The part of a `pg` pool used for prepared statements. */
interface PgPool {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

@Injectable()
export class TypeOrmTransaction implements Transaction {
  private readonly scope = new AsyncLocalStorage<EntityManager>();

  constructor(private readonly dataSource: DataSource) {}

  /** The transaction's manager inside `run`, the data source's outside. */
  get manager(): EntityManager {
    return this.scope.getStore() ?? this.dataSource.manager;
  }

  /**
   * One statement. Inside `run` it joins the transaction; outside, on PostgreSQL, it runs straight
   * on the pool as a named prepared statement: parsed and planned once per connection instead of
   * on every call, and without a TypeORM query runner. For the hot paths (access-token check,
   * refresh, login); `name` must always come with the same `text`.
   */
  async prepared<T>(name: string, text: string, params: unknown[]): Promise<T[]> {
    const manager = this.scope.getStore();
    const pool = manager ? null : this.pool();
    if (!pool) return (manager ?? this.dataSource.manager).query(text, params);
    return (await pool.query({ name, text, values: params })).rows as T[];
  }

  /**
   * `prepared` for statements assembled from a bounded set of fragments (list filters and sorts):
   * each distinct text is its own prepared statement, named by its hash.
   */
  preparedText<T>(text: string, params: unknown[]): Promise<T[]> {
    return this.prepared<T>(`s${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text, params);
  }

  private pool(): PgPool | null {
    // The embedded database's driver takes plain queries only (and serialises them anyway).
    if ((this.dataSource.options as { driver?: unknown }).driver) return null;
    const master = (this.dataSource.driver as unknown as { master?: Partial<PgPool> }).master;
    return master && typeof master.query === 'function' ? (master as PgPool) : null;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.scope.getStore()) return work(); // nested: join the outer transaction
    return this.dataSource.transaction((manager) => this.scope.run(manager, work));
  }
}
