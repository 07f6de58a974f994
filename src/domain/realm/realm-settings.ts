import { DomainError, FieldError } from '../errors';

export type Registration = 'open' | 'closed';

/** The WebAuthn relying party of a realm's ceremonies (W3C WebAuthn §5.4.2, §13.4.9). */
export interface RelyingPartySettings {
  rpId: string;
  rpName: string;
  /** Origins whose ceremonies are accepted, e.g. `https://app.example.com`. */
  origins: string[];
}

export interface LockoutSettings {
  /** Consecutive wrong passwords that lock the account. */
  maxFailures: number;
  /** How long a lock lasts; 0 = until an administrator unlocks. */
  durationSeconds: number;
}

/** A realm's settings with every field set: the values in force. */
export interface RealmSettings {
  publicUrl: string;
  webauthn: RelyingPartySettings;
  registration: Registration;
  requireVerifiedEmail: boolean;
  accessTokenTtlSeconds: number;
  sessionIdleTimeoutSeconds: number;
  sessionMaxLifetimeSeconds: number;
  lockout: LockoutSettings;
  passwordMinLength: number;
  fingerprintMatchThreshold: number;
  /** Where a sign-in elsewhere (an identity provider, an email link) may send a browser back: exact URLs. */
  allowedReturnUrls: string[];
}

type Nullable<T> = { [K in keyof T]: T[K] | null };

/**
 * What a realm stores: each field (and each member of `webauthn` and `lockout`) its own value,
 * or null for the deployment's default.
 */
export interface RealmOverrides {
  publicUrl: string | null;
  webauthn: Nullable<RelyingPartySettings>;
  registration: Registration | null;
  requireVerifiedEmail: boolean | null;
  accessTokenTtlSeconds: number | null;
  sessionIdleTimeoutSeconds: number | null;
  sessionMaxLifetimeSeconds: number | null;
  lockout: Nullable<LockoutSettings>;
  passwordMinLength: number | null;
  fingerprintMatchThreshold: number | null;
  allowedReturnUrls: string[] | null;
}

/**
 * A change to the settings, merged field by field: an absent field stays as it is, null returns
 * it to the deployment default; `webauthn` and `lockout` merge member by member the same way
 * (and null for the whole object resets every member).
 */
export interface RealmSettingsPatch {
  publicUrl?: string | null;
  webauthn?: Partial<Nullable<RelyingPartySettings>> | null;
  registration?: Registration | null;
  requireVerifiedEmail?: boolean | null;
  accessTokenTtlSeconds?: number | null;
  sessionIdleTimeoutSeconds?: number | null;
  sessionMaxLifetimeSeconds?: number | null;
  lockout?: Partial<Nullable<LockoutSettings>> | null;
  passwordMinLength?: number | null;
  fingerprintMatchThreshold?: number | null;
  allowedReturnUrls?: string[] | null;
}

/** The accepted range of every setting; the documentation and the OpenAPI document show the same. */
export const SETTING_RANGES = {
  accessTokenTtlSeconds: { min: 60, max: 86_400 },
  sessionIdleTimeoutSeconds: { min: 300, max: 31_536_000 },
  sessionMaxLifetimeSeconds: { min: 300, max: 31_536_000 },
  lockoutMaxFailures: { min: 1, max: 100 },
  lockoutDurationSeconds: { min: 0, max: 86_400 },
  passwordMinLength: { min: 8, max: 128 },
  fingerprintMatchThreshold: { min: 0.5, max: 0.95 },
} as const;

export const MAX_WEBAUTHN_ORIGINS = 10;
export const MAX_RETURN_URLS = 20;

export function noOverrides(): RealmOverrides {
  return {
    publicUrl: null,
    webauthn: { rpId: null, rpName: null, origins: null },
    registration: null,
    requireVerifiedEmail: null,
    accessTokenTtlSeconds: null,
    sessionIdleTimeoutSeconds: null,
    sessionMaxLifetimeSeconds: null,
    lockout: { maxFailures: null, durationSeconds: null },
    passwordMinLength: null,
    fingerprintMatchThreshold: null,
    allowedReturnUrls: null,
  };
}

