import { Injectable } from '@nestjs/common';
import { User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AdminActor, lockTargetUser } from './admin-actor';

@Injectable()
export class SuspendUserUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly sessions: SessionRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * active or locked → suspended; every session is revoked, so its refresh and access tokens
   * stop working at once.
   * @throws DomainError USER_NOT_FOUND | INVALID_USER_STATE
   */
  async execute(input: { actor: AdminActor; realmId: string; userId: string; reason?: string }): Promise<User> {
    const { actor, realmId } = input;
    const now = this.clock.now();
    return this.tx.run(async () => {
      const user = await lockTargetUser(this.users, actor, realmId, input.userId);
      user.suspend(now);
      await this.users.save(user);
      const revoked = await this.sessions.revokeAllForUser(realmId, user.id, now, 'user_suspended');
      await this.audit.record({
        type: 'user.suspended',
        realmId,
        userId: user.id,
        actorId: actor.id,
        ip: actor.ip,
        at: now,
        details: { reason: input.reason ?? null, revokedSessions: revoked },
      });
      return user;
    });
  }
}
