import { DomainError } from '../../domain/errors';
import { User } from '../../domain/user/user';
import { UserRepository } from '../ports/user.repository';
import { MASTER_REALM, SUPER_ADMIN } from './bootstrap.use-case';

/** The administrator behind an administrative request, as `AuthorizeAdminUseCase` established it. */
export interface AdminActor {
  /** The admin's user id: `actorId` of every audit event the request writes. */
  id: string;
  /** The admin's own realm: the administered realm, or `master` for a super-admin. */
  realmId: string;
  /** Holds super-admin in master (administers every realm). */
  superAdmin: boolean;
  ip: string | null;
}

/**
 * The user `id` of the administered realm.
 * @throws DomainError USER_NOT_FOUND for an unknown id or one of another realm
 */
export async function findTargetUser(users: UserRepository, realmId: string, id: string): Promise<User> {
  const user = await users.findById(realmId, id);
  if (!user) throw new DomainError('USER_NOT_FOUND', 'User not found');
  return user;
}

/**
 * The user `id` of the administered realm, its row locked until the transaction ends: for
 * read-change-save inside `Transaction.run`, so a concurrent change is never overwritten.
 * @throws DomainError USER_NOT_FOUND for an unknown id or one of another realm
 */
export async function lockTargetUser(users: UserRepository, realmId: string, id: string): Promise<User> {
  const user = await users.findByIdForUpdate(realmId, id);
  if (!user) throw new DomainError('USER_NOT_FOUND', 'User not found');
  return user;
}

/** Whether the user holds super-admin in master, i.e. administers every realm. */
export function isSuperAdmin(user: User): boolean {
  return user.realmId === MASTER_REALM && user.roles.includes(SUPER_ADMIN);
}

/**
 * A super-admin account is managed only by a super-admin: a realm-admin of master must not
 * suspend, delete, re-key or demote the accounts that administer every realm.
 * @throws DomainError FORBIDDEN
 */
export function assertMayManage(actor: AdminActor, target: User): void {
  if (isSuperAdmin(target) && !actor.superAdmin) {
    throw new DomainError('FORBIDDEN', 'Only a super-admin may manage a super-admin account');
  }
}

/**
 * Roles an actor may grant in a realm: super-admin exists only in master and only a
 * super-admin grants or removes it (otherwise a realm-admin of master could raise itself).
 * @throws DomainError VALIDATION_FAILED | FORBIDDEN
 */
export function assertMayGrant(actor: AdminActor, realmId: string, before: string[], after: string[]): void {
  const touchesSuperAdmin = before.includes(SUPER_ADMIN) !== after.includes(SUPER_ADMIN);
  if (after.includes(SUPER_ADMIN) && realmId !== MASTER_REALM) {
    throw DomainError.validation('roles', `"${SUPER_ADMIN}" exists only in the ${MASTER_REALM} realm`);
  }
  if (touchesSuperAdmin && !actor.superAdmin) {
    throw new DomainError('FORBIDDEN', `Only a super-admin may grant or remove "${SUPER_ADMIN}"`);
  }
}
