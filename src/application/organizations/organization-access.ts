import { Injectable } from '@nestjs/common';
import { protectsTarget } from '../../domain/admin/admin-policy';
import { AuditEventType } from '../../domain/audit/audit-event';
import { DomainError } from '../../domain/errors';
import { Organization } from '../../domain/organization/organization';
import {
  decideOrganization,
  OrganizationAction,
  OrganizationCaller,
  unknownOrganizationRoles,
} from '../../domain/organization/organization-policy';
import { User } from '../../domain/user/user';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { OrganizationMemberRepository } from '../ports/organization-member.repository';
import { OrganizationRepository } from '../ports/organization.repository';
import { RoleRepository } from '../ports/role.repository';

/**
 * Who asks to manage an organization: an administrator the admin API admitted (over
 * `/v1/admin`), or a signed-in user of the realm (over `/api/v1/auth/organizations`).
 */
export type OrganizationRequester =
  { kind: 'admin'; admin: AdminActor } | { kind: 'user'; userId: string; realmId: string; ip: string | null };

/** The admitted actor: its id and address for the audit, and whether it acts as the organization's own administrator. */
export interface OrganizationActor {
  id: string;
  ip: string | null;
  /** An org-admin acting on its own organization (not a realm administrator). */
  delegated: boolean;
  /** A super-admin (who alone acts on a super-admin's membership in `master`). */
  superAdmin: boolean;
}

/** @throws DomainError ORGANIZATION_NOT_FOUND */
export const organizationNotFound = () => new DomainError('ORGANIZATION_NOT_FOUND', 'Organization not found');

/**
 * The enforcement point for an organization's members and invitations: every use case that
 * reads or changes them passes here first, with its action, for both APIs; the rule itself is
 * `decideOrganization`.
 */
@Injectable()
export class OrganizationAccess {
  constructor(
    private readonly organizations: OrganizationRepository,
    private readonly members: OrganizationMemberRepository,
    private readonly roles: RoleRepository,
    private readonly audit: AuditLog,
  ) {}

  /**
   * The organization `organizationId` of the realm and the admitted actor. With `lock`, the
   * organization's row stays locked until the transaction ends (call inside `Transaction.run`).
   * @throws DomainError ORGANIZATION_NOT_FOUND for an unknown id or one of another realm | FORBIDDEN
   */
  async authorize(
    requester: OrganizationRequester,
    realmId: string,
    organizationId: string,
    action: OrganizationAction,
    options: { lock?: boolean } = {},
  ): Promise<{ organization: Organization; actor: OrganizationActor }> {
    const organization = options.lock
      ? await this.organizations.findByIdForUpdate(realmId, organizationId)
      : await this.organizations.findById(realmId, organizationId);
    if (!organization) throw organizationNotFound();
    let caller: OrganizationCaller;
    if (requester.kind === 'admin') {
      caller = { kind: 'realm-administrator' };
    } else {
      const membership = requester.realmId === realmId ? await this.members.find(organization.id, requester.userId) : null;
      caller = { kind: 'user', realmId: requester.realmId, membershipRoles: membership?.roles ?? null };
    }
    const decision = decideOrganization(caller, organization.realmId, action);
    if (!decision.allowed) {
      throw new DomainError('FORBIDDEN', 'Only the organization’s administrators may do this');
    }
    const actor =
      requester.kind === 'admin'
        ? { id: requester.admin.id, ip: requester.admin.ip, delegated: false, superAdmin: requester.admin.superAdmin }
        : { id: requester.userId, ip: requester.ip, delegated: true, superAdmin: false };
    return { organization, actor };
  }

  /**
   * Organization roles: `org-admin` and the realm's defined roles (which stay defined until the
   * transaction ends), never realm-admin or super-admin.
   * @throws DomainError VALIDATION_FAILED with a detail per name that is no organization role
   */
  async assertOrganizationRoles(realmId: string, names: readonly string[]): Promise<void> {
    const defined = new Set(await this.roles.findDefined(realmId, [...new Set(names)]));
    const unknown = unknownOrganizationRoles(names, defined);
    if (unknown.length === 0) return;
    const details = unknown.map((name) => ({ field: 'roles', message: `"${name}" is not an organization role of this realm` }));
    throw new DomainError('VALIDATION_FAILED', `roles ${details[0].message}`, { details });
  }

  /**
   * Only a super-admin acts on a super-admin's membership (in `master`, where one can exist).
   * @throws DomainError FORBIDDEN
   */
  assertMayActOn(actor: OrganizationActor, target: User): void {
    if (protectsTarget(actor.superAdmin, target)) throw new DomainError('FORBIDDEN', 'Only a super-admin may act on a super-admin');
  }

  /** Audits a change to an organization, with its actor. */
  record(
    type: Extract<AuditEventType, `organization.${string}`>,
    actor: { id: string | null; ip: string | null },
    organization: Organization,
    at: Date,
    details: Record<string, unknown> = {},
    userId: string | null = null,
  ): Promise<void> {
    return this.audit.record({
      type,
      realmId: organization.realmId,
      userId,
      actorId: actor.id,
      ip: actor.ip,
      at,
      details: { organizationId: organization.id, slug: organization.slug, ...details },
    });
  }
}
