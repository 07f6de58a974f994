import { Injectable } from '@nestjs/common';
import { User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { RoleRepository } from '../ports/role.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { assertAssignable } from '../roles/realm-roles';
import { AdminActor, assertMayGrant, lockTargetUser } from './admin-actor';

@Injectable()
export class SetUserRolesUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly roles: RoleRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Replaces the user's realm roles with roles the realm builds in or defines. Access tokens
   * already issued keep their `roles` claim until they expire (the next refresh carries the new
   * ones), but administrative access is checked against the stored roles on every request.
   * @throws DomainError USER_NOT_FOUND | VALIDATION_FAILED (an unknown role) | FORBIDDEN
   */
  async execute(input: { actor: AdminActor; realmId: string; userId: string; roles: string[] }): Promise<User> {
    const { actor, realmId } = input;
    const now = this.clock.now();
    return this.tx.run(async () => {
      await assertAssignable(this.roles, realmId, input.roles);
      const user = await lockTargetUser(this.users, actor, realmId, input.userId);
      const before = user.roles;
      assertMayGrant(actor, realmId, before, input.roles);
      user.setRoles(input.roles, now);
      await this.users.save(user);
      await this.audit.record({
        type: 'user.roles_changed',
        realmId,
        userId: user.id,
        actorId: actor.id,
        ip: actor.ip,
        at: now,
        details: { before, after: user.roles },
      });
      return user;
    });
  }
}
