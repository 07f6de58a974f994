import { Injectable } from '@nestjs/common';
import { Organization } from '../../domain/organization/organization';
import { OrganizationRepository } from '../ports/organization.repository';
import { organizationNotFound } from './organization-access';

@Injectable()
export class GetOrganizationUseCase {
  constructor(private readonly organizations: OrganizationRepository) {}

  /** @throws DomainError ORGANIZATION_NOT_FOUND for an unknown id or one of another realm */
  async execute(input: { realmId: string; id: string }): Promise<Organization> {
    const organization = await this.organizations.findById(input.realmId, input.id);
    if (!organization) throw organizationNotFound();
    return organization;
  }
}
