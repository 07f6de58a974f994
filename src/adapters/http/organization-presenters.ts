import { OrganizationMemberView, UserMembershipView } from '../../application/ports/organization-member.repository';
import { Invitation } from '../../domain/organization/invitation';
import { Organization } from '../../domain/organization/organization';

/** Response shapes of organizations, whitelisted field by field. */
export const presentOrganizations = {
  organization(organization: Organization) {
    return {
      id: organization.id,
      name: organization.name,
      slug: organization.slug,
      domains: organization.domains,
      identityProvider: organization.identityProvider,
      requireIdentityProvider: organization.requireIdentityProvider,
      memberCount: organization.memberCount,
      createdAt: organization.createdAt.toISOString(),
      updatedAt: organization.updatedAt.toISOString(),
    };
  },

  membership(membership: UserMembershipView) {
    return { id: membership.id, name: membership.name, slug: membership.slug, roles: [...membership.roles] };
  },

  member(member: OrganizationMemberView) {
    return { userId: member.userId, email: member.email, roles: [...member.roles], joinedAt: member.joinedAt.toISOString() };
  },

  invitation(invitation: Invitation, now: Date) {
    return {
      id: invitation.id,
      email: invitation.email,
      roles: invitation.roles,
      status: invitation.statusAt(now),
      invitedBy: invitation.invitedBy,
      expiresAt: invitation.expiresAt.toISOString(),
      createdAt: invitation.createdAt.toISOString(),
    };
  },
};
