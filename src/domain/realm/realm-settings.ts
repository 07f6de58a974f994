import { DomainError, FieldError } from '../errors';
import { DEFAULT_FINGERPRINT_MATCH_THRESHOLD } from '../session/device-fingerprint';
import { PASSWORD_MIN_LENGTH } from '../user/password-policy';

export interface Range {
  min: number;
  max: number;
}

/** Why a value is refused, in words that say what is accepted (`must be …`). */
export class Refusal {
  constructor(readonly message: string) {}
}

const refuse = (message: string): Refusal => new Refusal(message);

/**
 * The environment variable that sets a setting's deployment default. With `read`,
 * `load-config.ts` reads it by these rules into the `AppConfig` field of the setting's name
 * (`lockout.maxFailures` → `lockoutMaxFailures`); without, it reads the variable itself (its
 * default is derived from other variables) into that field.
 */
export interface EnvironmentVariable {
  variable: string;
  read?: { type: 'integer'; fallback: number; min: number; max?: number } | { type: 'ratio'; fallback: number };
}

/** One setting: how a value is read from a change, its range, and where its deployment default comes from. */
export interface Setting<T> {
  /** Reads a value from untrusted input (never null: null returns a setting to its default). */
  parse(value: unknown): T | Refusal;
  /** The accepted range of a number, shown by the OpenAPI document. */
  range?: Range;
  /** The deployment default, where no environment variable sets it. */
  default?: T;
  env?: EnvironmentVariable;
}

/** Settings changed and reset member by member (`webauthn.rpId`, `lockout.maxFailures`). */
export interface SettingGroup {
  members: Record<string, Setting<unknown>>;
  /** The refusal of a value that is not an object. */
  shape: string;
}

function wholeNumber(range: Range) {
  return (value: unknown): number | Refusal => {
    if (typeof value !== 'number' || !Number.isInteger(value)) return refuse(`must be a whole number from ${range.min} to ${range.max}`);
    if (value < range.min || value > range.max) return refuse(`must be from ${range.min} to ${range.max}`);
    return value;
  };
}

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export const MAX_WEBAUTHN_ORIGINS = 10;
export const MAX_RETURN_URLS = 20;

const TOKEN_TTL = { min: 60, max: 86_400 };
const SESSION_SECONDS = { min: 300, max: 31_536_000 };
const LOCKOUT_FAILURES = { min: 1, max: 100 };
const LOCKOUT_SECONDS = { min: 0, max: 86_400 };
const PASSWORD_LENGTH = { min: 8, max: 128 };
const FINGERPRINT_THRESHOLD = { min: 0.5, max: 0.95 };

/**
 * Every realm setting, in the order the API shows them. The types below, the
 * defaults, the parsing of a change, the merging and the environment's defaults all follow from
 * this table: a new setting is one entry here, plus its column and its use.
 */
