import { Organization } from '../../domain/organization/organization';

export interface OrganizationQuery {
  realmId: string;
  page: number;
  limit: number;
  /** Case-insensitive substring of the name or the slug. */
  search?: string;
}

/** The realm's organizations and their domains. */
export abstract class OrganizationRepository {
  /** The realm's organization with that id; null for an unknown id or one of another realm. */
  abstract findById(realmId: string, id: string): Promise<Organization | null>;
  /**
   * As `findById`, its row locked until the transaction ends: changes to its members that must
   * count its `org-admin`s (or check that it still exists) queue behind each other.
   */
  abstract findByIdForUpdate(realmId: string, id: string): Promise<Organization | null>;
  /** The organization of the realm one of whose domains is `domain`; null when none. */
  abstract findByDomain(realmId: string, domain: string): Promise<Organization | null>;
  /** The domains of the realm's organizations that require their identity provider, each with its organization's id. */
  abstract listEnforcedDomains(realmId: string): Promise<{ domain: string; organizationId: string }[]>;
  /** The realm's organizations that sign in through the identity provider `alias`. */
  abstract listByIdentityProvider(realmId: string, alias: string): Promise<Organization[]>;
  /** A page of the realm's organizations, oldest first, and how many match. */
  abstract list(query: OrganizationQuery): Promise<{ organizations: Organization[]; total: number }>;
  /** @throws DomainError ORGANIZATION_EXISTS for a slug or a domain the realm has */
  abstract insert(organization: Organization): Promise<void>;
  /**
   * Writes every field but the id, the domains included.
   * @throws DomainError ORGANIZATION_EXISTS for a slug or a domain another organization of the realm has
   */
  abstract save(organization: Organization): Promise<void>;
  /** Removes the organization with its memberships and invitations; false when the realm has none such. */
  abstract delete(realmId: string, id: string): Promise<boolean>;
}