export function copyOverrides(o: RealmOverrides): RealmOverrides {
  return {
    ...o,
    webauthn: { ...o.webauthn, origins: o.webauthn.origins ? [...o.webauthn.origins] : null },
    lockout: { ...o.lockout },
    allowedReturnUrls: o.allowedReturnUrls ? [...o.allowedReturnUrls] : null,
  };
}

/** The values in force: each override, or the default where there is none. */
export function effectiveSettings(o: RealmOverrides, defaults: RealmSettings): RealmSettings {
  return {
    publicUrl: o.publicUrl ?? defaults.publicUrl,
    webauthn: {
      rpId: o.webauthn.rpId ?? defaults.webauthn.rpId,
      rpName: o.webauthn.rpName ?? defaults.webauthn.rpName,
      origins: [...(o.webauthn.origins ?? defaults.webauthn.origins)],
    },
    registration: o.registration ?? defaults.registration,
    requireVerifiedEmail: o.requireVerifiedEmail ?? defaults.requireVerifiedEmail,
    accessTokenTtlSeconds: o.accessTokenTtlSeconds ?? defaults.accessTokenTtlSeconds,
    sessionIdleTimeoutSeconds: o.sessionIdleTimeoutSeconds ?? defaults.sessionIdleTimeoutSeconds,
    sessionMaxLifetimeSeconds: o.sessionMaxLifetimeSeconds ?? defaults.sessionMaxLifetimeSeconds,
    lockout: {
      maxFailures: o.lockout.maxFailures ?? defaults.lockout.maxFailures,
      durationSeconds: o.lockout.durationSeconds ?? defaults.lockout.durationSeconds,
    },
    passwordMinLength: o.passwordMinLength ?? defaults.passwordMinLength,
    fingerprintMatchThreshold: o.fingerprintMatchThreshold ?? defaults.fingerprintMatchThreshold,
    allowedReturnUrls: [...(o.allowedReturnUrls ?? defaults.allowedReturnUrls)],
  };
}

// ── parsing a patch ─────────────────────────────────────────────────────────────────

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class Collector {
  readonly errors: FieldError[] = [];
  fail(field: string, message: string): undefined {
    this.errors.push({ field, message });
    return undefined;
  }
}

function integer(c: Collector, field: string, value: unknown, range: { min: number; max: number }): number | null | undefined {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value))
    return c.fail(field, `must be a whole number from ${range.min} to ${range.max}`);
  if (value < range.min || value > range.max) return c.fail(field, `must be from ${range.min} to ${range.max}`);
  return value;
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

function parseWebauthn(c: Collector, value: unknown): Partial<Nullable<RelyingPartySettings>> | null | undefined {
  if (value === null) return null;
  if (!isPlainObject(value)) return c.fail('settings.webauthn', 'must be an object with rpId, rpName and origins');
  const out: Partial<Nullable<RelyingPartySettings>> = {};
  for (const key of Object.keys(value)) {
    const field = `settings.webauthn.${key}`;
    const v = value[key];
    if (key === 'rpId') {
      if (v === null) out.rpId = null;
      else if (typeof v !== 'string' || !HOSTNAME.test(v)) c.fail(field, 'must be a lower-case domain name without scheme or port');
      else out.rpId = v;
    } else if (key === 'rpName') {
      if (v === null) out.rpName = null;
      else if (typeof v !== 'string' || v.trim().length < 1 || v.trim().length > 100) c.fail(field, 'must be 1 to 100 characters');
      else if (/\p{Cc}/u.test(v)) c.fail(field, 'must not contain control characters');
      else out.rpName = v.trim();
    } else if (key === 'origins') {
      if (v === null) out.origins = null;
      else if (!Array.isArray(v) || v.length < 1 || v.length > MAX_WEBAUTHN_ORIGINS) {
        c.fail(field, `must be a list of 1 to ${MAX_WEBAUTHN_ORIGINS} origins`);
      } else {
        const origins = v.map((o) => (typeof o === 'string' ? parseOrigin(o) : null));
        if (origins.some((o) => o === null)) c.fail(field, 'must hold http(s) origins only, like https://app.example.com (no path)');
        else out.origins = [...new Set(origins as string[])];
      }
    } else {
      c.fail(field, 'is not a setting');
    }
  }
  return out;
}

