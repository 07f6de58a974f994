import { Role } from '../../domain/role/role';

/** The roles realms define. Built-in roles are not stored: `Role.builtIns` describes them. */
export abstract class RoleRepository {
  /** The realm's defined roles, by name. */
  abstract list(realmId: string): Promise<Role[]>;
  /** @throws DomainError ROLE_EXISTS when the realm has a role of that name */
  abstract insert(role: Role): Promise<void>;
  /**
   * Which of `names` the realm defines. Inside a transaction those roles stay defined until it
   * ends (a concurrent `delete` waits), so an assignment checked here cannot outlive its role.
   */
  abstract findDefined(realmId: string, names: readonly string[]): Promise<string[]>;
  /**
   * Deletes the role and removes it from every user of the realm (one statement for the users,
   * after the role's own row, so an assignment committed meanwhile is removed too); call inside
   * `Transaction.run`. Null when the realm does not define it; otherwise how many users held it.
   */
  abstract delete(realmId: string, name: string, now: Date): Promise<{ users: number } | null>;
}