export const REALM_SETTINGS = {
  /** Base of the links in the realm's emails (its frontend), without a trailing slash. */
  publicUrl: {
    parse: (value: unknown): string | Refusal =>
      (typeof value === 'string' ? parseBaseUrl(value) : null) ?? refuse('must be an http(s) URL without credentials, query or fragment'),
    env: { variable: 'PUBLIC_URL' },
  },
  /** The WebAuthn relying party of the realm's ceremonies (W3C WebAuthn §5.4.2, §13.4.9). */
  webauthn: {
    shape: 'must be an object with rpId, rpName and origins',
    members: {
      rpId: {
        parse: (value: unknown): string | Refusal =>
          typeof value === 'string' && HOSTNAME.test(value) ? value : refuse('must be a lower-case domain name without scheme or port'),
        env: { variable: 'WEBAUTHN_RP_ID' },
      },
      rpName: {
        parse: (value: unknown): string | Refusal => {
          if (typeof value !== 'string' || value.trim().length < 1 || value.trim().length > 100)
            return refuse('must be 1 to 100 characters');
          if (/\p{Cc}/u.test(value)) return refuse('must not contain control characters');
          return value.trim();
        },
        env: { variable: 'WEBAUTHN_RP_NAME' },
      },
      /** Origins whose ceremonies are accepted, e.g. `https://app.example.com`. */
      origins: {
        parse: (value: unknown): string[] | Refusal => {
          if (!Array.isArray(value) || value.length < 1 || value.length > MAX_WEBAUTHN_ORIGINS)
            return refuse(`must be a list of 1 to ${MAX_WEBAUTHN_ORIGINS} origins`);
          const origins = value.map((o) => (typeof o === 'string' ? parseOrigin(o) : null));
          if (origins.some((o) => o === null)) return refuse('must hold http(s) origins only, like https://app.example.com (no path)');
          return [...new Set(origins as string[])];
        },
        env: { variable: 'WEBAUTHN_ORIGINS' },
      },
    },
  },
  /** Closed: nobody registers themselves (administrators still create users). */
  registration: {
    parse: (value: unknown): 'open' | 'closed' | Refusal =>
      value === 'open' || value === 'closed' ? value : refuse('must be "open" or "closed"'),
    default: 'open',
  },
  requireVerifiedEmail: {
    parse: (value: unknown): boolean | Refusal => (typeof value === 'boolean' ? value : refuse('must be a boolean')),
    default: false,
  },
  accessTokenTtlSeconds: {
    parse: wholeNumber(TOKEN_TTL),
    range: TOKEN_TTL,
    env: { variable: 'ACCESS_TOKEN_TTL_SECONDS', read: { type: 'integer', fallback: 900, min: 1, max: 86_400 } },
  },
  sessionIdleTimeoutSeconds: {
    parse: wholeNumber(SESSION_SECONDS),
    range: SESSION_SECONDS,
    env: { variable: 'SESSION_IDLE_TIMEOUT_SECONDS', read: { type: 'integer', fallback: 604_800, min: 1 } },
  },
  sessionMaxLifetimeSeconds: {
    parse: wholeNumber(SESSION_SECONDS),
    range: SESSION_SECONDS,
    env: { variable: 'SESSION_MAX_LIFETIME_SECONDS', read: { type: 'integer', fallback: 2_592_000, min: 1 } },
  },
  lockout: {
    shape: 'must be an object with maxFailures and durationSeconds',
    members: {
      /** Consecutive wrong passwords that lock the account. */
      maxFailures: {
        parse: wholeNumber(LOCKOUT_FAILURES),
        range: LOCKOUT_FAILURES,
        env: { variable: 'LOCKOUT_MAX_FAILURES', read: { type: 'integer', fallback: 10, min: 1, max: 1000 } },
      },
      /** How long a lock lasts; 0 = until an administrator unlocks. */
      durationSeconds: {
        parse: wholeNumber(LOCKOUT_SECONDS),
        range: LOCKOUT_SECONDS,
        env: { variable: 'LOCKOUT_DURATION_SECONDS', read: { type: 'integer', fallback: 900, min: 0 } },
      },
    },
  },
  passwordMinLength: {
    parse: wholeNumber(PASSWORD_LENGTH),
    range: PASSWORD_LENGTH,
    default: PASSWORD_MIN_LENGTH,
  },
  fingerprintMatchThreshold: {
    parse: (value: unknown): number | Refusal => {
      const { min, max } = FINGERPRINT_THRESHOLD;
      return typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max
        ? value
        : refuse(`must be a number from ${min} to ${max}`);
    },
    range: FINGERPRINT_THRESHOLD,
    env: { variable: 'FINGERPRINT_MATCH_THRESHOLD', read: { type: 'ratio', fallback: DEFAULT_FINGERPRINT_MATCH_THRESHOLD } },
  },
  /** Where a sign-in elsewhere (an identity provider, an email link) may send a browser back: exact URLs. */
  allowedReturnUrls: {
    parse: (value: unknown): string[] | Refusal => {
      if (!Array.isArray(value) || value.length > MAX_RETURN_URLS) return refuse(`must be a list of at most ${MAX_RETURN_URLS} URLs`);
      if (value.some((u) => parseReturnUrl(u) === null))
        return refuse('must hold absolute http(s) URLs written as a URL parser writes them, without credentials or fragment');
      return [...new Set(value as string[])];
    },
    default: [] as string[],
  },
  /**
   * Dynamic client registration at the realm's OpenID provider (RFC 7591): `closed` (no
   * endpoint), `token` (with an initial access token), `open` (anyone; public clients only).
   */
  clientRegistration: {
    parse: (value: unknown): 'closed' | 'token' | 'open' | Refusal =>
      value === 'closed' || value === 'token' || value === 'open' ? value : refuse('must be "closed", "token" or "open"'),
    default: 'closed',
  },
} satisfies Record<string, Setting<unknown> | SettingGroup>;

