import { Injectable } from '@nestjs/common';
import { OrganizationMemberRepository, UserMembershipView } from '../ports/organization-member.repository';

@Injectable()
export class ListOwnOrganizationsUseCase {
  constructor(private readonly members: OrganizationMemberRepository) {}

  /** The caller's memberships, with their organization roles. */
  execute(input: { realmId: string; userId: string }): Promise<UserMembershipView[]> {
    return this.members.listForUser(input.realmId, input.userId);
  }
}
