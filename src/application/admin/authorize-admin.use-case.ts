import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { User } from '../../domain/user/user';
import { VerifiedAccessToken } from '../ports/access-tokens';
import { Clock } from '../ports/clock';
import { UserRepository } from '../ports/user.repository';
import { AdminActor } from './admin-actor';
import { MASTER_REALM, REALM_ADMIN, SUPER_ADMIN } from './bootstrap.use-case';

/** RFC 8176 methods that count as a second factor for ADMIN_REQUIRE_MFA. */
export const SECOND_FACTORS = ['otp', 'hwk'];

export type AdminGrant = 'super-admin' | 'realm-admin';

/**
 * The authorization rule of the admin API, on a caller's realm and roles: realm-admin of the
 * administered realm, or super-admin of master (every realm). `superAdminOnly` routes (realms)
 * accept only the latter. Null when neither applies.
 */
export function adminGrant(callerRealm: string, roles: readonly string[], targetRealm: string, superAdminOnly: boolean): AdminGrant | null {
  if (callerRealm === MASTER_REALM && roles.includes(SUPER_ADMIN)) return 'super-admin';
  if (!superAdminOnly && callerRealm === targetRealm && roles.includes(REALM_ADMIN)) return 'realm-admin';
  return null;
}

export interface AuthorizeAdminInput {
  principal: VerifiedAccessToken;
  /** The token's account as read with its session check moments ago (AuthenticateUseCase); read here when absent. */
  account?: User;
  /** The realm named by X-Realm-Id. */
  realmId: string;
  superAdminOnly: boolean;
  ip: string | null;
}

const forbidden = () => new DomainError('FORBIDDEN', 'This token may not administer this realm');

@Injectable()
export class AuthorizeAdminUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * Decides whether a verified access token may administer a realm. The token's roles must
   * grant it and so must the account's current roles (a role removed a minute ago no longer
   * counts, though the token still lists it), and the account must be active.
   * With ADMIN_REQUIRE_MFA the token must come from a login with a second factor.
   * @throws DomainError FORBIDDEN
   */
  async execute(input: AuthorizeAdminInput): Promise<AdminActor> {
    const { principal, realmId, superAdminOnly } = input;
    const claimed = adminGrant(principal.realm, principal.roles, realmId, superAdminOnly);
    if (!claimed) throw forbidden();
    const { account } = input;
    const user =
      account && account.id === principal.sub && account.realmId === principal.realm
        ? account
        : await this.users.findById(principal.realm, principal.sub);
    if (!user || !user.canAuthenticate(this.clock.now())) throw forbidden();
    const current = adminGrant(
      principal.realm,
      user.roles.filter((role) => principal.roles.includes(role)),
      realmId,
      superAdminOnly,
    );
    if (!current) throw forbidden();
    if (this.config.adminRequireMfa && !principal.amr.some((method) => SECOND_FACTORS.includes(method))) {
      throw new DomainError('FORBIDDEN', 'Administration requires MFA: sign in with a second factor (TOTP or a security key)');
    }
    return { id: user.id, realmId: principal.realm, superAdmin: current === 'super-admin', ip: input.ip };
  }
}
