import { OneTimeToken, OneTimeTokenKind, OneTimeTokenRepository } from '../../src/application/ports/one-time-token.repository';

export class InMemoryOneTimeTokenRepository extends OneTimeTokenRepository {
  readonly rows = new Map<string, OneTimeToken>();

  async insert(token: OneTimeToken): Promise<void> {
    this.rows.set(token.tokenHash, { ...token });
  }

  async voidUnused(userId: string, kind: OneTimeTokenKind, now: Date): Promise<void> {
    for (const t of this.rows.values()) if (t.userId === userId && t.kind === kind && !t.usedAt) t.usedAt = now;
  }

  async find(tokenHash: string, kind: OneTimeTokenKind): Promise<OneTimeToken | null> {
    const t = this.rows.get(tokenHash);
    return t && t.kind === kind ? { ...t } : null;
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
    if (t) t.payload = payload;
  }
}
