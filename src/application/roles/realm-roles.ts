import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { isBuiltInRole, Role } from '../../domain/role/role';
import { RoleRepository } from '../ports/role.repository';

/** Every role of the realm: its built-ins first, then the roles it defines, by name. */
export async function realmRoles(roles: RoleRepository, realm: Realm): Promise<Role[]> {
  return [...Role.builtIns(realm), ...(await roles.list(realm.id))];
}

/**
 * Refuses roles the realm neither builds in nor defines (super-admin outside master is
 * `assertMayGrant`'s to refuse). Inside a transaction the defined ones stay defined until it ends
 * (`RoleRepository.findDefined`): call it before locking the user, as a role's deletion locks
 * the role and then its holders.
 * @throws DomainError VALIDATION_FAILED with a detail per unknown role
 */
export async function assertAssignable(roles: RoleRepository, realmId: string, names: readonly string[]): Promise<void> {
  const wanted = [...new Set(names)].filter((name) => !isBuiltInRole(name));
  if (wanted.length === 0) return;
  const defined = new Set(await roles.findDefined(realmId, wanted));
  const unknown = wanted.filter((name) => !defined.has(name));
  if (unknown.length === 0) return;
  const details = unknown.map((name) => ({ field: 'roles', message: `"${name}" is not a role of this realm; define it first` }));
  throw new DomainError('VALIDATION_FAILED', `roles ${details[0].message}`, { details });
}
