import { SessionQuery, SessionRepository } from '../../src/application/ports/session.repository';
import { Session, SessionLifetime } from '../../src/domain/session/session';

export class InMemorySessionRepository extends SessionRepository {
  readonly rows = new Map<string, Session>();

  async insert(session: Session): Promise<void> {
    this.rows.set(session.id, Session.restore(session.snapshot()));
  }

  async setActiveOrganization(realmId: string, id: string, organizationId: string | null): Promise<boolean> {
    const s = this.rows.get(id);
    if (!s || s.realmId !== realmId || s.revokedAt) return false;
    this.rows.set(id, Session.restore({ ...s.snapshot(), activeOrganizationId: organizationId }));
    return true;
  }

  async save(session: Session): Promise<boolean> {
    const stored = this.rows.get(session.id);
    if (!stored || (stored.revokedAt && !session.revokedAt)) return false;
    // As the table: saving never writes the active organization (setActiveOrganization does).
    this.rows.set(session.id, Session.restore({ ...session.snapshot(), activeOrganizationId: stored.activeOrganizationId }));
    return true;
  }

  async findById(realmId: string, id: string): Promise<Session | null> {
    const s = this.rows.get(id);
    return s && s.realmId === realmId ? Session.restore(s.snapshot()) : null;
  }

  async isLive(realmId: string, id: string, now: Date, idle: SessionLifetime): Promise<boolean> {
    const s = this.rows.get(id);
    return !!s && s.realmId === realmId && s.isLive(now, idle);
  }

  async revoke(realmId: string, id: string, now: Date, reason: string): Promise<boolean> {
    const s = this.rows.get(id);
    if (!s || s.realmId !== realmId || s.revokedAt) return false;
    s.revoke(now, reason);
    return true;
  }

  async revokeAllForUser(realmId: string, userId: string, now: Date, reason: string, except?: string): Promise<number> {
    let n = 0;
    for (const s of this.rows.values()) {
      if (s.realmId === realmId && s.userId === userId && !s.revokedAt && s.id !== except) {
        s.revoke(now, reason);
        n += 1;
      }
    }
    return n;
  }

  async list(query: SessionQuery): Promise<{ sessions: Session[]; total: number }> {
    const live = [...this.rows.values()].filter(
      (s) =>
        s.realmId === query.realmId &&
        s.isLive(query.now, query.lifetime) &&
        (!query.userId || s.userId === query.userId) &&
        !query.excludeUserIds?.includes(s.userId),
    );
    return { sessions: live.slice((query.page - 1) * query.limit, query.page * query.limit), total: live.length };
  }
}
