import { Injectable } from '@nestjs/common';
import { RoleRepository } from '../../application/ports/role.repository';
import { DomainError } from '../../domain/errors';
import { Role } from '../../domain/role/role';
import { sqlState, UNIQUE_VIOLATION } from './database-errors';
import { RoleRecord } from './records/role.record';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';

function toRole(record: RoleRecord): Role {
  return Role.restore({
    realmId: record.realmId,
    name: record.name,
    description: record.description,
    builtIn: false,
    createdAt: new Date(record.createdAt),
  });
}

@Injectable()
export class TypeOrmRoleRepository implements RoleRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async list(realmId: string): Promise<Role[]> {
    const records = await this.tx.manager.getRepository(RoleRecord).find({ where: { realmId }, order: { name: 'ASC' } });
    return records.map(toRole);
  }

  async insert(role: Role): Promise<void> {
    const record = new RoleRecord();
    record.realmId = role.realmId;
    record.name = role.name;
    record.description = role.description;
    record.createdAt = role.createdAt;
    try {
      await this.tx.manager.getRepository(RoleRecord).insert(record);
    } catch (error) {
      if (sqlState(error) === UNIQUE_VIOLATION) throw new DomainError('ROLE_EXISTS', `The realm already has a role "${role.name}"`);
      throw error;
    }
  }

  async findDefined(realmId: string, names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    // KEY SHARE: a concurrent deletion of these roles waits for this transaction, and then
    // removes them from the users this transaction gave them to.
    const rows: { name: string }[] = await this.tx.manager.query(
      `SELECT name FROM realm_roles WHERE realm_id = $1 AND name = ANY ($2::text[]) FOR KEY SHARE`,
      [realmId, [...names]],
    );
    return rows.map((row) => row.name);
  }

  async delete(realmId: string, name: string, now: Date): Promise<{ users: number } | null> {
    const deleted = unwrapRows<{ name: string }>(
      await this.tx.manager.query(`DELETE FROM realm_roles WHERE realm_id = $1 AND name = $2 RETURNING name`, [realmId, name]),
    );
    if (deleted.length === 0) return null;
    // A statement of its own, so its snapshot follows the row lock the deletion waited for: an
    // assignment committed meanwhile is seen and undone too.
    const [counted] = unwrapRows<{ users: number }>(
      await this.tx.manager.query(
        `WITH holders AS (
           UPDATE users SET roles = array_remove(roles, $2), updated_at = $3
           WHERE realm_id = $1 AND roles @> ARRAY[$2]::text[] RETURNING 1
         )
         SELECT count(*)::int AS users FROM holders`,
        [realmId, name, now],
      ),
    );
    // Organization roles are the realm's defined roles too: memberships and pending invitations lose it.
    await this.tx.manager.query(
      `UPDATE organization_members SET roles = array_remove(roles, $2) WHERE realm_id = $1 AND roles @> ARRAY[$2]::text[]`,
      [realmId, name],
    );
    await this.tx.manager.query(
      `UPDATE organization_invitations SET roles = array_remove(roles, $2) WHERE realm_id = $1 AND status = 'pending' AND roles @> ARRAY[$2]::text[]`,
      [realmId, name],
    );
    return { users: Number(counted.users) };
  }
}
