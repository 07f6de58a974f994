import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { normalisePassword } from '../../domain/user/password-policy';
import { User } from '../../domain/user/user';
import { AuditEntry, AuditLog } from '../ports/audit-log';
import { OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { PasswordBlocklist } from '../ports/password-blocklist';
import { PasswordHasher } from '../ports/password-hasher';
import { SessionRepository } from '../ports/session.repository';
import { UserRepository } from '../ports/user.repository';
import { AccountEmails } from './account-emails';

export interface NewPasswordCandidate {
  realm: Realm;
  password: string;
  /** The account's address: the password must not be it, nor built from it. */
  email: string;
  /** The field a refusal names; `password` when absent. */
  field?: string;
  /** The password it replaces, when the caller knows it: the new one must differ from it. */
  differentFrom?: string;
}

export interface NewPasswordChange {
  realm: Realm;
  /** Read under its row lock by the caller, inside the caller's transaction. */
  user: User;
  /** From `hash`. */
  passwordHash: string;
  now: Date;
  /** Why the user's sessions end, as the sessions record it. */
  revokeReason: string;
  /** The session making the change, which stays signed in. */
  keepSessionId?: string;
  /** A sign-in that got past the old password and waits for its second factor dies too. */
  voidMfaChallenges: boolean;
  /** The audit event of the change, recorded with the realm, the user and `now`. */
  event: Pick<AuditEntry, 'type' | 'actorId' | 'sessionId' | 'ip'> & { details(sessionsRevoked: number): Record<string, unknown> };
}

/**
 * Setting a new password, wherever it is set (registration, an administrator's new user, a
 * change, a reset link, an administrator's reset): the realm's rules, the hash, and then, for an
 * existing account, everything the old password let in ends.
 */
@Injectable()
export class NewPassword {
  constructor(
    private readonly users: UserRepository,
    private readonly sessions: SessionRepository,
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly hasher: PasswordHasher,
    private readonly blocklist: PasswordBlocklist,
    private readonly accountEmails: AccountEmails,
    private readonly audit: AuditLog,
  ) {}

  /**
   * The hash of a password the realm accepts for the account: its minimum length, not a common
   * password, not the address nor built from it or from the realm's id and name; and not the
   * password it replaces. Hashing is slow: call this before the transaction.
   * @throws DomainError VALIDATION_FAILED naming `field`
   */
  async hash({ realm, password, email, field, differentFrom }: NewPasswordCandidate): Promise<string> {
    realm.policy.assertAcceptablePassword(
      password,
      (c) => this.blocklist.isCommon(c),
      { email, contextWords: [realm.id, realm.name] },
      field,
    );
    if (differentFrom !== undefined && normalisePassword(password) === normalisePassword(differentFrom)) {
      throw DomainError.validation(field ?? 'password', 'must differ from the current password');
    }
    return this.hasher.hash(password);
  }

  /**
   * Stores the new hash on an existing account and ends what the old password let in: every
   * session but `keepSessionId`, pending reset links (and MFA challenges when asked); then tells
   * the owner by email and records `event`. Joins the caller's transaction.
   * @returns how many sessions ended
   */
  async set(change: NewPasswordChange): Promise<number> {
    const { realm, user, now } = change;
    user.changePasswordHash(change.passwordHash, now);
    await this.users.save(user);
    const revoked = await this.sessions.revokeAllForUser(realm.id, user.id, now, change.revokeReason, change.keepSessionId);
    await this.oneTimeTokens.voidUnused(user.id, 'password_reset', now);
    if (change.voidMfaChallenges) await this.oneTimeTokens.voidUnused(user.id, 'mfa', now);
    await this.accountEmails.sendPasswordChanged(realm, user);
    const { details, ...event } = change.event;
    await this.audit.record({ ...event, realmId: realm.id, userId: user.id, at: now, details: details(revoked) });
    return revoked;
  }
}