type Table = typeof REALM_SETTINGS;
type ValueOf<D> = D extends { members: infer M }
  ? { -readonly [K in keyof M]: ValueOf<M[K]> }
  : D extends { parse(value: unknown): infer T }
    ? Exclude<T, Refusal>
    : never;
type Nullable<T> = { [K in keyof T]: T[K] | null };

/** A realm's settings with every field set: the values in force. */
export type RealmSettings = { -readonly [K in keyof Table]: ValueOf<Table[K]> };
export type RelyingPartySettings = RealmSettings['webauthn'];
export type LockoutSettings = RealmSettings['lockout'];
export type Registration = RealmSettings['registration'];
export type ClientRegistrationMode = RealmSettings['clientRegistration'];

/**
 * What a realm stores: each field (and each member of `webauthn` and `lockout`) its own value,
 * or null for the deployment's default.
 */
export type RealmOverrides = {
  [K in keyof Table]: Table[K] extends SettingGroup ? Nullable<RealmSettings[K]> : RealmSettings[K] | null;
};

/**
 * A change to the settings, merged field by field: an absent field stays as it is, null returns
 * it to the deployment default; `webauthn` and `lockout` merge member by member the same way
 * (and null for the whole object resets every member).
 */
export type RealmSettingsPatch = {
  [K in keyof Table]?: (Table[K] extends SettingGroup ? Partial<Nullable<RealmSettings[K]>> : RealmSettings[K]) | null;
};

/** Each setting and group member as `[flat name, descriptor]`: `lockout.maxFailures` is `lockoutMaxFailures`. */
type Leaves = {
  [K in keyof Table & string]: Table[K] extends { members: infer M }
    ? { [P in keyof M & string]: [`${K}${Capitalize<P>}`, M[P]] }[keyof M & string]
    : [K, Table[K]];
}[keyof Table & string];

/** Every setting by its flat name: the name of its column and, where the environment sets it, of its `AppConfig` field. */
export type FlatSettings = { [L in Leaves as L[0]]: ValueOf<L[1]> };
/** The settings whose deployment default an environment variable sets, by flat name. */
export type SettingsFromEnvironment = { [L in Leaves as L[1] extends { env: EnvironmentVariable } ? L[0] : never]: ValueOf<L[1]> };
/** Those among them that `load-config.ts` reads by the rules of their descriptor. */
export type SettingsReadFromEnvironment = {
  [L in Leaves as L[1] extends { env: { read: object } } ? L[0] : never]: ValueOf<L[1]>;
};

/** One setting or group member with its flat name. */
export interface SettingLeaf {
  name: keyof FlatSettings;
  group: keyof Table | null;
  key: string;
  setting: Setting<unknown>;
}

const flatName = (key: string, group: string | null) =>
  (group ? `${group}${key[0].toUpperCase()}${key.slice(1)}` : key) as keyof FlatSettings;

/** The settings one by one, group members included, in the table's order. */
export const SETTING_LEAVES: readonly SettingLeaf[] = Object.entries(REALM_SETTINGS).flatMap(([key, d]): SettingLeaf[] =>
  'members' in d
    ? Object.entries(d.members as Record<string, Setting<unknown>>).map(([member, setting]) => ({
        name: flatName(member, key),
        group: key as keyof Table,
        key: member,
        setting,
      }))
    : [{ name: flatName(key, null), group: null, key, setting: d as Setting<unknown> }],
);

