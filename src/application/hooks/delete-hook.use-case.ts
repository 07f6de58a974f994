import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { HookRepository } from '../ports/hook.repository';
import { Transaction } from '../ports/transaction';
import { hookNamed } from './hook-admin';

@Injectable()
export class DeleteHookUseCase {
  constructor(
    private readonly hooks: HookRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Removes the realm's hook: that point decides as without one again.
   * @throws DomainError NOT_FOUND (not a hook's name, or the realm has none of it)
   */
  async execute(input: { actor: AdminActor; realmId: string; name: string }): Promise<void> {
    const name = hookNamed(input.name);
    const now = this.clock.now();
    await this.tx.run(async () => {
      if (!(await this.hooks.delete(input.realmId, name))) throw new DomainError('NOT_FOUND', 'No such hook');
      await this.audit.record({
        type: 'hook.deleted',
        realmId: input.realmId,
        actorId: input.actor.id,
        ip: input.actor.ip,
        at: now,
        details: { name },
      });
    });
  }
}
