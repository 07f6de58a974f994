import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { RealmRepository } from '../ports/realm.repository';

/** How long this instance trusts a realm it has read: a change made elsewhere is in force within it. */
export const REALM_CACHE_MS = 2_000;

/**
 * The realms as requests see them: every request reads its realm (and the realm of its access
 * token), so each instance keeps them for `REALM_CACHE_MS` and the hot paths (`/me`, refresh) add
 * no query. A change made on another instance takes effect here within that time; one made here
 * at once (`forget`). Concurrent misses for one realm share a single read; unknown realms are not
 * remembered.
 */
@Injectable()
export class RealmDirectory {
  private readonly cache = new Map<string, { realm: Realm; at: number }>();
  private readonly reading = new Map<string, Promise<Realm | null>>();
  /** Bumped by `forget`: a read begun before it must not store what it read. */
  private generation = 0;

  constructor(private readonly realms: RealmRepository) {}

  async find(id: string): Promise<Realm | null> {
    const cached = this.cache.get(id);
    // Monotonic time, not the Clock: freshness between instances is about real elapsed time.
    if (cached && performance.now() - cached.at < REALM_CACHE_MS) return cached.realm;
    let pending = this.reading.get(id);
    if (!pending) {
      pending = this.read(id);
      this.reading.set(id, pending);
    }
    return pending;
  }

  /** After a change made by this instance: the next `find` reads the realm again. */
  forget(id: string): void {
    this.generation += 1;
    this.cache.delete(id);
    this.reading.delete(id);
  }

  private async read(id: string): Promise<Realm | null> {
    const startedAt = performance.now();
    const generation = this.generation;
    const realm = await this.realms.findById(id).finally(() => {
      if (generation === this.generation) this.reading.delete(id);
    });
    if (generation !== this.generation) return realm;
    if (realm) this.cache.set(id, { realm, at: startedAt });
    else this.cache.delete(id);
    return realm;
  }
}
