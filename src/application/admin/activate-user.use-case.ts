import { Injectable } from '@nestjs/common';
import { User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AdminActor, lockTargetUser } from './admin-actor';

@Injectable()
export class ActivateUserUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * suspended → active.
   * @throws DomainError USER_NOT_FOUND | INVALID_USER_STATE
   */
  async execute(input: { actor: AdminActor; realmId: string; userId: string }): Promise<User> {
    const { actor, realmId } = input;
    const now = this.clock.now();
    return this.tx.run(async () => {
      const user = await lockTargetUser(this.users, actor, realmId, input.userId);
      user.activate(now);
      await this.users.save(user);
      await this.audit.record({ type: 'user.activated', realmId, userId: user.id, actorId: actor.id, ip: actor.ip, at: now });
      return user;
    });
  }
}
