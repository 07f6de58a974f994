import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Organization } from '../../domain/organization/organization';
import { AdminActor } from '../admin/admin-actor';
import { Clock } from '../ports/clock';
import { IdentityProviderRepository } from '../ports/identity-provider.repository';
import { OrganizationRepository } from '../ports/organization.repository';
import { Transaction } from '../ports/transaction';
import { OrganizationSignIn } from './organization-sign-in';
import { OrganizationAccess } from './organization-access';

export interface CreateOrganizationInput {
  actor: AdminActor;
  realmId: string;
  name: string;
  slug: string;
  domains?: string[];
  identityProvider?: string | null;
  requireIdentityProvider?: boolean;
}

/**
 * The realm's identity provider `alias` exists.
 * @throws DomainError VALIDATION_FAILED (field `identityProvider`)
 */
export async function assertIdentityProvider(
  providers: IdentityProviderRepository,
  realmId: string,
  alias: string | null | undefined,
): Promise<void> {
  if (alias === null || alias === undefined) return;
  if (typeof alias !== 'string' || !(await providers.findByAlias(realmId, alias))) {
    throw DomainError.validation('identityProvider', 'must be the alias of one of the realm’s identity providers');
  }
}

@Injectable()
export class CreateOrganizationUseCase {
  constructor(
    private readonly organizations: OrganizationRepository,
    private readonly providers: IdentityProviderRepository,
    private readonly access: OrganizationAccess,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly signIn: OrganizationSignIn,
  ) {}

  /** @throws DomainError VALIDATION_FAILED naming the field | ORGANIZATION_EXISTS for a slug or a domain the realm has */
  async execute(input: CreateOrganizationInput): Promise<Organization> {
    const { actor, ...fields } = input;
    const now = this.clock.now();
    const organization = Organization.create({ ...fields, id: crypto.randomUUID(), createdAt: now });
    await assertIdentityProvider(this.providers, input.realmId, organization.identityProvider);
    await this.tx.run(async () => {
      await this.organizations.insert(organization);
      await this.access.record('organization.created', actor, organization, now, {
        name: organization.name,
        domains: organization.domains,
        identityProvider: organization.identityProvider,
        requireIdentityProvider: organization.requireIdentityProvider,
      });
    });
    this.signIn.forget(input.realmId);
    return organization;
  }
}
