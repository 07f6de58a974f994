import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AdminActor, lockTargetUser } from './admin-actor';

@Injectable()
export class DeleteUserUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly sessions: SessionRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Deletes the user with its sessions, refresh tokens, MFA credentials and one-time tokens, in
   * one transaction. Its audit events stay, still naming the user id.
   * @throws DomainError USER_NOT_FOUND
   */
  async execute(input: { actor: AdminActor; realmId: string; userId: string }): Promise<void> {
    const { actor, realmId } = input;
    const now = this.clock.now();
    await this.tx.run(async () => {
      const user = await lockTargetUser(this.users, actor, realmId, input.userId);
      // Ended first, as any revocation ends them: the apps' grants of the user and their back-channel logout.
      await this.sessions.revokeAllForUser(realmId, user.id, now, 'user_deleted');
      if (!(await this.users.delete(realmId, user.id))) throw new DomainError('USER_NOT_FOUND', 'User not found');
      await this.audit.record({
        type: 'user.deleted',
        realmId,
        userId: user.id,
        actorId: actor.id,
        ip: actor.ip,
        at: now,
        details: { email: user.email },
      });
    });
  }
}
