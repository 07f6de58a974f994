import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AccountTakeover } from '../account/account-takeover';
import { EmailLinkTokens, invalidLinkToken } from '../account/email-link-tokens';

export interface VerifyEmailInput {
  realm: Realm;
  token: string;
  /** The owner of the address says they did not create this account: it is taken over, not confirmed. */
  notMe?: boolean;
  ip: string;
}

@Injectable()
export class VerifyEmailUseCase {
  constructor(
    private readonly linkTokens: EmailLinkTokens,
    private readonly users: UserRepository,
    private readonly takeover: AccountTakeover,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Answers a verification link; the token works once. Opening the link decides nothing: the page
   * asks, and only the answer comes here. "Yes, I created it" marks the address verified. "I
   * didn't" (`notMe`) means someone else registered the address: the account is taken over as a
   * provider's or an email code's proof of the address takes it (`AccountTakeover`: password,
   * second factors, linked accounts, sessions and profile removed); the owner then signs in with
   * an email code or sets a password through the forgotten-password link.
   * Verifying does not sign in: the email is not an authenticator.
   * @throws DomainError INVALID_VERIFICATION_TOKEN for an unknown, used, expired or foreign token |
   *   INVALID_USER_STATE for `notMe` on an administrator's account (never taken over automatically)
   */
  async execute(input: VerifyEmailInput): Promise<void> {
    const now = this.clock.now();
    const { record } = await this.linkTokens.find(input.realm, 'email_verification', input.token, now);
    await this.tx.run(async () => {
      await this.linkTokens.consume(record, now);
      // Read again inside the transaction: the address must still be the one the link went to.
      // Locked for the change: a suspension, a lock or a credential committed meanwhile is not written over.
      const user = await this.users.findByIdForUpdate(input.realm.id, record.userId);
      if (!user || user.email !== record.email) throw invalidLinkToken();
      if (input.notMe) {
        // Verified meanwhile (by this very link's owner, another way): there is nothing left to disown.
        if (user.emailVerified) throw invalidLinkToken();
        await this.takeover.execute({
          user,
          now,
          ip: input.ip,
          event: { type: 'email.verified', details: { method: 'verification-link' } },
        });
        return;
      }
      user.verifyEmail(now);
      await this.users.save(user);
      await this.audit.record({ type: 'email.verified', realmId: input.realm.id, userId: user.id, ip: input.ip, at: now });
    });
  }
}
