import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { adminActionRule, AdminActionName, AdminCaller, AdminRefusal, decideAdmin } from '../../domain/admin/admin-policy';
import { DomainError } from '../../domain/errors';
import { User } from '../../domain/user/user';
import { VerifiedAccessToken } from '../ports/access-tokens';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';
import { UserRepository } from '../ports/user.repository';
import { AdminActor } from './admin-actor';

/** RFC 8176 methods that count as a second factor for ADMIN_REQUIRE_MFA. */
export const SECOND_FACTORS = ['otp', 'hwk', 'mfa'];

export interface AuthorizeAdminInput {
  principal: VerifiedAccessToken;
  /** The token's account as read with its session check moments ago (AuthenticateUseCase); read here when absent. */
  account?: User;
  /** The realm named by X-Realm-Id. */
  realmId: string;
  /** What the route does. */
  action: AdminActionName;
  /** The route's `:id`, when the action has a target (a user, or a session). */
  targetId?: string;
  ip: string | null;
}

type Refusal = AdminRefusal | 'account-inactive' | 'mfa-required';

const MESSAGES: Record<Refusal, string> = {
  'not-an-administrator': 'This token may not administer this realm',
  'account-inactive': 'This token may not administer this realm',
  'super-admins-only': 'Only a super-admin may do this',
  'guards-master': 'Only a super-admin may change the master realm’s settings, identity providers or roles',
  'super-admin-target': 'Only a super-admin may act on a super-admin’s account',
  'mfa-required': 'Administration requires MFA: sign in with a second factor (TOTP or a security key)',
};

/**
 * The enforcement point of the admin API: every admin route passes here with its action before
 * anything else runs, so no use case has to remember a check.
 */
@Injectable()
export class AuthorizeAdminUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly sessions: SessionRepository,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * Decides whether a verified access token may take `action` in a realm, on the user or session
   * `targetId` names (`decideAdmin`). Roles count when the token holds them and the account holds
   * them now (a role removed a minute ago no longer counts, though the token still lists it), and
   * the account must be active. With ADMIN_REQUIRE_MFA the token must come from a login with a
   * second factor. Every refusal is audited (`admin.denied`) in the administered realm.
   * @throws DomainError FORBIDDEN
   */
  async execute(input: AuthorizeAdminInput): Promise<AdminActor> {
    const { principal, realmId, action } = input;
    const claimed = decideAdmin({ realmId: principal.realm, roles: principal.roles }, realmId, action, null);
    if (!claimed.allowed) return this.refuse(input, claimed.reason, null);
    const account = await this.account(input);
    if (!account || !account.canAuthenticate(this.clock.now())) return this.refuse(input, 'account-inactive', null);
    if (this.config.adminRequireMfa && !principal.amr.some((method) => SECOND_FACTORS.includes(method))) {
      return this.refuse(input, 'mfa-required', null);
    }
    const caller: AdminCaller = { realmId: principal.realm, roles: account.roles.filter((role) => principal.roles.includes(role)) };
    let decision = decideAdmin(caller, realmId, action, null);
    if (!decision.allowed) return this.refuse(input, decision.reason, null);
    // The target matters only to someone who is not a super-admin: it is read then, and the same rule decides again.
    if (!decision.superAdmin && adminActionRule(action).target) {
      const target = await this.target(input);
      decision = decideAdmin(caller, realmId, action, target);
      if (!decision.allowed) return this.refuse(input, decision.reason, target);
    }
    return {
      id: account.id,
      realmId: principal.realm,
      superAdmin: decision.superAdmin,
      hidesSuperAdmins: decision.hidesSuperAdmins,
      ip: input.ip,
    };
  }

  private async account({ account, principal }: AuthorizeAdminInput): Promise<User | null> {
    if (account && account.id === principal.sub && account.realmId === principal.realm) return account;
    return this.users.findById(principal.realm, principal.sub);
  }

  /** The user the action is on: the `:id` user, or the owner of the `:id` session; null when none of the realm. */
  private async target({ action, targetId, realmId }: AuthorizeAdminInput): Promise<User | null> {
    const kind = adminActionRule(action).target;
    if (!kind || targetId === undefined) return null;
    if (kind === 'user') return this.users.findById(realmId, targetId);
    const session = await this.sessions.findById(realmId, targetId);
    return session ? this.users.findById(realmId, session.userId) : null;
  }

  /** Audits the refusal, so operators see a caller probing the boundary, and throws it. */
  private async refuse(input: AuthorizeAdminInput, reason: Refusal, target: User | null): Promise<never> {
    await this.audit.record({
      type: 'admin.denied',
      realmId: input.realmId,
      userId: target?.id ?? null,
      actorId: input.principal.sub,
      ip: input.ip,
      at: this.clock.now(),
      details: {
        action: input.action,
        reason,
        actorRealm: input.principal.realm,
        ...(input.targetId !== undefined ? { targetId: input.targetId.slice(0, 64) } : {}),
      },
    });
    throw new DomainError('FORBIDDEN', MESSAGES[reason]);
  }
}
