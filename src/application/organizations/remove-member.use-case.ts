import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { leavesNoOrgAdmin, ORG_ADMIN } from '../../domain/organization/organization-policy';
import { Clock } from '../ports/clock';
import { OrganizationMemberRepository } from '../ports/organization-member.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { OrganizationAccess, OrganizationRequester } from './organization-access';

@Injectable()
export class RemoveMemberUseCase {
  constructor(
    private readonly access: OrganizationAccess,
    private readonly members: OrganizationMemberRepository,
    private readonly users: UserRepository,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Removes a member; their sessions carry no `org` claim for it from their next refresh on. An
   * org-admin never removes the organization's last one.
   * @throws DomainError ORGANIZATION_NOT_FOUND | FORBIDDEN | USER_NOT_FOUND | INVALID_USER_STATE
   */
  async execute(input: { requester: OrganizationRequester; realmId: string; organizationId: string; userId: string }): Promise<void> {
    const now = this.clock.now();
    await this.tx.run(async () => {
      const { organization, actor } = await this.access.authorize(input.requester, input.realmId, input.organizationId, 'member.remove', {
        lock: true,
      });
      const user = await this.users.findById(input.realmId, input.userId);
      const membership = user ? await this.members.find(organization.id, user.id) : null;
      if (!user || !membership) throw new DomainError('USER_NOT_FOUND', 'User not found');
      this.access.assertMayActOn(actor, user);
      const orgAdmins = membership.roles.includes(ORG_ADMIN) ? await this.members.countWithRole(organization.id, ORG_ADMIN) : 0;
      if (leavesNoOrgAdmin(actor.delegated, membership.roles, null, orgAdmins)) {
        throw new DomainError('INVALID_USER_STATE', `The organization’s last ${ORG_ADMIN} cannot be removed`);
      }
      await this.members.remove(organization.id, user.id);
      await this.access.record('organization.member_removed', actor, organization, now, { roles: membership.roles }, user.id);
    });
  }
}
