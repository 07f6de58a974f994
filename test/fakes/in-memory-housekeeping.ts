import { AccessTokens } from '../../src/application/ports/access-tokens';
import { ExpiredDataPurger } from '../../src/application/ports/expired-data-purger';
import { IdTokenKeys } from '../../src/application/ports/id-token-keys';
import { JobLock } from '../../src/application/ports/job-lock';
import { RealmRepository } from '../../src/application/ports/realm.repository';
import { realmDefaultsFrom } from '../../src/application/realm/realm-defaults';
import { loadConfig } from '../../src/config/load-config';
import { DomainError } from '../../src/domain/errors';
import { Realm } from '../../src/domain/realm/realm';
import { RealmSettings } from '../../src/domain/realm/realm-settings';
import { SessionLifetime } from '../../src/domain/session/session';
import { FakeAccessTokens } from './simple-fakes';

/** Rows past retention as plain timestamps; each purge removes up to `limit` of those before the cutoff. */
export class InMemoryExpiredDataPurger extends ExpiredDataPurger {
  readonly calls: { kind: string; cutoff: Date; limit: number }[] = [];
  constructor(
    public sessionsEnded: Date[] = [],
    public tokensSpent: Date[] = [],
    public emailsSent: Date[] = [],
    public auditEvents: Date[] = [],
    public webhooksDelivered: Date[] = [],
  ) {
    super();
  }
  private take(rows: Date[], cutoff: Date, limit: number): [Date[], number] {
    const kept: Date[] = [];
    let deleted = 0;
    for (const row of rows) {
      if (row < cutoff && deleted < limit) deleted += 1;
      else kept.push(row);
    }
    return [kept, deleted];
  }
  /** Sessions per realm that ended by time and are still open; closing removes them from here. */
  readonly endedOpen = new Map<string, number>();
  async closeEndedSessions(realmId: string, now: Date, _lifetime: SessionLifetime, limit: number): Promise<number> {
    this.calls.push({ kind: `close ${realmId}`, cutoff: now, limit });
    const n = Math.min(limit, this.endedOpen.get(realmId) ?? 0);
    this.endedOpen.set(realmId, (this.endedOpen.get(realmId) ?? 0) - n);
    return n;
  }
  async purgeEndedSessions(endedBefore: Date, limit: number): Promise<number> {
    this.calls.push({ kind: 'sessions', cutoff: endedBefore, limit });
    let n: number;
    [this.sessionsEnded, n] = this.take(this.sessionsEnded, endedBefore, limit);
    return n;
  }
  async purgeSpentOneTimeTokens(spentBefore: Date, limit: number): Promise<number> {
    this.calls.push({ kind: 'tokens', cutoff: spentBefore, limit });
    let n: number;
    [this.tokensSpent, n] = this.take(this.tokensSpent, spentBefore, limit);
    return n;
  }
  async purgeDeliveredEmails(sentBefore: Date, limit: number): Promise<number> {
    this.calls.push({ kind: 'emails', cutoff: sentBefore, limit });
    let n: number;
    [this.emailsSent, n] = this.take(this.emailsSent, sentBefore, limit);
    return n;
  }
  async purgeDeliveredWebhooks(deliveredBefore: Date, limit: number): Promise<number> {
    this.calls.push({ kind: 'webhooks', cutoff: deliveredBefore, limit });
    let n: number;
    [this.webhooksDelivered, n] = this.take(this.webhooksDelivered, deliveredBefore, limit);
    return n;
  }
  async purgeExpiredOpArtifacts(expiredBefore: Date, limit: number): Promise<number> {
    this.calls.push({ kind: 'opArtifacts', cutoff: expiredBefore, limit });
    return 0;
  }
  async purgeAuditEvents(before: Date, limit: number): Promise<number> {
    this.calls.push({ kind: 'audit', cutoff: before, limit });
    let n: number;
    [this.auditEvents, n] = this.take(this.auditEvents, before, limit);
    return n;
  }
}

/** An in-process lock; `heldElsewhere` simulates another instance holding it. */
export class InMemoryJobLock extends JobLock {
  heldElsewhere = false;
  private readonly held = new Set<string>();
  async runExclusive(name: string, work: () => Promise<void>): Promise<boolean> {
    if (this.heldElsewhere || this.held.has(name)) return false;
    this.held.add(name);
    try {
      await work();
    } finally {
      this.held.delete(name);
    }
    return true;
  }
}

/** Records scheduled rotations: rotates when the current key is older than the cutoff. */
export class RotatingAccessTokens extends FakeAccessTokens implements AccessTokens {
  keyCreatedAt: Date;
  rotations = 0;
  constructor(keyCreatedAt: Date) {
    super();
    this.keyCreatedAt = keyCreatedAt;
  }
  override async rotateIfOlderThan(cutoff: Date, now: Date): Promise<string | null> {
    if (this.keyCreatedAt >= cutoff) return null;
    this.keyCreatedAt = now;
    this.rotations += 1;
    return `kid-${this.rotations}`;
  }
}

/** ID-token keys that rotate as RotatingAccessTokens do, counted apart. */
export class RotatingIdTokenKeys extends IdTokenKeys {
  rotations = 0;
  constructor(public keyCreatedAt: Date) {
    super();
  }
  async rotateIfOlderThan(cutoff: Date, now: Date): Promise<string | null> {
    if (this.keyCreatedAt >= cutoff) return null;
    this.keyCreatedAt = now;
    this.rotations += 1;
    return `rsa-${this.rotations}`;
  }
}

export class InMemoryRealmRepository extends RealmRepository {
  private readonly rows = new Map<string, Realm>();

  /** `defaults`: the deployment's settings every realm is restored with, as the database adapter's. */
  constructor(
    realms: Realm[] = [],
    private readonly defaults: RealmSettings = realmDefaultsFrom(loadConfig({})),
  ) {
    super();
    for (const realm of realms) this.rows.set(realm.id, this.copy(realm));
  }
  async findById(id: string): Promise<Realm | null> {
    const found = this.rows.get(id);
    return found ? this.copy(found) : null;
  }
  async findByIdForUpdate(id: string): Promise<Realm | null> {
    return this.findById(id);
  }
  /** Writes an existing realm only, as an UPDATE does. */
  async save(realm: Realm): Promise<void> {
    const stored = this.rows.get(realm.id);
    if (stored) this.rows.set(realm.id, Realm.restore({ ...realm.snapshot(), createdAt: stored.createdAt }, this.defaults));
  }
  /** Oldest first. */
  async list(): Promise<Realm[]> {
    return [...this.rows.values()]
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((realm) => this.copy(realm));
  }
  async insert(realm: Realm): Promise<void> {
    if (this.rows.has(realm.id)) throw DomainError.validation('id', 'is already taken by another realm');
    this.rows.set(realm.id, this.copy(realm));
  }
  async ensure(realm: Realm): Promise<void> {
    if (!this.rows.has(realm.id)) this.rows.set(realm.id, this.copy(realm));
  }
  private copy(realm: Realm): Realm {
    return Realm.restore(realm.snapshot(), this.defaults);
  }
}
