import { Realm } from '../../domain/realm/realm';
import { FlatSettings, RealmOverrides, RealmSettings, SETTING_LEAVES } from '../../domain/realm/realm-settings';
import { RealmRecord } from './records/realm.record';

/** A setting's column: its flat name in snake case (`lockoutMaxFailures` → `lockout_max_failures`). */
const column = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Every setting has a nullable column on `RealmRecord` under its flat name (a compile-time check). */
type SettingColumns = { [K in keyof FlatSettings]: RealmRecord[K] };

/** The realm's columns as `RealmRecord` fields, for raw queries. */
export const REALM_COLUMNS = `
  id, name, enabled, ${SETTING_LEAVES.map(({ name }) => `${column(name)} AS "${name}"`).join(', ')},
  created_at AS "createdAt", updated_at AS "updatedAt"`;

export function toRealm(record: RealmRecord, defaults: RealmSettings): Realm {
  const columns: SettingColumns = record;
  const overrides: Record<string, Record<string, unknown> | unknown> = {};
  for (const { name, group, key, setting } of SETTING_LEAVES) {
    const stored = columns[name];
    // A double precision column may come back as a string from some drivers.
    const value = stored !== null && setting.range ? Number(stored) : stored;
    if (group) ((overrides[group] ??= {}) as Record<string, unknown>)[key] = value;
    else overrides[key] = value;
  }
  return Realm.restore(
    {
      id: record.id,
      name: record.name,
      enabled: record.enabled,
      overrides: overrides as RealmOverrides,
      createdAt: new Date(record.createdAt),
      updatedAt: new Date(record.updatedAt),
    },
    defaults,
  );
}

export function toRealmRecord(realm: Realm): RealmRecord {
  const state = realm.snapshot();
  const o = state.overrides as unknown as Record<string, Record<string, unknown>>;
  const record = new RealmRecord();
  record.id = state.id;
  record.name = state.name;
  record.enabled = state.enabled;
  const columns = record as unknown as Record<string, unknown>;
  for (const { name, group, key } of SETTING_LEAVES) columns[name] = group ? o[group][key] : o[key];
  record.createdAt = state.createdAt;
  record.updatedAt = state.updatedAt;
  return record;
}
