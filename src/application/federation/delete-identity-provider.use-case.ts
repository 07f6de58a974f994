import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { IdentityProviderRepository } from '../ports/identity-provider.repository';
import { Transaction } from '../ports/transaction';
import { auditProviderChange } from './identity-provider-admin';

@Injectable()
export class DeleteIdentityProviderUseCase {
  constructor(
    private readonly providers: IdentityProviderRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Removes the provider and every link to it; the linked users keep their accounts.
   * @throws DomainError IDENTITY_PROVIDER_NOT_FOUND
   */
  async execute(input: { actor: AdminActor; realmId: string; alias: string }): Promise<void> {
    const now = this.clock.now();
    await this.tx.run(async () => {
      if (!(await this.providers.delete(input.realmId, input.alias))) {
        throw new DomainError('IDENTITY_PROVIDER_NOT_FOUND', 'Identity provider not found');
      }
      await auditProviderChange(this.audit, 'identity_provider.deleted', input.actor, input.realmId, now, { alias: input.alias });
    });
  }
}
