import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { normaliseRecoveryCode, RECOVERY_CODE_COUNT, recoveryCodeFrom } from '../../domain/mfa/recovery-code';
import { User } from '../../domain/user/user';
import { AccountEmails } from '../account/account-emails';
import { AuditLog } from '../ports/audit-log';
import { MfaCredentialRepository } from '../ports/mfa-credential.repository';
import { PasswordHasher } from '../ports/password-hasher';
import { SecureTokens } from '../ports/secure-tokens';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { RecentAuthentication } from '../sign-in/recent-authentication';
import { confirmPasswordUnderLockout } from '../sign-in/wrong-password';

/** The signed-in caller of a /mfa endpoint. */
export interface MfaActor {
  realm: Realm;
  userId: string;
  sessionId: string;
  ip: string;
}

/** What the self-service MFA use cases share: the caller's account, password re-checks, recovery codes. */
@Injectable()
export class MfaAccount {
  constructor(
    private readonly users: UserRepository,
    private readonly credentials: MfaCredentialRepository,
    private readonly hasher: PasswordHasher,
    private readonly secureTokens: SecureTokens,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly emails: AccountEmails,
    private readonly sessions: SessionRepository,
    private readonly recentSignIn: RecentAuthentication,
  ) {}

  /**
   * Locks the caller's account for a change to its factors, then checks the caller's session is
   * still live: a change that ended every session (an account takeover, a password reset) holds
   * the same lock, so a request that passed authentication before it cannot add a factor after it.
   * Call inside the change's transaction.
   * @throws DomainError INVALID_TOKEN
   */
  async lockForChange(actor: MfaActor, now: Date): Promise<User> {
    const user = await this.users.findByIdForUpdate(actor.realm.id, actor.userId);
    if (!user || !(await this.sessions.isLive(actor.realm.id, actor.sessionId, now, actor.realm.policy.sessionLifetime))) {
      throw new DomainError('INVALID_TOKEN', 'The access token is invalid');
    }
    return user;
  }

  /** Audits a change the signed-in user made to their own factors (in the caller's transaction). */
  async record(
    actor: MfaActor,
    user: User,
    type: 'mfa.enabled' | 'mfa.disabled',
    now: Date,
    details: Record<string, unknown>,
  ): Promise<void> {
    await this.audit.record({ type, realmId: user.realmId, userId: user.id, sessionId: actor.sessionId, ip: actor.ip, at: now, details });
  }

  /** Tells the user by email that a factor changed (queued in the caller's transaction). */
  async notify(actor: MfaActor, user: User, what: string): Promise<void> {
    await this.emails.sendSecurityNotice(actor.realm, user, what);
  }

  /**
   * The caller's account for a change to its factors, from a session that is not flagged
   * (`RecentAuthentication.requireUnflagged`).
   * @throws DomainError FORBIDDEN (a flagged session) | INVALID_TOKEN
   */
  async userForChange(actor: MfaActor, action: string): Promise<User> {
    await this.recentSignIn.requireUnflagged(actor.realm.id, actor.sessionId, action);
    return this.user(actor);
  }

  /** Tells the user by email that a credential was disabled because its signature counter went back (in the caller's transaction). */
  async notifyCredentialDisabled(realm: Realm, user: User, credential: { name: string; passkey: boolean }): Promise<void> {
    await this.emails.sendCredentialDisabled(realm, user, credential);
  }

  /** @throws DomainError INVALID_TOKEN when the token's user no longer exists */
  async user(actor: MfaActor): Promise<User> {
    const user = await this.users.findById(actor.realm.id, actor.userId);
    if (!user) throw new DomainError('INVALID_TOKEN', 'The access token is invalid');
    return user;
  }

  /**
   * Re-checks the password before a factor is removed or the recovery codes replaced. A wrong
   * password counts towards the account lockout like a failed login, and while the account is
   * locked every password gets ACCOUNT_LOCKED, so a stolen access token cannot be used to guess it.
   * An account without a password sends none and needs a sign-in within the last 10 minutes instead.
   * Either way a flagged session changes nothing, whatever it sends (checked first).
   * @throws DomainError INVALID_CREDENTIALS | ACCOUNT_LOCKED | VALIDATION_FAILED (password missing, or given
   *   for an account without one) | FORBIDDEN (a flagged session, or no recent sign-in)
   */
  async confirmPassword(user: User, password: string | undefined, actor: MfaActor, action: string, now: Date): Promise<void> {
    if (user.passwordHash === null) {
      if (password !== undefined) throw DomainError.validation('password', 'must be omitted: this account has no password');
      await this.recentSignIn.requireForConfirmation(actor.realm.id, actor.sessionId, 'This change');
      return;
    }
    await this.recentSignIn.requireUnflagged(actor.realm.id, actor.sessionId, 'This change');
    if (password === undefined) throw DomainError.validation('password', 'is required to confirm this change');
    const { users, audit, tx, hasher } = this;
    await confirmPasswordUnderLockout(
      { users, audit, tx, hasher },
      {
        realm: actor.realm,
        user,
        password,
        sessionId: actor.sessionId,
        ip: actor.ip,
        at: now,
        details: { reason: 'wrong_password', action },
        wrongMessage: 'The password is incorrect',
      },
    );
  }

  /** Replaces the user's recovery codes with 10 new ones and returns them in clear, once. */
  async issueRecoveryCodes(userId: string, now: Date): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => recoveryCodeFrom(this.secureTokens.generate()));
    await this.credentials.replaceRecoveryCodes(
      userId,
      codes.map((code) => this.recoveryCodeHash(userId, normaliseRecoveryCode(code)!)),
      now,
    );
    return codes;
  }

  /**
   * The stored form of a normalised code (`normaliseRecoveryCode`). Hashed with its owner's id,
   * so equal codes of two users never share a hash; 80 random bits make a plain hash enough.
   */
  recoveryCodeHash(userId: string, normalisedCode: string): string {
    return this.secureTokens.hash(`recovery:${userId}:${normalisedCode}`);
  }

  /**
   * After a factor was removed: with no factor left MFA is off, and the recovery codes go too.
   * Returns the user as now stored.
   */
  async afterRemoval(user: User): Promise<User> {
    const fresh = (await this.users.findById(user.realmId, user.id)) ?? user;
    if (!fresh.mfaEnabled) await this.credentials.deleteRecoveryCodes(user.id);
    return fresh;
  }

  /** The user as now stored (its MFA methods are derived from the credentials). */
  async reload(user: User): Promise<User> {
    return (await this.users.findById(user.realmId, user.id)) ?? user;
  }
}
