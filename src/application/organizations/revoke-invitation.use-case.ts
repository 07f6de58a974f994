import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Clock } from '../ports/clock';
import { OrganizationInvitationRepository } from '../ports/organization-invitation.repository';
import { Transaction } from '../ports/transaction';
import { OrganizationAccess, OrganizationRequester } from './organization-access';

@Injectable()
export class RevokeInvitationUseCase {
  constructor(
    private readonly access: OrganizationAccess,
    private readonly invitations: OrganizationInvitationRepository,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Revokes a pending invitation: its link stops working.
   * @throws DomainError ORGANIZATION_NOT_FOUND | FORBIDDEN | NOT_FOUND for an invitation that is not pending in this organization
   */
  async execute(input: { requester: OrganizationRequester; realmId: string; organizationId: string; invitationId: string }): Promise<void> {
    const now = this.clock.now();
    await this.tx.run(async () => {
      const { organization, actor } = await this.access.authorize(
        input.requester,
        input.realmId,
        input.organizationId,
        'invitation.revoke',
      );
      if (!(await this.invitations.revoke(organization.id, input.invitationId, now))) {
        throw new DomainError('NOT_FOUND', 'Invitation not found');
      }
      await this.access.record('organization.invitation_revoked', actor, organization, now, { invitationId: input.invitationId });
    });
  }
}
