import { RefreshTokenContext, RefreshTokenRecord, RefreshTokenRepository } from '../../src/application/ports/refresh-token.repository';
import { Session } from '../../src/domain/session/session';
import { InMemorySessionRepository } from './in-memory-session.repository';
import { InMemoryUserRepository } from './in-memory-user.repository';

export class InMemoryRefreshTokenRepository extends RefreshTokenRepository {
  readonly rows = new Map<string, RefreshTokenRecord>();

  constructor(
    private readonly sessions: InMemorySessionRepository,
    private readonly users: InMemoryUserRepository,
  ) {
    super();
  }

  async insert(tokenHash: string, sessionId: string, now: Date): Promise<void> {
    this.rows.set(tokenHash, { tokenHash, sessionId, createdAt: now, rotatedAt: null });
  }

  async findWithSession(tokenHash: string): Promise<RefreshTokenContext | null> {
    const token = this.rows.get(tokenHash);
    if (!token) return null;
    const stored = this.sessions.rows.get(token.sessionId);
    if (!stored) return null;
    const user = await this.users.findById(stored.realmId, stored.userId);
    const session = await this.sessions.findById(stored.realmId, stored.id);
    return user && session ? { token: { ...token }, session, user } : null;
  }

  async markRotated(tokenHash: string, now: Date): Promise<boolean> {
    const token = this.rows.get(tokenHash);
    if (!token || token.rotatedAt) return false;
    token.rotatedAt = now;
    return true;
  }

  async rotate(tokenHash: string, successorHash: string, session: Session, now: Date): Promise<boolean> {
    if (!(await this.markRotated(tokenHash, now))) return false;
    await this.insert(successorHash, session.id, now);
    await this.sessions.save(session);
    return true;
  }

  async rotatedAt(tokenHash: string): Promise<Date | null> {
    return this.rows.get(tokenHash)?.rotatedAt ?? null;
  }

  async deleteAllForSession(sessionId: string): Promise<number> {
    let removed = 0;
    for (const [hash, token] of this.rows) {
      if (token.sessionId === sessionId) {
        this.rows.delete(hash);
        removed += 1;
      }
    }
    return removed;
  }
}
