import { OrganizationInvitationRepository } from '../../src/application/ports/organization-invitation.repository';
import {
  OrganizationClaim,
  OrganizationMemberRepository,
  OrganizationMemberView,
  UserMembershipView,
} from '../../src/application/ports/organization-member.repository';
import { OrganizationQuery, OrganizationRepository } from '../../src/application/ports/organization.repository';
import { UserRepository } from '../../src/application/ports/user.repository';
import { DomainError } from '../../src/domain/errors';
import { Invitation } from '../../src/domain/organization/invitation';
import { Membership, Organization } from '../../src/domain/organization/organization';

/** What the three organization fakes share, as the tables do. */
export class OrganizationStore {
  readonly organizations = new Map<string, Organization>();
  readonly members = new Map<string, Membership>();
  readonly invitations = new Map<string, Invitation>();

  memberCount(organizationId: string): number {
    return [...this.members.values()].filter((m) => m.organizationId === organizationId).length;
  }

  withCount(organization: Organization): Organization {
    return Organization.restore({ ...organization.snapshot(), memberCount: this.memberCount(organization.id) });
  }
}

const key = (organizationId: string, userId: string) => `${organizationId} ${userId}`;
const byAge = <T extends { createdAt: Date; id: string }>(a: T, b: T) =>
  a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id);

export class InMemoryOrganizationRepository extends OrganizationRepository {
  constructor(readonly store = new OrganizationStore()) {
    super();
  }

  async findById(realmId: string, id: string): Promise<Organization | null> {
    const found = this.store.organizations.get(id);
    return found && found.realmId === realmId ? this.store.withCount(found) : null;
  }

  findByIdForUpdate(realmId: string, id: string): Promise<Organization | null> {
    return this.findById(realmId, id);
  }

  async findByDomain(realmId: string, domain: string): Promise<Organization | null> {
    const found = [...this.store.organizations.values()].find((o) => o.realmId === realmId && o.domains.includes(domain.toLowerCase()));
    return found ? this.store.withCount(found) : null;
  }

  async listEnforcedDomains(realmId: string): Promise<{ domain: string; organizationId: string }[]> {
    return [...this.store.organizations.values()]
      .filter((o) => o.realmId === realmId && o.requireIdentityProvider)
      .flatMap((o) => o.domains.map((domain) => ({ domain, organizationId: o.id })))
      .sort((a, b) => a.domain.localeCompare(b.domain));
  }

  async listByIdentityProvider(realmId: string, alias: string): Promise<Organization[]> {
    return [...this.store.organizations.values()]
      .filter((o) => o.realmId === realmId && o.identityProvider === alias)
      .sort(byAge)
      .map((o) => this.store.withCount(o));
  }

  async list(query: OrganizationQuery): Promise<{ organizations: Organization[]; total: number }> {
    const search = query.search?.toLowerCase();
    const matched = [...this.store.organizations.values()]
      .filter((o) => o.realmId === query.realmId)
      .filter((o) => !search || o.name.toLowerCase().includes(search) || o.slug.includes(search))
      .sort(byAge);
    const start = (query.page - 1) * query.limit;
    return { organizations: matched.slice(start, start + query.limit).map((o) => this.store.withCount(o)), total: matched.length };
  }

  async insert(organization: Organization): Promise<void> {
    this.assertUnique(organization);
    this.store.organizations.set(organization.id, Organization.restore(organization.snapshot()));
  }

  async save(organization: Organization): Promise<void> {
    this.assertUnique(organization);
    this.store.organizations.set(organization.id, Organization.restore(organization.snapshot()));
  }

  async delete(realmId: string, id: string): Promise<boolean> {
    const found = this.store.organizations.get(id);
    if (!found || found.realmId !== realmId) return false;
    this.store.organizations.delete(id);
    for (const [k, m] of this.store.members) if (m.organizationId === id) this.store.members.delete(k);
    for (const [k, i] of this.store.invitations) if (i.organizationId === id) this.store.invitations.delete(k);
    return true;
  }

  private assertUnique(organization: Organization): void {
    for (const other of this.store.organizations.values()) {
      if (other.id === organization.id || other.realmId !== organization.realmId) continue;
      if (other.slug === organization.slug || other.domains.some((d) => organization.domains.includes(d))) {
        throw new DomainError(
          'ORGANIZATION_EXISTS',
          `The realm has an organization with the slug "${organization.slug}" or one of these domains`,
        );
      }
    }
  }
}

export class InMemoryOrganizationMemberRepository extends OrganizationMemberRepository {
  constructor(
    readonly store: OrganizationStore,
    private readonly users: UserRepository,
  ) {
    super();
  }

