import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { leavesNoOrgAdmin, ORG_ADMIN } from '../../domain/organization/organization-policy';
import { Clock } from '../ports/clock';
import { OrganizationMemberRepository, OrganizationMemberView } from '../ports/organization-member.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { OrganizationAccess, OrganizationRequester } from './organization-access';

const userNotFound = () => new DomainError('USER_NOT_FOUND', 'User not found');

@Injectable()
export class SetMemberRolesUseCase {
  constructor(
    private readonly access: OrganizationAccess,
    private readonly members: OrganizationMemberRepository,
    private readonly users: UserRepository,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Sets a member's organization roles. A realm administrator also adds a user of the realm who
   * is not a member yet; an org-admin changes only members, and never takes `org-admin` from the
   * organization's last one.
   * @throws DomainError ORGANIZATION_NOT_FOUND | FORBIDDEN | USER_NOT_FOUND | VALIDATION_FAILED | INVALID_USER_STATE
   */
  async execute(input: {
    requester: OrganizationRequester;
    realmId: string;
    organizationId: string;
    userId: string;
    roles: string[];
  }): Promise<OrganizationMemberView> {
    const roles = [...new Set(input.roles)];
    const now = this.clock.now();
    return this.tx.run(async () => {
      const { organization, actor } = await this.access.authorize(
        input.requester,
        input.realmId,
        input.organizationId,
        'member.set-roles',
        {
          lock: true,
        },
      );
      await this.access.assertOrganizationRoles(input.realmId, roles);
      const user = await this.users.findById(input.realmId, input.userId);
      if (!user) throw userNotFound();
      this.access.assertMayActOn(actor, user);
      const membership = await this.members.find(organization.id, user.id);
      if (!membership) {
        if (actor.delegated) throw userNotFound();
        await this.members.add({ organizationId: organization.id, realmId: input.realmId, userId: user.id, roles, joinedAt: now });
        await this.access.record('organization.member_added', actor, organization, now, { roles, method: 'admin' }, user.id);
        return { userId: user.id, email: user.email, roles, joinedAt: now };
      }
      const orgAdmins = membership.roles.includes(ORG_ADMIN) ? await this.members.countWithRole(organization.id, ORG_ADMIN) : 0;
      if (leavesNoOrgAdmin(actor.delegated, membership.roles, roles, orgAdmins)) {
        throw new DomainError('INVALID_USER_STATE', `The organization’s last ${ORG_ADMIN} keeps the role`);
      }
      await this.members.setRoles(organization.id, user.id, roles);
      await this.access.record(
        'organization.member_roles_changed',
        actor,
        organization,
        now,
        { before: membership.roles, after: roles },
        user.id,
      );
      return { userId: user.id, email: user.email, roles, joinedAt: membership.joinedAt };
    });
  }
}
