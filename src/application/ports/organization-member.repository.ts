import { Membership } from '../../domain/organization/organization';

/** A member as an organization's lists show them. */
export interface OrganizationMemberView {
  userId: string;
  email: string;
  roles: string[];
  joinedAt: Date;
}

/** A user's membership with its organization, as the user's own list shows it. */
export interface UserMembershipView {
  id: string;
  name: string;
  slug: string;
  roles: string[];
}

/** The `org` claim of an access token: the active organization and the member's roles in it now. */
export interface OrganizationClaim {
  id: string;
  slug: string;
  roles: string[];
}

/** Memberships: which users belong to which organization, with which organization roles. */
export abstract class OrganizationMemberRepository {
  /** The user's membership of the organization; null when not a member. */
  abstract find(organizationId: string, userId: string): Promise<Membership | null>;
  /** Adds a member; false (and nothing written) when the user is one already. */
  abstract add(membership: Membership): Promise<boolean>;
  /** Sets a member's roles; false when the user is not a member. */
  abstract setRoles(organizationId: string, userId: string, roles: readonly string[]): Promise<boolean>;
  /** Removes a member; false when the user was not one. */
  abstract remove(organizationId: string, userId: string): Promise<boolean>;
  /** How many members of the organization hold `role`. */
  abstract countWithRole(organizationId: string, role: string): Promise<number>;
  /**
   * A page of the organization's members, in the order they joined. The total is the
   * organization's kept member count (exact, in the same snapshot as the page).
   */
  abstract list(organizationId: string, page: number, limit: number): Promise<{ members: OrganizationMemberView[]; total: number }>;
  /** The user's memberships, with their organizations, oldest first. */
  abstract listForUser(realmId: string, userId: string): Promise<UserMembershipView[]>;
  /** The claim for an access token; null when the user is no longer a member (or the organization is gone). */
  abstract claim(realmId: string, organizationId: string, userId: string): Promise<OrganizationClaim | null>;
}
