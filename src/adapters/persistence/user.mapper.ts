import { AppMetadata } from '../../domain/user/app-metadata';
import { MfaMethod, User, UserStatus, UserSummary } from '../../domain/user/user';
import { UserRecord } from './records/user.record';

/**
 * Columns a users list shows, aliased to the record's property names, plus the user's MFA methods
 * and whether an identity-provider account is linked (only then are the identities read).
 */
export const USER_SUMMARY_COLUMNS = `
  u.id, u.email, u.email_verified AS "emailVerified", u.first_name AS "firstName", u.last_name AS "lastName", u.avatar,
  u.status, u.locked_until AS "lockedUntil", u.roles, u.app_metadata AS "appMetadata", u.created_at AS "createdAt", u.last_login_at AS "lastLoginAt",
  u.password_hash IS NOT NULL AS "hasPassword",
  EXISTS (SELECT 1 FROM totp_credentials t WHERE t.user_id = u.id AND t.confirmed_at IS NOT NULL) AS "hasTotp",
  EXISTS (SELECT 1 FROM webauthn_credentials w WHERE w.user_id = u.id) AS "hasWebauthn",
  EXISTS (SELECT 1 FROM user_identities i WHERE i.user_id = u.id) AS "linkedIdentities"`;

/** Every column of a user row, as `USER_SUMMARY_COLUMNS` names them. */
export const USER_COLUMNS = `${USER_SUMMARY_COLUMNS},
  u.realm_id AS "realmId", u.password_hash AS "passwordHash", u.failed_login_count AS "failedLoginCount", u.updated_at AS "updatedAt"`;

export interface UserRow extends UserRecord {
  hasPassword: boolean;
  linkedIdentities: boolean;
  hasTotp: boolean;
  hasWebauthn: boolean;
}

export type UserSummaryRow = Omit<UserRow, 'realmId' | 'passwordHash' | 'failedLoginCount' | 'updatedAt'>;

function mfaMethods(row: UserSummaryRow): MfaMethod[] {
  const methods: MfaMethod[] = [];
  if (row.hasTotp) methods.push('totp');
  if (row.hasWebauthn) methods.push('webauthn');
  return methods;
}

/** A row of `USER_SUMMARY_COLUMNS`, read from JSON (dates as strings). */
export function toUserSummary(row: UserSummaryRow): UserSummary {
  return {
    id: row.id,
    email: row.email,
    emailVerified: row.emailVerified,
    profile: { firstName: row.firstName, lastName: row.lastName, avatar: row.avatar },
    status: row.status as UserStatus,
    lockedUntil: row.lockedUntil ? new Date(row.lockedUntil) : null,
    roles: row.roles ?? [],
    appMetadata: (row.appMetadata ?? {}) as AppMetadata,
    mfaMethods: mfaMethods(row),
    createdAt: new Date(row.createdAt),
    lastLoginAt: row.lastLoginAt ? new Date(row.lastLoginAt) : null,
    hasPassword: row.hasPassword,
    linkedIdentities: row.linkedIdentities,
  };
}

export function toUser(row: UserRow): User {
  const { hasPassword: _derived, ...summary } = toUserSummary(row);
  return User.restore({
    ...summary,
    realmId: row.realmId,
    passwordHash: row.passwordHash,
    failedLoginCount: Number(row.failedLoginCount),
    updatedAt: new Date(row.updatedAt),
    linkedIdentities: row.linkedIdentities,
  });
}

export function toUserRecord(user: User): UserRecord {
  const state = user.snapshot();
  const record = new UserRecord();
  record.id = state.id;
  record.realmId = state.realmId;
  record.email = state.email;
  record.emailVerified = state.emailVerified;
  record.passwordHash = state.passwordHash;
  record.firstName = state.profile.firstName;
  record.lastName = state.profile.lastName;
  record.avatar = state.profile.avatar;
  record.status = state.status;
  record.lockedUntil = state.lockedUntil;
  record.failedLoginCount = state.failedLoginCount;
  record.roles = state.roles;
  record.appMetadata = { ...state.appMetadata };
  record.createdAt = state.createdAt;
  record.updatedAt = state.updatedAt;
  record.lastLoginAt = state.lastLoginAt;
  return record;
}
