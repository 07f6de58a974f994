/**
 * Where the refresh token is kept when it does not travel in an HttpOnly cookie. Methods may be
 * synchronous or return promises.
 */
export interface TokenStorage {
  get(key: string): string | null | Promise<string | null>;
  set(key: string, value: string): void | Promise<void>;
  remove(key: string): void | Promise<void>;
  /**
   * True when every tab of the origin sees the same storage (as with `localStorage`): the client
   * then coordinates refreshes across tabs, since a refresh token can be rotated only once.
   */
  readonly shared?: boolean;
}

/** Keeps the refresh token in this page's memory only: a reload signs out. For scripts and tests too. */
export function memoryStorage(): TokenStorage {
  const values = new Map<string, string>();
  return {
    get: (key) => values.get(key) ?? null,
    set: (key, value) => void values.set(key, value),
    remove: (key) => void values.delete(key),
  };
}

/**
 * Keeps the refresh token in `localStorage`: it survives reloads and is shared by the tabs of the
 * origin, but any script on the page can read it. Prefer the `'cookie'` transport where possible.
 */
export function localStorageAdapter(storage: Storage = globalThis.localStorage): TokenStorage {
  return {
    get: (key) => storage.getItem(key),
    set: (key, value) => storage.setItem(key, value),
    remove: (key) => storage.removeItem(key),
    shared: true,
  };
}
