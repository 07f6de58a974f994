import { Injectable } from '@nestjs/common';
import { OrganizationQuery, OrganizationRepository } from '../../application/ports/organization.repository';
import { DomainError } from '../../domain/errors';
import { Organization } from '../../domain/organization/organization';
import { sqlState, UNIQUE_VIOLATION } from './database-errors';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';
import { isUuid } from './typeorm-user.repository';

const COLUMNS = `o.id, o.realm_id AS "realmId", o.name, o.slug, o.domains, o.identity_provider AS "identityProvider",
  o.require_identity_provider AS "requireIdentityProvider", o.member_count AS "memberCount",
  o.created_at AS "createdAt", o.updated_at AS "updatedAt"`;

interface OrganizationRow {
  id: string;
  realmId: string;
  name: string;
  slug: string;
  domains: string[];
  identityProvider: string | null;
  requireIdentityProvider: boolean;
  memberCount: number | string;
  createdAt: Date | string;
  updatedAt: Date | string;
}

function toOrganization(row: OrganizationRow): Organization {
  return Organization.restore({
    id: row.id,
    realmId: row.realmId,
    name: row.name,
    slug: row.slug,
    domains: row.domains,
    identityProvider: row.identityProvider,
    requireIdentityProvider: row.requireIdentityProvider,
    memberCount: Number(row.memberCount),
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
  });
}

/** `%`, `_` and `\` taken literally in a LIKE pattern. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const exists = (organization: Organization) =>
  new DomainError('ORGANIZATION_EXISTS', `The realm has an organization with the slug "${organization.slug}" or one of these domains`);

@Injectable()
export class TypeOrmOrganizationRepository implements OrganizationRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  private async one(sql: string, params: unknown[]): Promise<Organization | null> {
    const [row] = await this.tx.manager.query<OrganizationRow[]>(sql, params);
    return row ? toOrganization(row) : null;
  }

  findById(realmId: string, id: string): Promise<Organization | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.one(`SELECT ${COLUMNS} FROM organizations o WHERE o.realm_id = $1 AND o.id = $2`, [realmId, id]);
  }

  findByIdForUpdate(realmId: string, id: string): Promise<Organization | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.one(`SELECT ${COLUMNS} FROM organizations o WHERE o.realm_id = $1 AND o.id = $2 FOR UPDATE`, [realmId, id]);
  }

  findByDomain(realmId: string, domain: string): Promise<Organization | null> {
    return this.one(
      `SELECT ${COLUMNS} FROM organization_domains d JOIN organizations o ON o.id = d.organization_id
        WHERE d.realm_id = $1 AND d.domain = $2`,
      [realmId, domain.toLowerCase()],
    );
  }

  listEnforcedDomains(realmId: string): Promise<{ domain: string; organizationId: string }[]> {
    return this.tx.manager.query(
      `SELECT d.domain, d.organization_id AS "organizationId" FROM organization_domains d JOIN organizations o ON o.id = d.organization_id
        WHERE d.realm_id = $1 AND o.require_identity_provider ORDER BY d.domain`,
      [realmId],
    );
  }

  async listByIdentityProvider(realmId: string, alias: string): Promise<Organization[]> {
    const rows = await this.tx.manager.query<OrganizationRow[]>(
      `SELECT ${COLUMNS} FROM organizations o WHERE o.realm_id = $1 AND o.identity_provider = $2 ORDER BY o.created_at, o.id`,
      [realmId, alias],
    );
    return rows.map(toOrganization);
  }

  async list(query: OrganizationQuery): Promise<{ organizations: Organization[]; total: number }> {
    const params: unknown[] = [query.realmId];
    let where = 'o.realm_id = $1';
    if (query.search) {
      params.push(likePattern(query.search));
      where += ` AND (o.name ILIKE $2 OR o.slug ILIKE $2)`;
    }
    const [{ total }] = await this.tx.manager.query<{ total: string }[]>(
      `SELECT count(*) AS total FROM organizations o WHERE ${where}`,
      params,
    );
    const rows = await this.tx.manager.query<OrganizationRow[]>(
      `SELECT ${COLUMNS} FROM organizations o WHERE ${where} ORDER BY o.created_at, o.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, query.limit, (query.page - 1) * query.limit],
    );
    return { organizations: rows.map(toOrganization), total: Number(total) };
  }

  async insert(organization: Organization): Promise<void> {
    const s = organization.snapshot();
    await this.unique(organization, async () => {
      await this.tx.manager.query(
        `INSERT INTO organizations (id, realm_id, name, slug, domains, identity_provider, require_identity_provider, member_count, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9)`,
        [s.id, s.realmId, s.name, s.slug, s.domains, s.identityProvider, s.requireIdentityProvider, s.createdAt, s.updatedAt],
      );
      await this.writeDomains(s.realmId, s.id, s.domains);
    });
  }

  async save(organization: Organization): Promise<void> {
    const s = organization.snapshot();
    await this.unique(organization, async () => {
      await this.tx.manager.query(
        `UPDATE organizations SET name = $3, slug = $4, domains = $5, identity_provider = $6, require_identity_provider = $7, updated_at = $8
          WHERE realm_id = $1 AND id = $2`,
        [s.realmId, s.id, s.name, s.slug, s.domains, s.identityProvider, s.requireIdentityProvider, s.updatedAt],
      );
      await this.tx.manager.query(`DELETE FROM organization_domains WHERE organization_id = $1`, [s.id]);
      await this.writeDomains(s.realmId, s.id, s.domains);
    });
  }

  async delete(realmId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const rows = unwrapRows(
      await this.tx.manager.query(`DELETE FROM organizations WHERE realm_id = $1 AND id = $2 RETURNING id`, [realmId, id]),
    );
    return rows.length > 0;
  }

  private async writeDomains(realmId: string, id: string, domains: readonly string[]): Promise<void> {
    if (domains.length === 0) return;
    await this.tx.manager.query(
      `INSERT INTO organization_domains (realm_id, domain, organization_id) SELECT $1, d, $2 FROM unnest($3::text[]) AS d`,
      [realmId, id, domains],
    );
  }

  private async unique(organization: Organization, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      if (sqlState(error) === UNIQUE_VIOLATION) throw exists(organization);
      throw error;
    }
  }
}
