import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { isBuiltInRole } from '../../domain/role/role';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { RoleRepository } from '../ports/role.repository';
import { Transaction } from '../ports/transaction';

@Injectable()
export class DeleteRoleUseCase {
  constructor(
    private readonly roles: RoleRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Deletes a role the realm defined and takes it from every user who holds it, in one
   * transaction. Their next access token (at the next refresh) no longer carries it.
   * @throws DomainError INVALID_USER_STATE for a built-in role | ROLE_NOT_FOUND
   */
  async execute(input: { actor: AdminActor | null; realmId: string; name: string }): Promise<{ users: number }> {
    const { actor, realmId, name } = input;
    if (isBuiltInRole(name)) throw new DomainError('INVALID_USER_STATE', `"${name}" is a built-in role and cannot be deleted`);
    const now = this.clock.now();
    return this.tx.run(async () => {
      const removed = await this.roles.delete(realmId, name, now);
      if (!removed) throw new DomainError('ROLE_NOT_FOUND', `The realm has no role "${name}"`);
      await this.audit.record({
        type: 'role.deleted',
        realmId,
        actorId: actor?.id ?? null,
        ip: actor?.ip ?? null,
        at: now,
        details: { name, users: removed.users, ...(actor ? {} : { by: 'cli' }) },
      });
      return removed;
    });
  }
}
