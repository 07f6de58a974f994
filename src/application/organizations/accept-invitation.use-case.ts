import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { invalidLinkToken } from '../account/email-link-tokens';
import { Clock } from '../ports/clock';
import { OrganizationInvitationRepository } from '../ports/organization-invitation.repository';
import { OrganizationMemberRepository, UserMembershipView } from '../ports/organization-member.repository';
import { OrganizationRepository } from '../ports/organization.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { OrganizationAccess } from './organization-access';

@Injectable()
export class AcceptInvitationUseCase {
  constructor(
    private readonly invitations: OrganizationInvitationRepository,
    private readonly organizations: OrganizationRepository,
    private readonly members: OrganizationMemberRepository,
    private readonly users: UserRepository,
    private readonly secureTokens: SecureTokens,
    private readonly access: OrganizationAccess,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Makes the signed-in user a member with the invitation's roles (added to those they hold
   * already). Only a user whose verified address is the invited one may: an account registered
   * with someone else's address, unverified, never joins their organization. The token works
   * once, and only while the invitation is pending (not accepted, revoked, replaced or expired).
   * @throws DomainError INVALID_VERIFICATION_TOKEN | FORBIDDEN
   */
  async execute(input: { realmId: string; userId: string; ip: string | null; token: string }): Promise<UserMembershipView> {
    const now = this.clock.now();
    const invitation = typeof input.token === 'string' ? await this.invitations.findByTokenHash(this.secureTokens.hash(input.token)) : null;
    if (!invitation || invitation.realmId !== input.realmId || !invitation.isPendingAt(now)) throw invalidLinkToken();
    const user = await this.users.findById(input.realmId, input.userId);
    if (!user || !user.emailVerified || user.email !== invitation.email) {
      throw new DomainError('FORBIDDEN', 'This invitation is for another address: sign in with the invited address, verified');
    }
    return this.tx.run(async () => {
      const organization = await this.organizations.findByIdForUpdate(input.realmId, invitation.organizationId);
      if (!organization || !(await this.invitations.accept(invitation.id, now))) throw invalidLinkToken();
      const actor = { id: user.id, ip: input.ip };
      const membership = await this.members.find(organization.id, user.id);
      let roles = invitation.roles;
      if (!membership) {
        await this.members.add({ organizationId: organization.id, realmId: input.realmId, userId: user.id, roles, joinedAt: now });
        await this.access.record('organization.member_added', actor, organization, now, { roles, method: 'invitation' }, user.id);
      } else {
        roles = [...new Set([...membership.roles, ...invitation.roles])];
        if (roles.length !== membership.roles.length) {
          await this.members.setRoles(organization.id, user.id, roles);
          await this.access.record(
            'organization.member_roles_changed',
            actor,
            organization,
            now,
            { before: membership.roles, after: roles },
            user.id,
          );
        }
      }
      await this.access.record(
        'organization.invitation_accepted',
        actor,
        organization,
        now,
        { invitationId: invitation.id, invitedBy: invitation.invitedBy },
        user.id,
      );
      return { id: organization.id, name: organization.name, slug: organization.slug, roles };
    });
  }
}
