import { MfaMethod, User, UserStatus } from '../../domain/user/user';
import { UserRecord } from './records/user.record';

/** Columns of a user row, aliased to the record's property names, plus its MFA methods. */
export const USER_COLUMNS = `
  u.id, u.realm_id AS "realmId", u.email, u.email_verified AS "emailVerified", u.password_hash AS "passwordHash",
  u.first_name AS "firstName", u.last_name AS "lastName", u.avatar, u.status, u.locked_until AS "lockedUntil",
  u.failed_login_count AS "failedLoginCount", u.roles, u.created_at AS "createdAt", u.updated_at AS "updatedAt",
  u.last_login_at AS "lastLoginAt",
  EXISTS (SELECT 1 FROM totp_credentials t WHERE t.user_id = u.id AND t.confirmed_at IS NOT NULL) AS "hasTotp",
  EXISTS (SELECT 1 FROM webauthn_credentials w WHERE w.user_id = u.id) AS "hasWebauthn"`;

export interface UserRow extends UserRecord {
  hasTotp: boolean;
  hasWebauthn: boolean;
}

export function toUser(row: UserRow): User {
  const mfaMethods: MfaMethod[] = [];
  if (row.hasTotp) mfaMethods.push('totp');
  if (row.hasWebauthn) mfaMethods.push('webauthn');
  return User.restore({
    id: row.id,
    realmId: row.realmId,
    email: row.email,
    emailVerified: row.emailVerified,
    passwordHash: row.passwordHash,
    profile: { firstName: row.firstName, lastName: row.lastName, avatar: row.avatar },
    status: row.status as UserStatus,
    lockedUntil: row.lockedUntil ? new Date(row.lockedUntil) : null,
    failedLoginCount: Number(row.failedLoginCount),
    roles: row.roles ?? [],
    mfaMethods,
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
    lastLoginAt: row.lastLoginAt ? new Date(row.lastLoginAt) : null,
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
  record.createdAt = state.createdAt;
  record.updatedAt = state.updatedAt;
  record.lastLoginAt = state.lastLoginAt;
  return record;
}
