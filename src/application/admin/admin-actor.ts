import { protectsTarget, roleChangeRefusal } from '../../domain/admin/admin-policy';
import { DomainError } from '../../domain/errors';
import { MASTER_REALM } from '../../domain/realm/master-realm';
import { SUPER_ADMIN } from '../../domain/role/role-names';
import { User } from '../../domain/user/user';
import { UserRepository } from '../ports/user.repository';

/** The administrator behind an administrative request, as `AuthorizeAdminUseCase` established it. */
export interface AdminActor {
  /** The admin's user id: `actorId` of every audit event the request writes. */
  id: string;
  /** The admin's own realm: the administered realm, or `master` for a super-admin. */
  realmId: string;
  /** Holds super-admin in master (administers every realm). */
  superAdmin: boolean;
  /** The lists this admin reads leave out super-admins' sessions (a realm-admin of master). */
  hidesSuperAdmins: boolean;
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
 * read-change-save inside `Transaction.run`, so a concurrent change is never overwritten. The
 * admin guard decided on an unlocked read; the locked row is checked again, so an account made
 * super-admin since then is out of a realm-admin's reach.
 * @throws DomainError USER_NOT_FOUND for an unknown id or one of another realm | FORBIDDEN
 */
export async function lockTargetUser(users: UserRepository, actor: AdminActor, realmId: string, id: string): Promise<User> {
  const user = await users.findByIdForUpdate(realmId, id);
  if (!user) throw new DomainError('USER_NOT_FOUND', 'User not found');
  if (protectsTarget(actor.superAdmin, user)) throw new DomainError('FORBIDDEN', 'Only a super-admin may act on a super-admin');
  return user;
}

/**
 * Roles an actor may set: `super-admin` exists only in master and only a super-admin grants or
 * removes it (`roleChangeRefusal`).
 * @throws DomainError VALIDATION_FAILED | FORBIDDEN
 */
export function assertMayGrant(actor: AdminActor, realmId: string, before: string[], after: string[]): void {
  const refusal = roleChangeRefusal(actor.superAdmin, realmId, before, after);
  if (refusal === 'super-admin-outside-master') {
    throw DomainError.validation('roles', `"${SUPER_ADMIN}" exists only in the ${MASTER_REALM} realm`);
  }
  if (refusal === 'super-admins-only') throw new DomainError('FORBIDDEN', `Only a super-admin may grant or remove "${SUPER_ADMIN}"`);
}
