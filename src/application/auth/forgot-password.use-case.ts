import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { Email } from '../../domain/user/email';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AccountEmails } from '../account/account-emails';

@Injectable()
export class ForgotPasswordUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly accountEmails: AccountEmails,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Emails a 1-hour, single-use reset link (older ones stop working) when the address belongs
   * to an account of the realm that is not suspended; an invited user without a password gets
   * one too. Returns nothing either way (no enumeration).
   */
  async execute(input: { realm: Realm; email: string }): Promise<void> {
    const now = this.clock.now();
    await this.tx.run(async () => {
      const user = await this.users.findByEmail(input.realm.id, Email.normalise(input.email));
      if (!user || user.statusAt(now) === 'suspended') return;
      await this.accountEmails.sendPasswordReset(input.realm, user, now);
    });
  }
}
