/**
 * Where the proof ids (`jti`) already seen are remembered. `firstUse` answers true the first time
 * a key is offered and false for every later offer before `expiresAt`. With several instances of
 * a resource server behind one name, give them a shared store (for example Redis `SET key 1 NX
 * PXAT expiresAt`), or a proof accepted by one instance can be replayed once on each other one.
 */
export interface ReplayCache {
  firstUse(key: string, expiresAt: number): boolean | Promise<boolean>;
}

/**
 * A {@link ReplayCache} in this process's memory. Entries live until their expiry; at most
 * `maxEntries` are kept, and when that many are still live, the oldest is forgotten first (a
 * proof that old is refused by its `iat` anyway unless the window is very long).
 */
export class MemoryReplayCache implements ReplayCache {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly maxEntries = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  firstUse(key: string, expiresAt: number): boolean {
    const now = this.now();
    const known = this.seen.get(key);
    if (known !== undefined && known > now) return false;
    this.sweep(now);
    this.seen.delete(key);
    this.seen.set(key, expiresAt);
    return true;
  }

  /** Drops expired entries (oldest first), then the oldest live ones beyond the limit. */
  private sweep(now: number): void {
    for (const [key, expiresAt] of this.seen) {
      if (this.seen.size < this.maxEntries && expiresAt > now) break;
      this.seen.delete(key);
    }
  }
}