type Ranged = { [L in Leaves as L[1] extends { range: Range } ? L[0] : never]: Range };

/** The accepted range of every number setting; the documentation and the OpenAPI document show the same. */
export const SETTING_RANGES = Object.fromEntries(
  SETTING_LEAVES.flatMap((leaf) => (leaf.setting.range ? [[leaf.name, leaf.setting.range]] : [])),
) as Ranged;

// ── defaults, overrides and the values in force ─────────────────────────────────────

type Loose = Record<string, unknown>;
const entries = Object.entries(REALM_SETTINGS) as [keyof Table, Setting<unknown> | SettingGroup][];
const isGroup = (d: Setting<unknown> | SettingGroup): d is SettingGroup => 'members' in d;
const copied = <T>(value: T): T => (Array.isArray(value) ? ([...value] as T) : value);

/** Builds a settings-shaped object, each setting's value from `leaf`, each group's members one by one. */
function build(leaf: (setting: Setting<unknown>, key: string, group: string | null) => unknown): Loose {
  const out: Loose = {};
  for (const [key, d] of entries) {
    if (!isGroup(d)) out[key] = leaf(d, key, null);
    else {
      const members: Loose = {};
      for (const [member, setting] of Object.entries(d.members)) members[member] = leaf(setting, member, key);
      out[key] = members;
    }
  }
  return out;
}

/**
 * The deployment's settings: each setting's fixed default, or, for those an environment variable
 * sets, the value read from it (`AppConfig` has one field per such setting, by flat name).
 */
export function deploymentDefaults(fromEnvironment: SettingsFromEnvironment): RealmSettings {
  const values = fromEnvironment as unknown as Loose;
  return build((setting, key, group) => copied(setting.env ? values[flatName(key, group)] : setting.default)) as RealmSettings;
}

/** A copy that shares nothing changeable with `settings`. */
export function copySettings(settings: RealmSettings): RealmSettings {
  const values = settings as unknown as Record<string, Loose>;
  return build((_, key, group) => copied(group ? values[group][key] : values[key])) as RealmSettings;
}

export function noOverrides(): RealmOverrides {
  return build(() => null) as RealmOverrides;
}

export function copyOverrides(o: RealmOverrides): RealmOverrides {
  const stored = o as unknown as Record<string, Loose>;
  return build((_, key, group) => copied(group ? stored[group][key] : stored[key])) as RealmOverrides;
}

/** The values in force: each override, or the default where there is none. */
export function effectiveSettings(o: RealmOverrides, defaults: RealmSettings): RealmSettings {
  const stored = o as unknown as Record<string, Loose>;
  const fallback = defaults as unknown as Record<string, Loose>;
  return build((_, key, group) =>
    copied(group ? (stored[group][key] ?? fallback[group][key]) : (stored[key] ?? fallback[key])),
  ) as RealmSettings;
}

// ── parsing a patch ─────────────────────────────────────────────────────────────────

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An http(s) URL without credentials, query or fragment; trailing slashes dropped. */
export function parseBaseUrl(value: string): string | null {
  if (value.length > 2048 || /\s/.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.search || url.hash || value.includes('#'))
    return null;
  return value.replace(/\/+$/, '');
}

