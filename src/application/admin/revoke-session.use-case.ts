import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AdminActor, lockTargetUser } from './admin-actor';

const notFound = () => new DomainError('SESSION_NOT_FOUND', 'Session not found');

@Injectable()
export class RevokeSessionUseCase {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly users: UserRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Ends one live session of the realm; its refresh and access tokens stop working at once.
   * @throws DomainError SESSION_NOT_FOUND for an unknown id, one of another realm, or a session
   *   already ended (revoked or expired) | FORBIDDEN (its owner became a super-admin since the guard's check)
   */
  async execute(input: { actor: AdminActor; realm: Realm; sessionId: string }): Promise<void> {
    const { actor, realm } = input;
    const realmId = realm.id;
    const now = this.clock.now();
    const session = await this.sessions.findById(realmId, input.sessionId);
    if (!session || !session.isLive(now, realm.policy.sessionLifetime)) throw notFound();
    await this.tx.run(async () => {
      // The owner's row, locked: a promotion to super-admin committed after the guard's check is seen.
      await lockTargetUser(this.users, actor, realmId, session.userId).catch((error: unknown) => {
        throw error instanceof DomainError && error.code === 'USER_NOT_FOUND' ? notFound() : error;
      });
      // Conditional on revoked_at IS NULL: of two concurrent revocations one wins, the other is a 404.
      if (!(await this.sessions.revoke(realmId, session.id, now, 'admin'))) throw notFound();
      await this.audit.record({
        type: 'session.revoked',
        realmId,
        userId: session.userId,
        sessionId: session.id,
        actorId: actor.id,
        ip: actor.ip,
        at: now,
        details: { by: 'admin' },
      });
    });
  }
}
