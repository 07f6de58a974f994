import { DomainError, FieldError } from '../errors';
import { MASTER_REALM } from './master-realm';
import { RealmPolicy } from './realm-policy';
import {
  applyPatch,
  assertConsistent,
  copyOverrides,
  effectiveSettings,
  noOverrides,
  RealmOverrides,
  RealmSettings,
  RealmSettingsPatch,
  validationFailed,
} from './realm-settings';

const REALM_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

export { MASTER_REALM };

export interface RealmState {
  id: string;
  name: string;
  /** A disabled realm signs nobody in and its access tokens are refused; administration goes on. */
  enabled: boolean;
  /** What the realm sets itself; null fields follow the deployment's defaults. */
  overrides: RealmOverrides;
  createdAt: Date;
  updatedAt: Date;
}

export interface RealmChange {
  name?: string;
  enabled?: boolean;
  /** Already parsed (`parseSettingsPatch`). */
  settings?: RealmSettingsPatch;
}

/** What an update changed, field by field, with the values in force before and after. */
export interface RealmChanges {
  changed: string[];
  from: Record<string, unknown>;
  to: Record<string, unknown>;
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (name.length < 1 || name.length > 100) throw DomainError.validation('name', 'must be 1 to 100 characters');
  if (/\p{Cc}/u.test(name)) throw DomainError.validation('name', 'must not contain control characters');
  return name;
}

/** Leaf paths of a settings object: `lockout.maxFailures`, `publicUrl` … */
function flatten(value: object, prefix: string, out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [key, v] of Object.entries(value)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatten(v as object, `${prefix}${key}.`, out);
    else out[`${prefix}${key}`] = v;
  }
  return out;
}

/**
 * A tenant: its users, sessions and tokens are its own, and so are its settings. Each realm is
 * restored with the deployment's defaults, so `settings` and `policy` always give the values in force.
 */
export class Realm {
  private cachedPolicy: RealmPolicy | null = null;

  private constructor(
    private state: RealmState,
    private readonly defaults: RealmSettings,
  ) {}

  /**
   * Creates an enabled realm that follows every default.
   * @throws DomainError VALIDATION_FAILED when the id is not a slug, or the name is empty, too long or holds
   *   control characters (it goes into email subjects and otpauth labels)
   */
  static create(input: { id: string; name: string; now: Date }, defaults: RealmSettings): Realm {
    if (!Realm.isValidId(input.id)) throw DomainError.validation('id', 'must match ^[a-z0-9][a-z0-9-]{0,62}$');
    const name = checkName(input.name);
    return new Realm({ id: input.id, name, enabled: true, overrides: noOverrides(), createdAt: input.now, updatedAt: input.now }, defaults);
  }

  static restore(state: RealmState, defaults: RealmSettings): Realm {
    return new Realm({ ...state, overrides: copyOverrides(state.overrides) }, defaults);
  }

  static isValidId(id: string): boolean {
    return REALM_ID.test(id);
  }

  get id(): string {
    return this.state.id;
  }
  get name(): string {
    return this.state.name;
  }
  get enabled(): boolean {
    return this.state.enabled;
  }
  get createdAt(): Date {
    return this.state.createdAt;
  }
  get updatedAt(): Date {
    return this.state.updatedAt;
  }

  /** Every setting with the value in force: the realm's own, else the deployment default. */
  get settings(): RealmSettings {
    const settings = effectiveSettings(this.state.overrides, this.defaults);
    // Nobody registers into the realm that administers every other one.
    if (this.state.id === MASTER_REALM) settings.registration = 'closed';
    return settings;
  }

  get policy(): RealmPolicy {
    this.cachedPolicy ??= RealmPolicy.of(this.settings);
    return this.cachedPolicy;
  }

  /**
   * Renames, enables or disables the realm and merges a settings change field by field (null
   * returns a field to the default). Nothing changes unless all of it is valid.
   * @returns the fields that changed, with the values in force before and after
   * @throws DomainError VALIDATION_FAILED for a bad name, inconsistent settings, opening `master` to
   *   registration or disabling it
   */
  update(change: RealmChange, now: Date): RealmChanges {
    const errors: FieldError[] = [];
    const isMaster = this.state.id === MASTER_REALM;
    if (isMaster && change.settings?.registration === 'open') {
      errors.push({ field: 'settings.registration', message: `is always closed in the ${MASTER_REALM} realm` });
    }
    if (isMaster && change.enabled === false) {
      errors.push({ field: 'enabled', message: `the ${MASTER_REALM} realm cannot be disabled: its super-admins administer every realm` });
    }
    if (errors.length > 0) throw validationFailed(errors);
    const name = change.name === undefined ? this.state.name : checkName(change.name);
    const overrides = change.settings ? applyPatch(this.state.overrides, change.settings) : this.state.overrides;
    const next = Realm.restore(
      { ...this.state, name, enabled: change.enabled ?? this.state.enabled, overrides, updatedAt: now },
      this.defaults,
    );
    assertConsistent(overrides, next.settings);

    const before = { name: this.name, enabled: this.enabled, ...flatten(this.settings, 'settings.') };
    const beforeStored = flatten(this.state.overrides, 'settings.');
    const after = { name: next.name, enabled: next.enabled, ...flatten(next.settings, 'settings.') };
    const afterStored = flatten(overrides, 'settings.');
    const changes: RealmChanges = { changed: [], from: {}, to: {} };
    for (const field of Object.keys(after)) {
      const differs = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);
      if (
        differs(before[field as keyof typeof before], after[field as keyof typeof after]) ||
        differs(beforeStored[field], afterStored[field])
      ) {
        changes.changed.push(field);
        changes.from[field] = before[field as keyof typeof before];
        changes.to[field] = after[field as keyof typeof after];
      }
    }
    if (changes.changed.length > 0) {
      this.state = { ...next.state };
      this.cachedPolicy = null;
    }
    return changes;
  }

  snapshot(): RealmState {
    return { ...this.state, overrides: copyOverrides(this.state.overrides) };
  }
}
