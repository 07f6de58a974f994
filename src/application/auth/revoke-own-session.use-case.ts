import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';

export interface RevokeOwnSessionInput {
  realm: Realm;
  userId: string;
  /** The session of the access token making the request. */
  currentSessionId: string;
  sessionId: string;
  ip: string;
}

const notFound = () => new DomainError('SESSION_NOT_FOUND', 'Session not found');

/**
 * Ends one session at its owner's request and audits `session.revoked` (call inside a
 * transaction). False when the session had already ended (a logout in another tab).
 */
export async function revokeByOwner(
  deps: { sessions: SessionRepository; audit: AuditLog },
  owner: { realmId: string; userId: string; ip: string },
  sessionId: string,
  now: Date,
  details: Record<string, unknown>,
): Promise<boolean> {
  if (!(await deps.sessions.revoke(owner.realmId, sessionId, now, 'revoked_by_user'))) return false;
  await deps.audit.record({
    type: 'session.revoked',
    realmId: owner.realmId,
    userId: owner.userId,
    actorId: owner.userId,
    sessionId,
    ip: owner.ip,
    at: now,
    details: { reason: 'revoked_by_user', ...details },
  });
  return true;
}

/** Ends one of the caller's own sessions (DELETE /sessions/:id). */
@Injectable()
export class RevokeOwnSessionUseCase {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Another user's session, an unknown id and an ended session all answer the same, so the
   * endpoint tells nothing about sessions that are not the caller's.
   * @throws DomainError SESSION_NOT_FOUND
   */
  async execute(input: RevokeOwnSessionInput): Promise<void> {
    const now = this.clock.now();
    const session = await this.sessions.findById(input.realm.id, input.sessionId);
    if (!session || session.userId !== input.userId || !session.isLive(now, input.realm.policy.sessionLifetime)) throw notFound();
    await this.tx.run(async () => {
      const revoked = await revokeByOwner(
        { sessions: this.sessions, audit: this.audit },
        { realmId: input.realm.id, userId: input.userId, ip: input.ip },
        session.id,
        now,
        {
          current: session.id === input.currentSessionId,
        },
      );
      if (!revoked) throw notFound();
    });
  }
}
