import { TokenSet } from '../../application/sign-in/session-issuer';
import { MfaStatus } from '../../application/mfa/get-mfa-status.use-case';
import { WebauthnCredential } from '../../application/ports/mfa-credential.repository';
import { AuditEvent, auditEventView } from '../../domain/audit/audit-event';
import { LinkedIdentity } from '../../domain/federation/linked-identity';
import { Realm } from '../../domain/realm/realm';
import { Role } from '../../domain/role/role';
import { Session, SessionLifetime } from '../../domain/session/session';
import { hasMfa, statusAt, User, UserSummary } from '../../domain/user/user';

/** HTTP shapes, whitelisted field by field. */
export const present = {
  authUser(user: User, withMfa = true) {
    return {
      id: user.id,
      email: user.email,
      emailVerified: user.emailVerified,
      ...(withMfa ? { mfaEnabled: user.mfaEnabled } : {}),
    };
  },

  /** Without `refreshToken` when it travels in a cookie. */
  tokens(tokens: TokenSet, options: { refreshToken: boolean } = { refreshToken: true }) {
    return {
      accessToken: tokens.accessToken,
      ...(options.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
      expiresIn: tokens.expiresIn,
      tokenType: tokens.tokenType,
    };
  },

  mfa(user: Pick<UserSummary, 'mfaMethods'>) {
    return { enabled: hasMfa(user), methods: user.mfaMethods };
  },

  mfaStatus(status: MfaStatus) {
    return {
      enabled: status.enabled,
      methods: status.methods,
      webauthnCredentials: status.webauthnCredentials.map((c) => ({
        id: c.id,
        name: c.name,
        passkey: c.passkey,
        disabled: c.disabledAt !== null,
        createdAt: c.createdAt.toISOString(),
        lastUsedAt: c.lastUsedAt ? c.lastUsedAt.toISOString() : null,
      })),
      recoveryCodesRemaining: status.recoveryCodesRemaining,
    };
  },

  webauthnCredentialCreated(credential: WebauthnCredential) {
    return { id: credential.id, name: credential.name, createdAt: credential.createdAt.toISOString() };
  },

  /** `identities`: the user's linked accounts (`ListUserIdentitiesUseCase`). */
  user(user: UserSummary, now: Date, identities: readonly LinkedIdentity[]) {
    const profile = user.profile;
    return {
      id: user.id,
      email: user.email,
      emailVerified: user.emailVerified,
      profile: { firstName: profile.firstName, lastName: profile.lastName, avatar: profile.avatar },
      mfa: present.mfa(user),
      status: statusAt(user, now),
      roles: user.roles,
      appMetadata: user.appMetadata,
      hasPassword: user.hasPassword,
      identities: identities.map((i) => ({ id: i.id, provider: i.provider, email: i.email, linkedAt: i.linkedAt.toISOString() })),
      createdAt: user.createdAt.toISOString(),
      lastLoginAt: user.lastLoginAt ? user.lastLoginAt.toISOString() : null,
    };
  },

  /** `expiresAt` under the realm's current session limits. */
  session(session: Session, lifetime: SessionLifetime) {
    const s = session.snapshot();
    return {
      id: s.id,
      userId: s.userId,
      device: { id: s.device.id, name: s.device.name, type: s.device.type, fingerprint: s.device.fingerprint },
      ip: s.ip,
      location: { country: s.location.country, city: s.location.city },
      status: s.status,
      dpopBound: session.dpopBound,
      flag: s.flag ? { reason: s.flag.reason, score: s.flag.score, flaggedAt: s.flag.flaggedAt.toISOString() } : null,
      createdAt: s.createdAt.toISOString(),
      lastActiveAt: s.lastActiveAt.toISOString(),
      expiresAt: session.expiresAt(lifetime).toISOString(),
    };
  },

  pagination(total: number, page: number, limit: number) {
    return { total, page, limit };
  },

  /** Every setting shown with the value in force (a fresh copy with the settings table's fields, no more). */
  realm(realm: Realm) {
    return {
      id: realm.id,
      name: realm.name,
      enabled: realm.enabled,
      settings: realm.settings,
      createdAt: realm.createdAt.toISOString(),
      updatedAt: realm.updatedAt.toISOString(),
    };
  },

  role(role: Role) {
    return { name: role.name, description: role.description, builtIn: role.builtIn, createdAt: role.createdAt.toISOString() };
  },

  event(event: AuditEvent) {
    return auditEventView(event);
  },
};