/** An absolute http(s) URL as a parser writes it, without credentials or fragment (a return URL is matched exactly). */
function parseReturnUrl(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2048 || /[\s#\\]/.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.href !== value) return null;
  return value;
}

/** An origin as browsers send it: scheme, host and port only. */
function parseOrigin(value: string): string | null {
  const base = parseBaseUrl(value);
  if (!base) return null;
  const url = new URL(base);
  return url.origin === base ? base : null;
}

/** Reads the members of `input` by `settings`: null kept, unknown names and refused values in `errors`. */
function parseMembers(
  input: Loose,
  settings: Record<string, Setting<unknown> | SettingGroup>,
  prefix: string,
  errors: FieldError[],
): Loose {
  const out: Loose = {};
  for (const key of Object.keys(input)) {
    const field = `${prefix}.${key}`;
    const value = input[key];
    const d = Object.hasOwn(settings, key) ? settings[key] : undefined;
    if (!d) errors.push({ field, message: 'is not a setting' });
    else if (value === null) out[key] = null;
    else if (isGroup(d)) {
      if (isPlainObject(value)) out[key] = parseMembers(value, d.members, field, errors);
      else errors.push({ field, message: d.shape });
    } else {
      const parsed = d.parse(value);
      if (parsed instanceof Refusal) errors.push({ field, message: parsed.message });
      else out[key] = parsed;
    }
  }
  return out;
}

/**
 * Reads a settings change from untrusted input (a request body or the command line), checking
 * every field against its range. Unknown fields are refused, never ignored.
 * @throws DomainError VALIDATION_FAILED with one detail per bad field (`settings.<field>`)
 */
export function parseSettingsPatch(input: unknown): RealmSettingsPatch {
  if (!isPlainObject(input))
    throw new DomainError('VALIDATION_FAILED', 'settings must be an object', {
      details: [{ field: 'settings', message: 'must be an object' }],
    });
  const errors: FieldError[] = [];
  const patch = parseMembers(input, REALM_SETTINGS, 'settings', errors);
  if (errors.length > 0) throw validationFailed(errors);
  return patch as RealmSettingsPatch;
}

export function validationFailed(details: FieldError[]): DomainError {
  return new DomainError('VALIDATION_FAILED', `${details[0].field} ${details[0].message}`, { details });
}

/** The overrides after a patch (already parsed): absent fields kept, nulls reset. */
export function applyPatch(current: RealmOverrides, patch: RealmSettingsPatch): RealmOverrides {
  const next = copyOverrides(current) as unknown as Loose;
  const change = patch as Loose;
  for (const [key, d] of entries) {
    if (!Object.hasOwn(change, key) || change[key] === undefined) continue;
    const value = change[key];
    if (!isGroup(d)) next[key] = value;
    else if (value === null) next[key] = build(() => null)[key];
    else next[key] = { ...(next[key] as Loose), ...(value as Loose) };
  }
  return next as unknown as RealmOverrides;
}

/**
 * Rules between fields, on the values in force: the idle timeout does not exceed the maximum
 * lifetime, and every WebAuthn origin is on the relying party's domain (WebAuthn §5.1.3: the rpId
 * must be the origin's host or a registrable suffix of it). Checked only where the realm sets one
 * of the fields, so a deployment default never makes a realm unchangeable.
 * @throws DomainError VALIDATION_FAILED
 */
export function assertConsistent(overrides: RealmOverrides, effective: RealmSettings): void {
  const errors: FieldError[] = [];
  const lifetimeSet = overrides.sessionIdleTimeoutSeconds !== null || overrides.sessionMaxLifetimeSeconds !== null;
  if (lifetimeSet && effective.sessionIdleTimeoutSeconds > effective.sessionMaxLifetimeSeconds) {
    errors.push({
      field: 'settings.sessionIdleTimeoutSeconds',
      message: `must not exceed sessionMaxLifetimeSeconds (${effective.sessionMaxLifetimeSeconds})`,
    });
  }
  const w = overrides.webauthn;
  if (w.rpId !== null || w.origins !== null) {
    const rpId = effective.webauthn.rpId;
    const foreign = effective.webauthn.origins.filter((origin) => {
      const host = new URL(origin.replace(/:\*$/, '')).hostname; // `http://localhost:*`: any port (development profile)
      return host !== rpId && !host.endsWith(`.${rpId}`);
    });
    if (foreign.length > 0) {
      errors.push({ field: 'settings.webauthn.origins', message: `must be on the domain of rpId "${rpId}": ${foreign.join(', ')} is not` });
    }
  }
  if (errors.length > 0) throw validationFailed(errors);
}
