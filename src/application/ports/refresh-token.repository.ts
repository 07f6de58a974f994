import { Session } from '../../domain/session/session';
import { User } from '../../domain/user/user';

export interface RefreshTokenRecord {
  tokenHash: string;
  sessionId: string;
  createdAt: Date;
  rotatedAt: Date | null;
}

export interface RefreshTokenContext {
  token: RefreshTokenRecord;
  session: Session;
  user: User;
}

export abstract class RefreshTokenRepository {
  /** Batchable (`Transaction.batch`). */
  abstract insert(tokenHash: string, sessionId: string, now: Date): Promise<void>;
  /** The token with its session and user, in one round trip; null when the hash is unknown. */
  abstract findWithSession(tokenHash: string): Promise<RefreshTokenContext | null>;
  /**
   * Marks a live token rotated. Atomic: of concurrent callers exactly one gets true.
   */
  abstract markRotated(tokenHash: string, now: Date): Promise<boolean>;
  /**
   * Rotates a live token in one atomic step: marks it rotated, stores `successorHash` for the same
   * session and records the session's use (`session` already touched: last activity, IP,
   * location). Of concurrent callers exactly one gets true; the others change nothing.
   */
  abstract rotate(tokenHash: string, successorHash: string, session: Session, now: Date): Promise<boolean>;
  /** The rotation time of a token, read after losing a rotation race. */
  abstract rotatedAt(tokenHash: string): Promise<Date | null>;
  /** Removes every refresh token of a session, so none issued before now works again. */
  abstract deleteAllForSession(sessionId: string): Promise<number>;
}
