import { Injectable } from '@nestjs/common';
import { OrganizationMemberRepository, OrganizationMemberView } from '../ports/organization-member.repository';
import { OrganizationAccess, OrganizationRequester } from './organization-access';

@Injectable()
export class ListMembersUseCase {
  constructor(
    private readonly access: OrganizationAccess,
    private readonly members: OrganizationMemberRepository,
  ) {}

  /**
   * A page of the organization's members in the order they joined, with the exact total.
   * @throws DomainError ORGANIZATION_NOT_FOUND | FORBIDDEN
   */
  async execute(input: {
    requester: OrganizationRequester;
    realmId: string;
    organizationId: string;
    page: number;
    limit: number;
  }): Promise<{ members: OrganizationMemberView[]; total: number }> {
    const { organization } = await this.access.authorize(input.requester, input.realmId, input.organizationId, 'members.list');
    return this.members.list(organization.id, input.page, input.limit);
  }
}
