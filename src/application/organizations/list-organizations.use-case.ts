import { Injectable } from '@nestjs/common';
import { Organization } from '../../domain/organization/organization';
import { OrganizationQuery, OrganizationRepository } from '../ports/organization.repository';

@Injectable()
export class ListOrganizationsUseCase {
  constructor(private readonly organizations: OrganizationRepository) {}

  /** A page of the realm's organizations, oldest first, optionally those whose name or slug holds `search`. */
  execute(query: OrganizationQuery): Promise<{ organizations: Organization[]; total: number }> {
    return this.organizations.list(query);
  }
}
