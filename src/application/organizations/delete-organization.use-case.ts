import { Injectable } from '@nestjs/common';
import { AdminActor } from '../admin/admin-actor';
import { Clock } from '../ports/clock';
import { OrganizationRepository } from '../ports/organization.repository';
import { Transaction } from '../ports/transaction';
import { OrganizationSignIn } from './organization-sign-in';
import { OrganizationAccess, organizationNotFound } from './organization-access';

@Injectable()
export class DeleteOrganizationUseCase {
  constructor(
    private readonly organizations: OrganizationRepository,
    private readonly access: OrganizationAccess,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly signIn: OrganizationSignIn,
  ) {}

  /**
   * Deletes the organization with its memberships and invitations, in one transaction. Sessions
   * it was active in carry no `org` claim from their next refresh on.
   * @throws DomainError ORGANIZATION_NOT_FOUND
   */
  async execute(input: { actor: AdminActor; realmId: string; id: string }): Promise<void> {
    const now = this.clock.now();
    await this.tx.run(async () => {
      const organization = await this.organizations.findByIdForUpdate(input.realmId, input.id);
      if (!organization) throw organizationNotFound();
      await this.organizations.delete(input.realmId, organization.id);
      await this.access.record('organization.deleted', input.actor, organization, now, { members: organization.memberCount });
    });
    this.signIn.forget(input.realmId);
  }
}
