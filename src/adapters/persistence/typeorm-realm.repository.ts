import { Injectable } from '@nestjs/common';
import { RealmRepository } from '../../application/ports/realm.repository';
import { RealmDefaults } from '../../application/realm/realm-defaults';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { sqlState, UNIQUE_VIOLATION } from './database-errors';
import { REALM_COLUMNS, toRealm, toRealmRecord } from './realm.mapper';
import { RealmRecord } from './records/realm.record';
import { TypeOrmTransaction } from './typeorm-transaction';

@Injectable()
export class TypeOrmRealmRepository implements RealmRepository {
  constructor(
    private readonly tx: TypeOrmTransaction,
    private readonly defaults: RealmDefaults,
  ) {}

  async findById(id: string): Promise<Realm | null> {
    if (!Realm.isValidId(id)) return null;
    const rows = await this.tx.prepared<RealmRecord>('realm-by-id', `SELECT ${REALM_COLUMNS} FROM realms WHERE id = $1`, [id]);
    return rows[0] ? toRealm(rows[0], this.defaults.settings) : null;
  }

  async findByIdForUpdate(id: string): Promise<Realm | null> {
    if (!Realm.isValidId(id)) return null;
    const rows: RealmRecord[] = await this.tx.manager.query(`SELECT ${REALM_COLUMNS} FROM realms WHERE id = $1 FOR UPDATE`, [id]);
    return rows[0] ? toRealm(rows[0], this.defaults.settings) : null;
  }

  async list(): Promise<Realm[]> {
    const records = await this.tx.manager.getRepository(RealmRecord).find({ order: { createdAt: 'ASC', id: 'ASC' } });
    return records.map((record) => toRealm(record, this.defaults.settings));
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
      `INSERT INTO realms (id, name, created_at, updated_at) VALUES ($1, $2, $3, $3) ON CONFLICT (id) DO NOTHING`,
      [r.id, r.name, r.createdAt],
    );
  }

  async save(realm: Realm): Promise<void> {
    const { id, createdAt: _createdAt, ...fields } = toRealmRecord(realm);
    await this.tx.manager.getRepository(RealmRecord).update({ id }, fields);
  }
}
