import { DomainError } from '../errors';

/**
 * What administrators attach to a user for backends to read from its access tokens. Never changed
 * in place: `User.setAppMetadata` replaces it whole.
 */
export type AppMetadata = Readonly<Record<string, unknown>>;

/** Serialised (JSON, UTF-8) size limit: it travels in every access token of the user. */
export const APP_METADATA_MAX_BYTES = 1024;
/** Objects or arrays nested below the top-level object. */
export const APP_METADATA_MAX_DEPTH = 3;

const FIELD = 'appMetadata';

/**
 * A JSON object within the limits, as it will be stored and put in tokens.
 * @throws DomainError VALIDATION_FAILED when it is not an object, holds a value JSON cannot carry
 *   (a non-finite number), is over 1 KiB serialised or nests deeper than 3 levels
 */
export function parseAppMetadata(value: unknown): AppMetadata {
  if (!isPlainObject(value)) throw DomainError.validation(FIELD, 'must be a JSON object');
  const reserved = findReservedKey(value, FIELD);
  if (reserved) throw DomainError.validation(reserved, RESERVED_KEY_MESSAGE);
  checkValues(value, FIELD, 0);
  const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
  if (bytes > APP_METADATA_MAX_BYTES) {
    throw DomainError.validation(FIELD, `must be at most ${APP_METADATA_MAX_BYTES} bytes serialised (it is ${bytes})`);
  }
  return JSON.parse(JSON.stringify(value)) as AppMetadata;
}

/** `depth`: containers above `value`'s members, the top-level object excluded. */
function checkValues(value: object, path: string, depth: number): void {
  for (const [key, member] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`;
    if (typeof member === 'number' && !Number.isFinite(member)) throw DomainError.validation(at, 'must be a finite number');
    if (member === null || typeof member !== 'object') continue;
    if (depth + 1 > APP_METADATA_MAX_DEPTH) {
      throw DomainError.validation(FIELD, `must nest at most ${APP_METADATA_MAX_DEPTH} levels of objects or arrays (${at} is deeper)`);
    }
    checkValues(member, at, depth + 1);
  }
}

/**
 * Keys that change an object's prototype when a JavaScript program merges the object into
 * another (`Object.assign`, a naive deep merge): refused in anything a client sends, so that no
 * backend merging it is exposed, and rather than dropped without a word.
 */
export const RESERVED_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];
export const RESERVED_KEY_MESSAGE = 'is a reserved key (__proto__, constructor and prototype are refused)';

/** The path (`root.a[0].constructor`) of the first own reserved key in a JSON value, or null. */
export function findReservedKey(value: unknown, root: string): string | null {
  const stack: { value: unknown; path: string }[] = [{ value, path: root }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    const array = Array.isArray(current);
    for (const key of Object.keys(current)) {
      const at = array ? `${path}[${key}]` : path ? `${path}.${key}` : key;
      if (!array && RESERVED_KEYS.includes(key)) return at;
      stack.push({ value: (current as Record<string, unknown>)[key], path: at });
    }
  }
  return null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function isEmptyAppMetadata(metadata: AppMetadata): boolean {
  return Object.keys(metadata).length === 0;
}
