import { Injectable } from '@nestjs/common';
import { Invitation } from '../../domain/organization/invitation';
import { Clock } from '../ports/clock';
import { OrganizationInvitationRepository } from '../ports/organization-invitation.repository';
import { OrganizationAccess, OrganizationRequester } from './organization-access';

@Injectable()
export class ListInvitationsUseCase {
  constructor(
    private readonly access: OrganizationAccess,
    private readonly invitations: OrganizationInvitationRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * The organization's pending invitations, newest first.
   * @throws DomainError ORGANIZATION_NOT_FOUND | FORBIDDEN
   */
  async execute(input: { requester: OrganizationRequester; realmId: string; organizationId: string }): Promise<Invitation[]> {
    const { organization } = await this.access.authorize(input.requester, input.realmId, input.organizationId, 'invitations.list');
    return this.invitations.listPending(organization.id, this.clock.now());
  }
}
