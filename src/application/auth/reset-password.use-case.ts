import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AccountTakeover } from '../account/account-takeover';
import { EmailLinkTokens, invalidLinkToken } from '../account/email-link-tokens';
import { NewPassword } from '../account/new-password';

export interface ResetPasswordInput {
  realm: Realm;
  token: string;
  password: string;
  ip: string;
}

@Injectable()
export class ResetPasswordUseCase {
  constructor(
    private readonly linkTokens: EmailLinkTokens,
    private readonly users: UserRepository,
    private readonly newPassword: NewPassword,
    private readonly takeover: AccountTakeover,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Sets a new password with the token of a reset (or invitation) link and ends every session
   * of the user; pending MFA challenges die with the old password. The link proves the mailbox,
   * so the address counts as verified. The owner is told by email.
   * An address proven here for the first time proves that the account was never anyone else's:
   * as after an identity provider or an email code, it is taken over (`AccountTakeover`), so a
   * squatter who registered the address first keeps no second factor, passkey or linked identity
   * to come back with. An administrator's account is never taken over (administrators made it).
   * A password the policy refuses leaves the token usable.
   * @throws DomainError INVALID_VERIFICATION_TOKEN | VALIDATION_FAILED
   */
  async execute(input: ResetPasswordInput): Promise<void> {
    const now = this.clock.now();
    const { record, user } = await this.linkTokens.find(input.realm, 'password_reset', input.token, now);
    const passwordHash = await this.newPassword.hash({ realm: input.realm, password: input.password, email: user.email });
    await this.tx.run(async () => {
      await this.linkTokens.consume(record, now);
      // Locked for the change: a suspension or lock committed meanwhile is not written over.
      const current = await this.users.findByIdForUpdate(input.realm.id, record.userId);
      if (!current || current.email !== record.email) throw invalidLinkToken();
      const newlyVerified = !current.emailVerified;
      const takenOver = newlyVerified && !current.isAdministrator();
      if (takenOver) {
        await this.takeover.execute({
          user: current,
          now,
          ip: input.ip,
          event: { type: 'email.verified', details: { via: 'password_reset' } },
        });
      }
      current.verifyEmail(now);
      await this.newPassword.set({
        realm: input.realm,
        user: current,
        passwordHash,
        now,
        revokeReason: 'password_reset',
        voidMfaChallenges: true,
        event: { type: 'user.password_reset', ip: input.ip, details: (sessionsRevoked) => ({ method: 'email_link', sessionsRevoked }) },
      });
      if (newlyVerified && !takenOver) {
        await this.audit.record({
          type: 'email.verified',
          realmId: input.realm.id,
          userId: current.id,
          ip: input.ip,
          at: now,
          details: { via: 'password_reset' },
        });
      }
    });
  }
}
