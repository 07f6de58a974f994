import { Injectable } from '@nestjs/common';
import { RealmRepository } from '../../application/ports/realm.repository';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { sqlState, UNIQUE_VIOLATION } from './database-errors';
import { toRealm, toRealmRecord } from './realm.mapper';
import { RealmRecord } from './records/realm.record';
import { TypeOrmTransaction } from './typeorm-transaction';

@Injectable()
export class TypeOrmRealmRepository implements RealmRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async findById(id: string): Promise<Realm | null> {
    if (!Realm.isValidId(id)) return null;
    const record = await this.tx.manager.getRepository(RealmRecord).findOneBy({ id });
    return record ? toRealm(record) : null;
  }

  async list(): Promise<Realm[]> {
    const records = await this.tx.manager.getRepository(RealmRecord).find({ order: { createdAt: 'ASC', id: 'ASC' } });
    return records.map(toRealm);
  }

  async insert(realm: Realm): Promise<void> {
    try {
      await this.tx.manager.getRepository(RealmRecord).insert(toRealmRecord(realm));
    } catch (error) {
      if (sqlState(error) === UNIQUE_VIOLATION) throw DomainError.validation('id', 'is already taken by another realm');
      throw error;
    }
  }

  async ensure(realm: Realm): Promise<void> {
    const r = toRealmRecord(realm);
    await this.tx.manager.query(
      `INSERT INTO realms (id, name, access_token_ttl_seconds, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
      [r.id, r.name, r.accessTokenTtlSeconds, r.createdAt],
    );
  }
}
