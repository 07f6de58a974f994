import { Injectable } from '@nestjs/common';
import { IdentityInUseError, LinkedIdentityRepository } from '../../application/ports/linked-identity.repository';
import { LinkedIdentity } from '../../domain/federation/linked-identity';
import { sqlState, UNIQUE_VIOLATION } from './database-errors';
import { UserIdentityRecord } from './records/federation.records';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';
import { isUuid } from './typeorm-user.repository';

/** A row of `COLUMNS`: the identity's fields under their own names. */
type IdentityRow = LinkedIdentity;

const COLUMNS = `i.id, i.realm_id AS "realmId", i.user_id AS "userId", i.provider_id AS "providerId", p.alias AS provider,
  i.subject, i.email, i.linked_at AS "linkedAt", i.last_used_at AS "lastUsedAt"`;

function toIdentity(row: IdentityRow): LinkedIdentity {
  return {
    id: row.id,
    realmId: row.realmId,
    userId: row.userId,
    providerId: row.providerId,
    provider: row.provider,
    subject: row.subject,
    email: row.email,
    linkedAt: new Date(row.linkedAt),
    lastUsedAt: row.lastUsedAt ? new Date(row.lastUsedAt) : null,
  };
}

@Injectable()
export class TypeOrmLinkedIdentityRepository implements LinkedIdentityRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async findBySubject(providerId: string, subject: string): Promise<LinkedIdentity | null> {
    if (!isUuid(providerId)) return null;
    const rows: IdentityRow[] = await this.tx.manager.query(
      `SELECT ${COLUMNS} FROM user_identities i JOIN identity_providers p ON p.id = i.provider_id
       WHERE i.provider_id = $1 AND i.subject = $2`,
      [providerId, subject],
    );
    return rows[0] ? toIdentity(rows[0]) : null;
  }

  async listForUser(realmId: string, userId: string): Promise<LinkedIdentity[]> {
    return (await this.listForUsers(realmId, [userId])).get(userId) ?? [];
  }

  async listForUsers(realmId: string, userIds: readonly string[]): Promise<Map<string, LinkedIdentity[]>> {
    const ids = userIds.filter(isUuid);
    const byUser = new Map<string, LinkedIdentity[]>();
    if (ids.length === 0) return byUser;
    const rows: IdentityRow[] = await this.tx.manager.query(
      `SELECT ${COLUMNS} FROM user_identities i JOIN identity_providers p ON p.id = i.provider_id
       WHERE i.realm_id = $1 AND i.user_id = ANY ($2::uuid[]) ORDER BY i.linked_at, i.id`,
      [realmId, ids],
    );
    for (const row of rows) {
      const identity = toIdentity(row);
      byUser.set(identity.userId, [...(byUser.get(identity.userId) ?? []), identity]);
    }
    return byUser;
  }

  async insert(identity: LinkedIdentity): Promise<void> {
    const record: UserIdentityRecord = {
      id: identity.id,
      realmId: identity.realmId,
      userId: identity.userId,
      providerId: identity.providerId,
      subject: identity.subject,
      email: identity.email,
      linkedAt: identity.linkedAt,
      lastUsedAt: identity.lastUsedAt,
    };
    try {
      await this.tx.manager.getRepository(UserIdentityRecord).insert(record);
    } catch (error) {
      if (sqlState(error) === UNIQUE_VIOLATION) throw new IdentityInUseError();
      throw error;
    }
  }

  async recordUse(id: string, email: string | null, now: Date): Promise<void> {
    await this.tx.manager.query(`UPDATE user_identities SET last_used_at = $2, email = $3 WHERE id = $1`, [id, now, email]);
  }

  async delete(realmId: string, userId: string, id: string): Promise<boolean> {
    if (!isUuid(userId) || !isUuid(id)) return false;
    const result = await this.tx.manager.getRepository(UserIdentityRecord).delete({ realmId, userId, id });
    return (result.affected ?? 0) > 0;
  }

  async deleteAllForUser(realmId: string, userId: string): Promise<number> {
    if (!isUuid(userId)) return 0;
    const rows = await this.tx.manager.query(`DELETE FROM user_identities WHERE realm_id = $1 AND user_id = $2 RETURNING id`, [
      realmId,
      userId,
    ]);
    return unwrapRows(rows).length;
  }

  async deleteAllForProvider(providerId: string): Promise<number> {
    if (!isUuid(providerId)) return 0;
    const rows = await this.tx.manager.query(`DELETE FROM user_identities WHERE provider_id = $1 RETURNING id`, [providerId]);
    return unwrapRows(rows).length;
  }
}
