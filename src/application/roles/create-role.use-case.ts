import { Injectable } from '@nestjs/common';
import { Role } from '../../domain/role/role';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { RoleRepository } from '../ports/role.repository';
import { Transaction } from '../ports/transaction';

export interface CreateRoleInput {
  /** The acting admin; null from the command line. */
  actor: AdminActor | null;
  realmId: string;
  name: string;
  description?: string | null;
}

@Injectable()
export class CreateRoleUseCase {
  constructor(
    private readonly roles: RoleRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Defines a role in the realm, so administrators can assign it and tokens carry it.
   * @throws DomainError VALIDATION_FAILED | ROLE_EXISTS (built-in names included)
   */
  async execute(input: CreateRoleInput): Promise<Role> {
    const { actor, realmId } = input;
    const now = this.clock.now();
    const role = Role.define({ realmId, name: input.name, description: input.description, now });
    await this.tx.run(async () => {
      await this.roles.insert(role);
      await this.audit.record({
        type: 'role.created',
        realmId,
        actorId: actor?.id ?? null,
        ip: actor?.ip ?? null,
        at: now,
        details: { name: role.name, description: role.description, ...(actor ? {} : { by: 'cli' }) },
      });
    });
    return role;
  }
}
