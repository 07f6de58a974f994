import { REALM_ADMIN, SUPER_ADMIN } from '../role/role-names';

/** The built-in organization role: administers the organization's members and invitations. */
export const ORG_ADMIN = 'org-admin';

/**
 * What can be done to one organization's members and invitations, by the realm's administrators
 * (over the admin API) and by the organization's own `org-admin`s (over the auth API).
 */
export const ORGANIZATION_ACTIONS = [
  'members.list',
  'member.set-roles',
  'member.remove',
  'invitations.list',
  'invitation.create',
  'invitation.revoke',
] as const;
export type OrganizationAction = (typeof ORGANIZATION_ACTIONS)[number];

/**
 * Who asks: an administrator the admin policy admitted to the organization's realm, or a user of
 * the realm with the roles of their membership in the organization (null when not a member).
 */
export type OrganizationCaller =
  { kind: 'realm-administrator' } | { kind: 'user'; realmId: string; membershipRoles: readonly string[] | null };

export type OrganizationRefusal =
  /** The user is not a member of the organization, or an administrator of another realm. */
  | 'not-a-member'
  /** A member without `org-admin`. */
  | 'not-an-org-admin';

export type OrganizationDecision =
  | {
      allowed: true;
      /** The organization's own administrator acting (org-admin), bound by what delegation may not do. */
      delegated: boolean;
    }
  | { allowed: false; reason: OrganizationRefusal };

/**
 * The one rule of who may manage an organization's members and invitations: the realm's
 * administrators (super-admin, realm-admin of the realm — `decideAdmin` admitted them) every
 * organization of the realm; a member holding `org-admin` only their own organization; nobody
 * else. The organization is always looked up in the caller's realm first, so an organization of
 * another realm is unknown (404) rather than refused.
 */
export function decideOrganization(
  caller: OrganizationCaller,
  organizationRealmId: string,
  _action: OrganizationAction,
): OrganizationDecision {
  if (caller.kind === 'realm-administrator') return { allowed: true, delegated: false };
  if (caller.realmId !== organizationRealmId || caller.membershipRoles === null) return { allowed: false, reason: 'not-a-member' };
  if (!caller.membershipRoles.includes(ORG_ADMIN)) return { allowed: false, reason: 'not-an-org-admin' };
  return { allowed: true, delegated: true };
}

/**
 * Organization roles are `org-admin` and the roles the realm defines, never a realm's built-in
 * administrator roles. Returns the names that are not organization roles of the realm.
 */
export function unknownOrganizationRoles(names: readonly string[], definedRealmRoles: ReadonlySet<string>): string[] {
  return [...new Set(names)].filter(
    (name) => name !== ORG_ADMIN && (name === REALM_ADMIN || name === SUPER_ADMIN || !definedRealmRoles.has(name)),
  );
}

/**
 * Whether a change would leave the organization without an `org-admin`, when its own
 * administrator makes it: removing or demoting the last one. A realm administrator may (it stays
 * able to appoint a new one).
 * @param before the member's roles before the change
 * @param after the member's roles after it; null when the member is removed
 * @param orgAdmins how many members hold `org-admin` now
 */
export function leavesNoOrgAdmin(
  delegated: boolean,
  before: readonly string[],
  after: readonly string[] | null,
  orgAdmins: number,
): boolean {
  if (!delegated) return false;
  const loses = before.includes(ORG_ADMIN) && !(after ?? []).includes(ORG_ADMIN);
  return loses && orgAdmins <= 1;
}