  async find(organizationId: string, userId: string): Promise<Membership | null> {
    const found = this.store.members.get(key(organizationId, userId));
    return found ? { ...found, roles: [...found.roles] } : null;
  }

  async add(membership: Membership): Promise<boolean> {
    const k = key(membership.organizationId, membership.userId);
    if (this.store.members.has(k)) return false;
    this.store.members.set(k, { ...membership, roles: [...new Set(membership.roles)] });
    return true;
  }

  async setRoles(organizationId: string, userId: string, roles: readonly string[]): Promise<boolean> {
    const found = this.store.members.get(key(organizationId, userId));
    if (!found) return false;
    this.store.members.set(key(organizationId, userId), { ...found, roles: [...new Set(roles)] });
    return true;
  }

  async remove(organizationId: string, userId: string): Promise<boolean> {
    return this.store.members.delete(key(organizationId, userId));
  }

  async countWithRole(organizationId: string, role: string): Promise<number> {
    return [...this.store.members.values()].filter((m) => m.organizationId === organizationId && m.roles.includes(role)).length;
  }

  async list(organizationId: string, page: number, limit: number): Promise<{ members: OrganizationMemberView[]; total: number }> {
    const all = [...this.store.members.values()]
      .filter((m) => m.organizationId === organizationId)
      .sort((a, b) => a.joinedAt.getTime() - b.joinedAt.getTime() || a.userId.localeCompare(b.userId));
    const members: OrganizationMemberView[] = [];
    for (const m of all.slice((page - 1) * limit, page * limit)) {
      const user = await this.users.findById(m.realmId, m.userId);
      if (user) members.push({ userId: m.userId, email: user.email, roles: [...m.roles], joinedAt: m.joinedAt });
    }
    return { members, total: this.store.organizations.has(organizationId) ? all.length : 0 };
  }

  async listForUser(realmId: string, userId: string): Promise<UserMembershipView[]> {
    return [...this.store.members.values()]
      .filter((m) => m.realmId === realmId && m.userId === userId)
      .sort((a, b) => a.joinedAt.getTime() - b.joinedAt.getTime() || a.organizationId.localeCompare(b.organizationId))
      .flatMap((m) => {
        const o = this.store.organizations.get(m.organizationId);
        return o ? [{ id: o.id, name: o.name, slug: o.slug, roles: [...m.roles] }] : [];
      });
  }

  async claim(realmId: string, organizationId: string, userId: string): Promise<OrganizationClaim | null> {
    const m = this.store.members.get(key(organizationId, userId));
    const o = this.store.organizations.get(organizationId);
    return m && o && o.realmId === realmId ? { id: o.id, slug: o.slug, roles: [...m.roles] } : null;
  }
}

export class InMemoryOrganizationInvitationRepository extends OrganizationInvitationRepository {
  constructor(readonly store: OrganizationStore) {
    super();
  }

  async insertReplacingPending(invitation: Invitation, now: Date): Promise<void> {
    for (const [id, other] of this.store.invitations) {
      if (other.organizationId === invitation.organizationId && other.email === invitation.email && other.snapshot().status === 'pending') {
        this.store.invitations.set(id, Invitation.restore({ ...other.snapshot(), status: 'replaced', endedAt: now }));
      }
    }
    this.store.invitations.set(invitation.id, Invitation.restore(invitation.snapshot()));
  }

  async findByTokenHash(tokenHash: string): Promise<Invitation | null> {
    const found = [...this.store.invitations.values()].find((i) => i.tokenHash === tokenHash);
    return found ? Invitation.restore(found.snapshot()) : null;
  }

  async listPending(organizationId: string, now: Date): Promise<Invitation[]> {
    return [...this.store.invitations.values()]
      .filter((i) => i.organizationId === organizationId && i.isPendingAt(now))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || a.id.localeCompare(b.id))
      .map((i) => Invitation.restore(i.snapshot()));
  }

  async accept(id: string, now: Date): Promise<boolean> {
    return this.end(id, null, 'accepted', now);
  }

  async revoke(organizationId: string, id: string, now: Date): Promise<boolean> {
    return this.end(id, organizationId, 'revoked', now);
  }

  private end(id: string, organizationId: string | null, status: 'accepted' | 'revoked', now: Date): Promise<boolean> {
    const found = this.store.invitations.get(id);
    if (!found || !found.isPendingAt(now) || (organizationId !== null && found.organizationId !== organizationId))
      return Promise.resolve(false);
    this.store.invitations.set(id, Invitation.restore({ ...found.snapshot(), status, endedAt: now }));
    return Promise.resolve(true);
  }
}
