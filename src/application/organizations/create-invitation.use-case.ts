import { Injectable } from '@nestjs/common';
import { Invitation } from '../../domain/organization/invitation';
import { Realm } from '../../domain/realm/realm';
import { Email } from '../../domain/user/email';
import { AccountEmails } from '../account/account-emails';
import { Clock } from '../ports/clock';
import { OrganizationInvitationRepository } from '../ports/organization-invitation.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { Transaction } from '../ports/transaction';
import { OrganizationAccess, OrganizationRequester } from './organization-access';

@Injectable()
export class CreateInvitationUseCase {
  constructor(
    private readonly access: OrganizationAccess,
    private readonly invitations: OrganizationInvitationRepository,
    private readonly secureTokens: SecureTokens,
    private readonly emails: AccountEmails,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Invites an address with organization roles: a single-use link valid 7 days, emailed in the
   * same transaction; the token is stored only as its hash, and the organization's pending
   * invitation to the same address stops working.
   * @throws DomainError ORGANIZATION_NOT_FOUND | FORBIDDEN | VALIDATION_FAILED
   */
  async execute(input: {
    requester: OrganizationRequester;
    realm: Realm;
    organizationId: string;
    email: string;
    roles: string[];
  }): Promise<Invitation> {
    const { realm } = input;
    const email = Email.parse(input.email).value;
    const now = this.clock.now();
    const token = this.secureTokens.generate();
    return this.tx.run(async () => {
      const { organization, actor } = await this.access.authorize(input.requester, realm.id, input.organizationId, 'invitation.create', {
        lock: true,
      });
      await this.access.assertOrganizationRoles(realm.id, input.roles);
      const invitation = Invitation.issue({
        id: crypto.randomUUID(),
        organizationId: organization.id,
        realmId: realm.id,
        email,
        roles: input.roles,
        tokenHash: this.secureTokens.hash(token),
        invitedBy: actor.id,
        now,
      });
      await this.invitations.insertReplacingPending(invitation, now);
      await this.emails.sendOrganizationInvitation(realm, email, token, organization.name);
      await this.access.record('organization.invitation_created', actor, organization, now, {
        invitationId: invitation.id,
        email,
        roles: invitation.roles,
      });
      return invitation;
    });
  }
}