function parseLockout(c: Collector, value: unknown): Partial<Nullable<LockoutSettings>> | null | undefined {
  if (value === null) return null;
  if (!isPlainObject(value)) return c.fail('settings.lockout', 'must be an object with maxFailures and durationSeconds');
  const out: Partial<Nullable<LockoutSettings>> = {};
  for (const key of Object.keys(value)) {
    const field = `settings.lockout.${key}`;
    if (key === 'maxFailures') {
      const v = integer(c, field, value[key], SETTING_RANGES.lockoutMaxFailures);
      if (v !== undefined) out.maxFailures = v;
    } else if (key === 'durationSeconds') {
      const v = integer(c, field, value[key], SETTING_RANGES.lockoutDurationSeconds);
      if (v !== undefined) out.durationSeconds = v;
    } else {
      c.fail(field, 'is not a setting');
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
  const c = new Collector();
  if (!isPlainObject(input))
    throw new DomainError('VALIDATION_FAILED', 'settings must be an object', {
      details: [{ field: 'settings', message: 'must be an object' }],
    });
  const patch: RealmSettingsPatch = {};
  for (const key of Object.keys(input)) {
    const field = `settings.${key}`;
    const value = input[key];
    switch (key) {
      case 'publicUrl':
        if (value === null) patch.publicUrl = null;
        else if (typeof value !== 'string' || !parseBaseUrl(value))
          c.fail(field, 'must be an http(s) URL without credentials, query or fragment');
        else patch.publicUrl = parseBaseUrl(value);
        break;
      case 'webauthn': {
        const v = parseWebauthn(c, value);
        if (v !== undefined) patch.webauthn = v;
        break;
      }
      case 'registration':
        if (value === null || value === 'open' || value === 'closed') patch.registration = value;
        else c.fail(field, 'must be "open" or "closed"');
        break;
      case 'requireVerifiedEmail':
        if (value === null || typeof value === 'boolean') patch.requireVerifiedEmail = value;
        else c.fail(field, 'must be a boolean');
        break;
      case 'accessTokenTtlSeconds':
      case 'sessionIdleTimeoutSeconds':
      case 'sessionMaxLifetimeSeconds':
      case 'passwordMinLength': {
        const v = integer(c, field, value, SETTING_RANGES[key]);
        if (v !== undefined) patch[key] = v;
        break;
      }
      case 'lockout': {
        const v = parseLockout(c, value);
        if (v !== undefined) patch.lockout = v;
        break;
      }
      case 'fingerprintMatchThreshold': {
        const { min, max } = SETTING_RANGES.fingerprintMatchThreshold;
        if (value === null) patch.fingerprintMatchThreshold = null;
        else if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max)
          c.fail(field, `must be a number from ${min} to ${max}`);
        else patch.fingerprintMatchThreshold = value;
        break;
      }
      case 'allowedReturnUrls':
        if (value === null) patch.allowedReturnUrls = null;
        else if (!Array.isArray(value) || value.length > MAX_RETURN_URLS)
          c.fail(field, `must be a list of at most ${MAX_RETURN_URLS} URLs`);
        else if (value.some((u) => parseReturnUrl(u) === null))
          c.fail(field, 'must hold absolute http(s) URLs written as a URL parser writes them, without credentials or fragment');
        else patch.allowedReturnUrls = [...new Set(value as string[])];
        break;
      default:
        c.fail(field, 'is not a setting');
    }
  }
  if (c.errors.length > 0) throw validationFailed(c.errors);
  return patch;
}

export function validationFailed(details: FieldError[]): DomainError {
  return new DomainError('VALIDATION_FAILED', `${details[0].field} ${details[0].message}`, { details });
}

/** The overrides after a patch (already parsed): absent fields kept, nulls reset. */
export function applyPatch(current: RealmOverrides, patch: RealmSettingsPatch): RealmOverrides {
  const next = copyOverrides(current);
  const { webauthn, lockout, ...scalars } = patch;
  Object.assign(next, scalars);
  if (webauthn === null) next.webauthn = { rpId: null, rpName: null, origins: null };
  else if (webauthn) next.webauthn = { ...next.webauthn, ...webauthn };
  if (lockout === null) next.lockout = { maxFailures: null, durationSeconds: null };
  else if (lockout) next.lockout = { ...next.lockout, ...lockout };
  return next;
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
