import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { emailDomain } from '../../domain/organization/organization';
import { Realm } from '../../domain/realm/realm';
import { Email } from '../../domain/user/email';
import { User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { OrganizationMemberRepository } from '../ports/organization-member.repository';
import { OrganizationRepository } from '../ports/organization.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';

/** How long a realm's enforced domains are kept before they are read again (changes made here are seen at once). */
const ENFORCED_DOMAINS_TTL_MS = 5_000;

export const ssoRequired = () => new DomainError('SSO_REQUIRED', 'Addresses of this organization sign in through its identity provider');

/**
 * What organizations change about signing in: addresses of a domain whose organization requires
 * its identity provider sign in only through it, and a sign-in through an organization's
 * provider makes the user a member.
 */
@Injectable()
export class OrganizationSignIn {
  private readonly enforced = new Map<string, { readAt: number; domains: Set<string> }>();

  constructor(
    private readonly organizations: OrganizationRepository,
    private readonly members: OrganizationMemberRepository,
    private readonly users: UserRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Refuses a sign-in that is not through the organization's provider (password right or wrong,
   * passkey, email code) for an address of a domain whose organization requires it: the same
   * answer for an address with an account and one without. Administrators (realm-admin,
   * super-admin) are exempt. Without such organizations in the realm it reads nothing (the
   * realm's enforced domains are kept for a few seconds).
   * @param user the address's account when the caller has read it (null: none), undefined to look it up
   * @throws DomainError SSO_REQUIRED
   */
  async assertOtherWaysAllowed(input: {
    realm: Realm;
    email: string;
    user?: User | null;
    method: string;
    ip: string | null;
  }): Promise<void> {
    const domain = emailDomain(input.email);
    if (!domain || !(await this.enforcedDomains(input.realm.id)).has(domain)) return;
    const user = input.user === undefined ? await this.users.findByEmail(input.realm.id, Email.normalise(input.email)) : input.user;
    if (user?.isAdministrator()) return;
    await this.audit.record({
      type: 'login.failed',
      realmId: input.realm.id,
      userId: user?.id ?? null,
      ip: input.ip,
      at: this.clock.now(),
      details: { method: input.method, reason: 'sso_required', domain },
    });
    throw ssoRequired();
  }

  /**
   * After a sign-in through the identity provider `alias`: the user joins (with no roles) each
   * organization of the realm that signs in through it and whose domains hold the user's address
   * (or that names no domains), audited `organization.member_added` with `method: "federated"`.
   */
  async joinThroughProvider(realmId: string, alias: string, userId: string, ip: string | null): Promise<void> {
    const organizations = await this.organizations.listByIdentityProvider(realmId, alias);
    if (organizations.length === 0) return;
    const user = await this.users.findById(realmId, userId);
    if (!user) return;
    const now = this.clock.now();
    for (const organization of organizations) {
      if (organization.domains.length > 0 && !organization.ownsAddress(user.email)) continue;
      await this.tx.run(async () => {
        if (!(await this.members.add({ organizationId: organization.id, realmId, userId, roles: [], joinedAt: now }))) return;
        await this.audit.record({
          type: 'organization.member_added',
          realmId,
          userId,
          actorId: userId,
          ip,
          at: now,
          details: { organizationId: organization.id, slug: organization.slug, roles: [], method: 'federated', provider: alias },
        });
      });
    }
  }

  /**
   * Home-realm discovery: the organization of the realm one of whose domains the address is of,
   * so a sign-in page can send its user to the organization's provider; null when none.
   */
  async discover(
    realmId: string,
    email: string,
  ): Promise<{ id: string; name: string; slug: string; identityProvider: string | null } | null> {
    const domain = emailDomain(Email.normalise(email));
    const organization = domain ? await this.organizations.findByDomain(realmId, domain) : null;
    return organization
      ? { id: organization.id, name: organization.name, slug: organization.slug, identityProvider: organization.identityProvider }
      : null;
  }

  /** Reads the realm's enforced domains again at the next sign-in (after its organizations changed). */
  forget(realmId: string): void {
    this.enforced.delete(realmId);
  }

  private async enforcedDomains(realmId: string): Promise<Set<string>> {
    const now = this.clock.now().getTime();
    const kept = this.enforced.get(realmId);
    if (kept && now - kept.readAt < ENFORCED_DOMAINS_TTL_MS) return kept.domains;
    const domains = new Set((await this.organizations.listEnforcedDomains(realmId)).map((d) => d.domain));
    this.enforced.set(realmId, { readAt: now, domains });
    return domains;
  }
}
