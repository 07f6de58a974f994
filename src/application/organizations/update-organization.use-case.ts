import { Injectable } from '@nestjs/common';
import { Organization, OrganizationChange } from '../../domain/organization/organization';
import { AdminActor } from '../admin/admin-actor';
import { Clock } from '../ports/clock';
import { IdentityProviderRepository } from '../ports/identity-provider.repository';
import { OrganizationRepository } from '../ports/organization.repository';
import { Transaction } from '../ports/transaction';
import { assertIdentityProvider } from './create-organization.use-case';
import { OrganizationSignIn } from './organization-sign-in';
import { OrganizationAccess, organizationNotFound } from './organization-access';

@Injectable()
export class UpdateOrganizationUseCase {
  constructor(
    private readonly organizations: OrganizationRepository,
    private readonly providers: IdentityProviderRepository,
    private readonly access: OrganizationAccess,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly signIn: OrganizationSignIn,
  ) {}

  /**
   * Changes any field but the id; audited with the names of the fields that changed.
   * @throws DomainError ORGANIZATION_NOT_FOUND | VALIDATION_FAILED naming the field | ORGANIZATION_EXISTS
   */
  async execute(input: { actor: AdminActor; realmId: string; id: string } & OrganizationChange): Promise<Organization> {
    const { actor, realmId, id, ...change } = input;
    const now = this.clock.now();
    const organization = await this.tx.run(async () => {
      const organization = await this.organizations.findByIdForUpdate(realmId, id);
      if (!organization) throw organizationNotFound();
      const changed = organization.update(change, now);
      if (change.identityProvider !== undefined) await assertIdentityProvider(this.providers, realmId, organization.identityProvider);
      if (changed.length > 0) {
        await this.organizations.save(organization);
        await this.access.record('organization.updated', actor, organization, now, { changed });
      }
      return organization;
    });
    this.signIn.forget(realmId);
    return organization;
  }
}
