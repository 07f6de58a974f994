import { OneTimeToken, OneTimeTokenKind, OneTimeTokenRepository } from '../../src/application/ports/one-time-token.repository';

export class InMemoryOneTimeTokenRepository extends OneTimeTokenRepository {
  readonly rows = new Map<string, OneTimeToken>();

  async insert(token: OneTimeToken): Promise<void> {
    this.rows.set(token.tokenHash, copy(token));
  }

  async voidUnused(userId: string, kind: OneTimeTokenKind, now: Date): Promise<void> {
    for (const t of this.rows.values()) if (t.userId === userId && t.kind === kind && !t.usedAt) t.usedAt = now;
  }

  async find(tokenHash: string, kind: OneTimeTokenKind): Promise<OneTimeToken | null> {
    const t = this.rows.get(tokenHash);
    return t && t.kind === kind ? copy(t) : null;
  }

  async consume(tokenHash: string, now: Date): Promise<boolean> {
    const t = this.rows.get(tokenHash);
    if (!t || t.usedAt || t.expiresAt <= now) return false;
    t.usedAt = now;
    return true;
  }

  async recordFailedAttempt(tokenHash: string, now: Date, max: number): Promise<number | null> {
    const t = this.rows.get(tokenHash);
    if (!t || t.usedAt || t.expiresAt <= now) return null;
    t.attempts += 1;
    if (t.attempts >= max) t.usedAt = now;
    return t.attempts;
  }

  async updatePayload(tokenHash: string, payload: Record<string, unknown>): Promise<void> {
    const t = this.rows.get(tokenHash);
    if (t) t.payload = structuredClone(payload);
  }

  async voidUnusedForEmail(realmId: string, email: string, kind: OneTimeTokenKind, now: Date): Promise<void> {
    for (const t of this.rows.values()) if (t.realmId === realmId && t.email === email && t.kind === kind && !t.usedAt) t.usedAt = now;
  }

  async findLatestForEmail(realmId: string, email: string, kind: OneTimeTokenKind): Promise<OneTimeToken | null> {
    const matching = [...this.rows.values()].filter((t) => t.realmId === realmId && t.email === email && t.kind === kind);
    matching.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.tokenHash.localeCompare(a.tokenHash));
    return matching[0] ? copy(matching[0]) : null;
  }

  async reserveAttempt(tokenHash: string, now: Date, max: number): Promise<number | null> {
    const t = this.rows.get(tokenHash);
    if (!t || t.usedAt || t.expiresAt <= now || t.attempts >= max) return null;
    t.attempts += 1;
    return t.attempts;
  }

  async setPayloadFlag(tokenHash: string, flag: string, now: Date): Promise<boolean> {
    const t = this.rows.get(tokenHash);
    if (!t || t.usedAt || t.expiresAt <= now || t.payload[flag] === true) return false;
    t.payload = { ...t.payload, [flag]: true };
    return true;
  }
}

/** A row read or written is the caller's own copy, as the database's is: changing it changes nothing stored. */
function copy(token: OneTimeToken): OneTimeToken {
  return { ...token, payload: structuredClone(token.payload) };
}
