import { Realm } from '../../domain/realm/realm';
import { RealmRecord } from './records/realm.record';

export function toRealm(record: RealmRecord): Realm {
  return Realm.restore({
    id: record.id,
    name: record.name,
    accessTokenTtlSeconds: record.accessTokenTtlSeconds,
    createdAt: new Date(record.createdAt),
  });
}

export function toRealmRecord(realm: Realm): RealmRecord {
  const state = realm.snapshot();
  const record = new RealmRecord();
  record.id = state.id;
  record.name = state.name;
  record.accessTokenTtlSeconds = state.accessTokenTtlSeconds;
  record.createdAt = state.createdAt;
  return record;
}
