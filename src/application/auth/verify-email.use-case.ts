import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { EmailLinkTokens, invalidLinkToken } from './email-link-tokens';

export interface VerifyEmailInput {
  realm: Realm;
  token: string;
  ip: string;
}

@Injectable()
export class VerifyEmailUseCase {
  constructor(
    private readonly linkTokens: EmailLinkTokens,
    private readonly users: UserRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Marks the address verified with the token of a verification link; the token works once.
   * Verifying does not sign in: the email is not an authenticator.
   * @throws DomainError INVALID_VERIFICATION_TOKEN for an unknown, used, expired or foreign token
   */
  async execute(input: VerifyEmailInput): Promise<void> {
    const now = this.clock.now();
    const { record } = await this.linkTokens.find(input.realm, 'email_verification', input.token, now);
    await this.tx.run(async () => {
      await this.linkTokens.consume(record, now);
      // Read again inside the transaction: the address must still be the one the link went to.
      // Locked for the change: a suspension or lock committed meanwhile is not written over.
      const user = await this.users.findByIdForUpdate(input.realm.id, record.userId);
      if (!user || user.email !== record.email) throw invalidLinkToken();
      user.verifyEmail(now);
      await this.users.save(user);
      await this.audit.record({ type: 'email.verified', realmId: input.realm.id, userId: user.id, ip: input.ip, at: now });
    });
  }
}
