import { RoleRepository } from '../../src/application/ports/role.repository';
import { DomainError } from '../../src/domain/errors';
import { Role } from '../../src/domain/role/role';
import { InMemoryUserRepository } from './in-memory-user.repository';

export class InMemoryRoleRepository extends RoleRepository {
  private readonly rows = new Map<string, Role>();

  /** `users`: whose roles a deletion takes away. */
  constructor(
    private readonly users: InMemoryUserRepository,
    roles: Role[] = [],
  ) {
    super();
    for (const role of roles) this.rows.set(`${role.realmId}/${role.name}`, role);
  }

  async list(realmId: string): Promise<Role[]> {
    return [...this.rows.values()].filter((role) => role.realmId === realmId).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  async insert(role: Role): Promise<void> {
    const key = `${role.realmId}/${role.name}`;
    if (this.rows.has(key)) throw new DomainError('ROLE_EXISTS', `The realm already has a role "${role.name}"`);
    this.rows.set(key, role);
  }

  async findDefined(realmId: string, names: readonly string[]): Promise<string[]> {
    return names.filter((name) => this.rows.has(`${realmId}/${name}`));
  }

  async delete(realmId: string, name: string, now: Date): Promise<{ users: number } | null> {
    if (!this.rows.delete(`${realmId}/${name}`)) return null;
    let users = 0;
    for (const user of this.users.all()) {
      if (user.realmId !== realmId || !user.roles.includes(name)) continue;
      user.setRoles(
        user.roles.filter((role) => role !== name),
        now,
      );
      await this.users.save(user);
      users += 1;
    }
    return { users };
  }
}
