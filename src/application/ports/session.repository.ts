import { Session, SessionLifetime, SessionStatus } from '../../domain/session/session';

export interface SessionQuery {
  realmId: string;
  userId?: string;
  status?: SessionStatus;
  /** Sessions of these users are left out (and not counted). */
  excludeUserIds?: readonly string[];
  page: number;
  limit: number;
  now: Date;
  /** The realm's session limits (`RealmPolicy.sessionLifetime`). */
  lifetime: SessionLifetime;
}

export abstract class SessionRepository {
  /** Batchable (`Transaction.batch`). */
  abstract insert(session: Session): Promise<void>;
  /**
   * Stores a session's changed state. A revocation is final: a copy read before the session was
   * revoked (by a logout, an administrator, a suspension) never brings it back — false then, and
   * nothing is written.
   */
  abstract save(session: Session): Promise<boolean>;
  abstract findById(realmId: string, id: string): Promise<Session | null>;
  /**
   * Whether the session exists, is not revoked and has not passed its idle timeout or absolute
   * lifetime at `now` under the realm's `lifetime` (as `Session.isLive`) — one indexed read.
   */
  abstract isLive(realmId: string, id: string, now: Date, lifetime: SessionLifetime): Promise<boolean>;
  /** Revokes one live session; false when it was already ended or does not exist. */
  abstract revoke(realmId: string, id: string, now: Date, reason: string): Promise<boolean>;
  /** Revokes every live session of the user except `exceptSessionId`; returns how many. */
  abstract revokeAllForUser(realmId: string, userId: string, now: Date, reason: string, exceptSessionId?: string): Promise<number>;
  /** Sets the organization a live session acts in (null for none); false when the session is revoked or unknown. */
  abstract setActiveOrganization(realmId: string, id: string, organizationId: string | null): Promise<boolean>;
  /** Live sessions (neither revoked nor expired), newest first. */
  abstract list(query: SessionQuery): Promise<{ sessions: Session[]; total: number }>;
}
