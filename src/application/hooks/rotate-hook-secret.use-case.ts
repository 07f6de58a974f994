import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Hook } from '../../domain/hook/hook';
import { webhookSecretFrom } from '../../domain/webhook/webhook';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { HookRepository } from '../ports/hook.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { Transaction } from '../ports/transaction';
import { hookNamed } from './hook-admin';

@Injectable()
export class RotateHookSecretUseCase {
  constructor(
    private readonly hooks: HookRepository,
    private readonly tokens: SecureTokens,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Gives the hook a new signing secret (returned this once); the old one signs nothing more.
   * @throws DomainError NOT_FOUND (not a hook's name, or the realm has none of it)
   */
  async execute(input: { actor: AdminActor; realmId: string; name: string }): Promise<{ hook: Hook; secret: string }> {
    const name = hookNamed(input.name);
    return this.tx.run(async () => {
      const hook = await this.hooks.findForUpdate(input.realmId, name);
      if (!hook) throw new DomainError('NOT_FOUND', 'No such hook');
      const now = this.clock.now();
      const secret = webhookSecretFrom(this.tokens.generate());
      hook.rotate(secret, now);
      await this.hooks.save(hook);
      await this.audit.record({
        type: 'hook.secret_rotated',
        realmId: input.realmId,
        actorId: input.actor.id,
        ip: input.actor.ip,
        at: now,
        details: { name },
      });
      return { hook, secret };
    });
  }
}
