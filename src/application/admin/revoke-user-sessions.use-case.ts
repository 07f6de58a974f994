import { Injectable } from '@nestjs/common';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AdminActor, lockTargetUser } from './admin-actor';

@Injectable()
export class RevokeUserSessionsUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly sessions: SessionRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Ends every session of the user; returns how many were still open.
   * @throws DomainError USER_NOT_FOUND | FORBIDDEN (the user became a super-admin since the guard's check)
   */
  async execute(input: { actor: AdminActor; realmId: string; userId: string }): Promise<number> {
    const { actor, realmId } = input;
    const now = this.clock.now();
    return this.tx.run(async () => {
      const user = await lockTargetUser(this.users, actor, realmId, input.userId);
      const revoked = await this.sessions.revokeAllForUser(realmId, user.id, now, 'admin');
      await this.audit.record({
        type: 'session.revoked',
        realmId,
        userId: user.id,
        actorId: actor.id,
        ip: actor.ip,
        at: now,
        details: { by: 'admin', scope: 'all', revoked },
      });
      return revoked;
    });
  }
}
