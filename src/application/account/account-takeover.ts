import { Injectable } from '@nestjs/common';
import { AuditEventType } from '../../domain/audit/audit-event';
import { User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { LinkedIdentityRepository } from '../ports/linked-identity.repository';
import { MfaCredentialRepository } from '../ports/mfa-credential.repository';
import { OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';

export interface AccountTakeoverInput {
  user: User;
  now: Date;
  ip: string | null;
  /** What proved the address, audited with `takeover: true`: `identity.linked` or `email.verified`. */
  event: { type: Extract<AuditEventType, 'identity.linked' | 'email.verified'>; details: Record<string, unknown> };
}

/**
 * An unverified account claimed by whoever just proved its address (an identity provider, an
 * email code). Until then nobody knew the account was its owner's: a squatter may have
 * registered the address first and added a password, second factors, linked accounts or kept a
 * session. All of it goes, in one transaction with the claim: the password, TOTP, security keys
 * and passkeys, recovery codes, every linked identity and every session.
 */
@Injectable()
export class AccountTakeover {
  constructor(
    private readonly users: UserRepository,
    private readonly credentials: MfaCredentialRepository,
    private readonly identities: LinkedIdentityRepository,
    private readonly sessions: SessionRepository,
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
  ) {}

  /**
   * Applies `User.takeOver` to `user` (read under its row lock by the caller, inside the same
   * transaction) and stores it with everything removed. Joins the caller's transaction.
   * @throws DomainError INVALID_USER_STATE when the account is verified or an administrator's
   */
  async execute({ user, now, ip, event }: AccountTakeoverInput): Promise<void> {
    const removed = { password: user.hasPassword, mfaMethods: user.mfaMethods };
    user.takeOver(now);
    await this.tx.run(async () => {
      await this.users.save(user);
      await this.credentials.deleteAllForUser(user.id);
      const identities = await this.identities.deleteAllForUser(user.realmId, user.id);
      const sessions = await this.sessions.revokeAllForUser(user.realmId, user.id, now, 'account_takeover');
      // A sign-in of the squatter's waiting for its second factor dies with the factors.
      await this.oneTimeTokens.voidUnused(user.id, 'mfa', now);
      await this.audit.record({
        type: event.type,
        realmId: user.realmId,
        userId: user.id,
        ip,
        at: now,
        details: { ...event.details, takeover: true, removed: { ...removed, identities, sessions } },
      });
    });
  }
}
