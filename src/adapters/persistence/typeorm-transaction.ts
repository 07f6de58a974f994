import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Transaction } from '../../application/ports/transaction';

@Injectable()
export class TypeOrmTransaction implements Transaction {
  private readonly scope = new AsyncLocalStorage<EntityManager>();

  constructor(private readonly dataSource: DataSource) {}

  /** The transaction's manager inside `run`, the data source's outside. */
  get manager(): EntityManager {
    return this.scope.getStore() ?? this.dataSource.manager;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.scope.getStore()) return work(); // nested: join the outer transaction
    return this.dataSource.transaction((manager) => this.scope.run(manager, work));
  }
}
