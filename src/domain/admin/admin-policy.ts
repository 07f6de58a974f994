import { MASTER_REALM } from '../realm/master-realm';
import { REALM_ADMIN, SUPER_ADMIN } from '../role/role-names';
import { User } from '../user/user';

/** How the admin API protects one action. */
export interface AdminActionRule {
  /** Super-admins only (realms), instead of any administrator of the realm. */
  readonly superAdminOnly?: true;
  /**
   * Changes what protects `master`'s super-admins (its settings, identity providers, roles), or
   * is theirs alone there (its clients, resources and initial access tokens, read or written: a
   * client skips consent and chooses where codes go; its hooks, which decide their sign-ins): in
   * `master` only a super-admin may, since a sign-in link, lockout, provider, client or hook of
   * `master` reaches them.
   */
  readonly guardsMaster?: true;
  /**
   * What the route's `:id` names. Only a super-admin acts on a super-admin's account, or on
   * anything of it (a session, identities, roles, metadata).
   */
  readonly target?: 'user' | 'session';
}

/**
 * Every action of the admin API and its rule. A route declares the one it performs
 * (`@AdminAction`); the admin guard decides with `decideAdmin` before anything else runs.
 */
export const ADMIN_ACTIONS = {
  'users.list': {},
  'users.create': {},
  'user.read': {},
  'user.delete': { target: 'user' },
  'user.suspend': { target: 'user' },
  'user.activate': { target: 'user' },
  'user.unlock': { target: 'user' },
  'user.reset-password': { target: 'user' },
  'user.reset-mfa': { target: 'user' },
  'user.set-roles': { target: 'user' },
  'user.set-app-metadata': { target: 'user' },
  'user.identity.unlink': { target: 'user' },
  'user.sessions.list': { target: 'user' },
  'user.sessions.revoke': { target: 'user' },
  'sessions.list': {},
  'session.revoke': { target: 'session' },
  'events.list': {},
  'realms.list': { superAdminOnly: true },
  'realms.create': { superAdminOnly: true },
  'realm.read': {},
  'realm.update': { guardsMaster: true },
  'roles.list': {},
  'roles.create': { guardsMaster: true },
  'role.delete': { guardsMaster: true },
  'identity-providers.list': {},
  'identity-providers.create': { guardsMaster: true },
  'identity-provider.read': {},
  'identity-provider.update': { guardsMaster: true },
  'identity-provider.delete': { guardsMaster: true },
  'webhooks.list': {},
  'webhooks.create': {},
  'webhook.read': {},
  'webhook.update': {},
  'webhook.delete': {},
  'webhook.rotate-secret': {},
  'webhook.deliveries.list': {},
  'webhook.delivery.retry': {},
  'clients.list': { guardsMaster: true },
  'clients.create': { guardsMaster: true },
  'client.read': { guardsMaster: true },
  'client.update': { guardsMaster: true },
  'client.delete': { guardsMaster: true },
  'client.rotate-secret': { guardsMaster: true },
  'resources.list': { guardsMaster: true },
  'resources.create': { guardsMaster: true },
  'resource.update': { guardsMaster: true },
  'resource.delete': { guardsMaster: true },
  'initial-access-tokens.create': { guardsMaster: true },
  'hooks.list': { guardsMaster: true },
  'hook.put': { guardsMaster: true },
  'hook.delete': { guardsMaster: true },
  'hook.rotate-secret': { guardsMaster: true },
  'organizations.list': {},
  'organizations.create': {},
  'organization.read': {},
  'organization.update': {},
  'organization.delete': {},
  'organization.members.list': {},
  'organization.member.set-roles': {},
  'organization.member.remove': {},
  'organization.invitations.list': {},
  'organization.invitations.create': {},
  'organization.invitation.revoke': {},
} as const satisfies Record<string, AdminActionRule>;

export type AdminActionName = keyof typeof ADMIN_ACTIONS;

export function isAdminAction(name: string): name is AdminActionName {
  return Object.prototype.hasOwnProperty.call(ADMIN_ACTIONS, name);
}

export function adminActionRule(action: AdminActionName): AdminActionRule {
  return ADMIN_ACTIONS[action];
}

/** The caller: its realm, and the roles both its token and its account hold now. */
export interface AdminCaller {
  realmId: string;
  roles: readonly string[];
}

export type AdminRefusal =
  /** Neither realm-admin of the realm nor super-admin. */
  | 'not-an-administrator'
  /** A super-admin-only action (realms). */
  | 'super-admins-only'
  /** A change to what protects master's super-admins, by a realm-admin of master. */
  | 'guards-master'
  /** An action on a super-admin's account, by someone who is not a super-admin. */
  | 'super-admin-target';

export type AdminDecision =
  | {
      allowed: true;
      superAdmin: boolean;
      /** Lists the caller reads leave out super-admins' sessions. */
      hidesSuperAdmins: boolean;
    }
  | { allowed: false; reason: AdminRefusal };

/**
 * The one authorisation rule of the admin API, from (caller, realm, action, target): the
 * super-admin administers every realm; a realm-admin its own realm, but in `master` nothing that
 * protects the super-admins — their accounts and what belongs to them, `master`'s settings,
 * identity providers and roles — nor `master`'s clients and resources. `target` is the user the action is on (a session's owner), null
 * when it names none or nobody of the realm (the action then answers 404 itself).
 */
export function decideAdmin(caller: AdminCaller, realmId: string, action: AdminActionName, target: User | null): AdminDecision {
  const rule = adminActionRule(action);
  if (caller.realmId === MASTER_REALM && caller.roles.includes(SUPER_ADMIN)) {
    return { allowed: true, superAdmin: true, hidesSuperAdmins: false };
  }
  if (caller.realmId !== realmId || !caller.roles.includes(REALM_ADMIN)) return { allowed: false, reason: 'not-an-administrator' };
  if (rule.superAdminOnly) return { allowed: false, reason: 'super-admins-only' };
  if (rule.guardsMaster && realmId === MASTER_REALM) return { allowed: false, reason: 'guards-master' };
  if (rule.target && target && protectsTarget(false, target)) return { allowed: false, reason: 'super-admin-target' };
  return { allowed: true, superAdmin: false, hidesSuperAdmins: realmId === MASTER_REALM };
}

/**
 * Only a super-admin acts on a super-admin's account or on anything of it. Checked by the admin
 * guard, and again on the locked row by every write, so a promotion committed in between counts.
 */
export function protectsTarget(actorIsSuperAdmin: boolean, target: User): boolean {
  return !actorIsSuperAdmin && target.isSuperAdmin();
}

/**
 * Roles an administrator may set on a user: `super-admin` exists only in `master`, and only a
 * super-admin grants or removes it (otherwise a realm-admin of `master` could raise itself).
 * @returns the refusal, or null when allowed
 */
export function roleChangeRefusal(
  actorIsSuperAdmin: boolean,
  realmId: string,
  before: readonly string[],
  after: readonly string[],
): 'super-admin-outside-master' | 'super-admins-only' | null {
  if (after.includes(SUPER_ADMIN) && realmId !== MASTER_REALM) return 'super-admin-outside-master';
  if (before.includes(SUPER_ADMIN) !== after.includes(SUPER_ADMIN) && !actorIsSuperAdmin) return 'super-admins-only';
  return null;
}
