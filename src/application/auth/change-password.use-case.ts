import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { PasswordHasher } from '../ports/password-hasher';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { NewPassword } from '../account/new-password';
import { RecentAuthentication } from '../sign-in/recent-authentication';
import { accountLocked, confirmPasswordUnderLockout } from '../sign-in/wrong-password';

export interface ChangePasswordInput {
  realm: Realm;
  userId: string;
  /** The session making the change; it stays signed in. */
  sessionId: string;
  /** Absent only for an account without a password: its first one. */
  currentPassword?: string;
  newPassword: string;
  ip: string;
}

@Injectable()
export class ChangePasswordUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly sessions: SessionRepository,
    private readonly hasher: PasswordHasher,
    private readonly newPassword: NewPassword,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly recentSignIn: RecentAuthentication,
  ) {}

  /**
   * Replaces the password after checking the current one, ends the user's other sessions, voids
   * pending reset links and MFA challenges, and tells the owner by email. A wrong current
   * password counts towards the account lockout like a failed login, and while the account is
   * locked every current password gets ACCOUNT_LOCKED, so a stolen access token cannot be used to
   * guess it. An account without a password (made by an email code or an identity provider)
   * sets its first one without `currentPassword`, from a recent sign-in (it adds a way in). A
   * flagged session changes no password (`RecentAuthentication`).
   * @throws DomainError INVALID_CREDENTIALS | ACCOUNT_LOCKED | VALIDATION_FAILED (currentPassword missing, or
   *   given for an account without a password) | FORBIDDEN (a flagged session, or a first password without a
   *   recent sign-in) | INVALID_TOKEN
   */
  async execute(input: ChangePasswordInput): Promise<{ otherSessionsRevoked: number }> {
    const user = await this.users.findById(input.realm.id, input.userId);
    if (!user) throw new DomainError('INVALID_TOKEN', 'The access token is invalid');
    const first = user.passwordHash === null;
    if (first) {
      if (input.currentPassword !== undefined)
        throw DomainError.validation('currentPassword', 'must be omitted: this account has no password yet');
      await this.recentSignIn.require(input.realm.id, input.sessionId, 'Setting a first password');
    } else {
      await this.recentSignIn.requireUnflagged(input.realm.id, input.sessionId, 'Changing the password');
      if (input.currentPassword === undefined) throw DomainError.validation('currentPassword', 'is required to change the password');
      const { users, audit, tx, hasher } = this;
      await confirmPasswordUnderLockout(
        { users, audit, tx, hasher },
        {
          realm: input.realm,
          user,
          password: input.currentPassword,
          sessionId: input.sessionId,
          ip: input.ip,
          at: this.clock.now(),
          details: { reason: 'wrong_current_password' },
          wrongMessage: 'The current password is incorrect',
        },
      );
    }
    const passwordHash = await this.newPassword.hash({
      realm: input.realm,
      password: input.newPassword,
      email: user.email,
      field: 'newPassword',
      differentFrom: input.currentPassword,
    });
    const now = this.clock.now();
    return this.tx.run(async () => {
      // Locked for the change: a lock set since the check (other attempts, an administrator) wins.
      const current = await this.users.findByIdForUpdate(input.realm.id, input.userId);
      // The password checked above must still be the account's, and the caller's session must
      // still be live: a takeover (which clears the password and ends every session under this
      // same row lock) or another change committed since the request was authenticated wins.
      const live =
        current && current.passwordHash === user.passwordHash
          ? await this.sessions.isLive(input.realm.id, input.sessionId, now, input.realm.policy.sessionLifetime)
          : false;
      if (!current || !live) throw new DomainError('INVALID_TOKEN', 'The access token is invalid');
      if (current.statusAt(now) === 'locked') throw accountLocked(current, now);
      // A password set meanwhile (another tab): this one is no longer a first password.
      if (first && current.passwordHash !== null) throw DomainError.validation('currentPassword', 'is required to change the password');
      const otherSessionsRevoked = await this.newPassword.set({
        realm: input.realm,
        user: current,
        passwordHash,
        now,
        revokeReason: 'password_changed',
        keepSessionId: input.sessionId,
        voidMfaChallenges: true,
        event: {
          type: 'password.changed',
          sessionId: input.sessionId,
          ip: input.ip,
          details: (revoked) => ({ otherSessionsRevoked: revoked, ...(first ? { firstPassword: true } : {}) }),
        },
      });
      return { otherSessionsRevoked };
    });
  }
}
