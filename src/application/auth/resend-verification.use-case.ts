import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { Email } from '../../domain/user/email';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AccountEmails } from '../account/account-emails';

@Injectable()
export class ResendVerificationUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly accountEmails: AccountEmails,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Sends a fresh verification link (older links stop working) when the address belongs to an
   * unverified, not suspended account of the realm. Returns nothing either way: the caller
   * answers the same whether or not the address is known (no enumeration).
   */
  async execute(input: { realm: Realm; email: string }): Promise<void> {
    const now = this.clock.now();
    await this.tx.run(async () => {
      const user = await this.users.findByEmail(input.realm.id, Email.normalise(input.email));
      if (!user || user.emailVerified || user.statusAt(now) === 'suspended') return;
      await this.accountEmails.sendVerification(input.realm, user, now);
    });
  }
}
