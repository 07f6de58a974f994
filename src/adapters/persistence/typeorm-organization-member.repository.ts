import { Injectable } from '@nestjs/common';
import {
  OrganizationClaim,
  OrganizationMemberRepository,
  OrganizationMemberView,
  UserMembershipView,
} from '../../application/ports/organization-member.repository';
import { Membership } from '../../domain/organization/organization';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';
import { isUuid } from './typeorm-user.repository';

interface MemberRow {
  organizationId: string;
  realmId: string;
  userId: string;
  roles: string[];
  joinedAt: Date | string;
}

/**
 * One round trip for a page of members: the organization's kept count and the page. The page's
 * keys are read from the index on (organization_id, joined_at, user_id) alone (an index-only scan
 * once autovacuum has marked the pages visible), from the start for the first half of the list and
 * from the end, backwards, for the second, so no page skips more than half the members; then each
 * row's roles and address are read by primary key (subqueries per row: the planner cannot know
 * how few rows the page has, and would join whole tables). The count and the
 * page are of one snapshot, so the direction always agrees with the rows there are.
 */
const PAGE = `
  WITH o AS (SELECT member_count AS n FROM organizations WHERE id = $1),
  keys AS (
    (SELECT k.user_id, k.joined_at FROM organization_members k
      WHERE k.organization_id = $1 AND $3 < (SELECT n FROM o) / 2
      ORDER BY k.joined_at, k.user_id LIMIT $2 OFFSET $3)
    UNION ALL
    (SELECT k.user_id, k.joined_at FROM organization_members k
      WHERE k.organization_id = $1 AND $3 >= (SELECT n FROM o) / 2
      ORDER BY k.joined_at DESC, k.user_id DESC
      LIMIT greatest(0, least($2, (SELECT n FROM o) - $3)) OFFSET greatest(0, (SELECT n FROM o) - $3 - $2))
  )
  SELECT (SELECT n FROM o) AS total,
         (SELECT coalesce(json_agg(json_build_object(
                   'userId', k.user_id,
                   'email', (SELECT u.email FROM users u WHERE u.id = k.user_id),
                   'roles', (SELECT m.roles FROM organization_members m WHERE m.organization_id = $1 AND m.user_id = k.user_id),
                   'joinedAt', k.joined_at) ORDER BY k.joined_at, k.user_id), '[]'::json)
            FROM keys k) AS members`;

@Injectable()
export class TypeOrmOrganizationMemberRepository implements OrganizationMemberRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async find(organizationId: string, userId: string): Promise<Membership | null> {
    if (!isUuid(organizationId) || !isUuid(userId)) return null;
    const [row] = await this.tx.manager.query<MemberRow[]>(
      `SELECT organization_id AS "organizationId", realm_id AS "realmId", user_id AS "userId", roles, joined_at AS "joinedAt"
         FROM organization_members WHERE organization_id = $1 AND user_id = $2`,
      [organizationId, userId],
    );
    return row ? { ...row, roles: [...row.roles], joinedAt: new Date(row.joinedAt) } : null;
  }

  async add(membership: Membership): Promise<boolean> {
    const rows = unwrapRows(
      await this.tx.manager.query(
        `INSERT INTO organization_members (organization_id, user_id, realm_id, roles, joined_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (organization_id, user_id) DO NOTHING RETURNING 1`,
        [membership.organizationId, membership.userId, membership.realmId, [...new Set(membership.roles)], membership.joinedAt],
      ),
    );
    return rows.length > 0;
  }

  async setRoles(organizationId: string, userId: string, roles: readonly string[]): Promise<boolean> {
    if (!isUuid(organizationId) || !isUuid(userId)) return false;
    const rows = unwrapRows(
      await this.tx.manager.query(`UPDATE organization_members SET roles = $3 WHERE organization_id = $1 AND user_id = $2 RETURNING 1`, [
        organizationId,
        userId,
        [...new Set(roles)],
      ]),
    );
    return rows.length > 0;
  }

  async remove(organizationId: string, userId: string): Promise<boolean> {
    if (!isUuid(organizationId) || !isUuid(userId)) return false;
    const rows = unwrapRows(
      await this.tx.manager.query(`DELETE FROM organization_members WHERE organization_id = $1 AND user_id = $2 RETURNING 1`, [
        organizationId,
        userId,
      ]),
    );
    return rows.length > 0;
  }

  async countWithRole(organizationId: string, role: string): Promise<number> {
    const [{ n }] = await this.tx.manager.query<{ n: string }[]>(
      `SELECT count(*) AS n FROM organization_members WHERE organization_id = $1 AND $2 = ANY (roles)`,
      [organizationId, role],
    );
    return Number(n);
  }

  async list(organizationId: string, page: number, limit: number): Promise<{ members: OrganizationMemberView[]; total: number }> {
    if (!isUuid(organizationId)) return { members: [], total: 0 };
    const [row] = await this.tx.preparedText<{
      total: number | string;
      members: { userId: string; email: string; roles: string[]; joinedAt: string }[];
    }>(PAGE, [organizationId, limit, (page - 1) * limit]);
    if (!row || row.total === null) return { members: [], total: 0 };
    return {
      members: row.members.map((m) => ({ userId: m.userId, email: m.email, roles: m.roles, joinedAt: new Date(m.joinedAt) })),
      total: Number(row.total),
    };
  }

  async listForUser(realmId: string, userId: string): Promise<UserMembershipView[]> {
    if (!isUuid(userId)) return [];
    return this.tx.manager.query<UserMembershipView[]>(
      `SELECT o.id, o.name, o.slug, m.roles FROM organization_members m JOIN organizations o ON o.id = m.organization_id
        WHERE m.user_id = $1 AND m.realm_id = $2 ORDER BY m.joined_at, o.id`,
      [userId, realmId],
    );
  }

  async claim(realmId: string, organizationId: string, userId: string): Promise<OrganizationClaim | null> {
    if (!isUuid(organizationId) || !isUuid(userId)) return null;
    const [row] = await this.tx.prepared<OrganizationClaim>(
      'organization_claim',
      `SELECT o.id, o.slug, m.roles FROM organization_members m JOIN organizations o ON o.id = m.organization_id
        WHERE m.organization_id = $1 AND m.user_id = $2 AND o.realm_id = $3`,
      [organizationId, userId, realmId],
    );
    return row ?? null;
  }
}
