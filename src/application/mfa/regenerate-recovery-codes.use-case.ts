import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { MfaAccount, MfaActor } from './mfa-account';

@Injectable()
export class RegenerateRecoveryCodesUseCase {
  constructor(
    private readonly account: MfaAccount,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * 10 new recovery codes after re-checking the password; every earlier code stops working.
   * @throws DomainError INVALID_CREDENTIALS | ACCOUNT_LOCKED | INVALID_USER_STATE (MFA is off) | FORBIDDEN (a flagged session) |
   *   INVALID_TOKEN
   */
  async execute(actor: MfaActor & { password?: string }): Promise<string[]> {
    const user = await this.account.user(actor);
    const now = this.clock.now();
    await this.account.confirmPassword(user, actor.password, actor, 'mfa.recovery_codes', now);
    if (!user.mfaEnabled) throw new DomainError('INVALID_USER_STATE', 'Recovery codes need MFA to be enabled');
    return this.tx.run(async () => {
      // Decided on the locked row with the session checked again: a takeover or an MFA reset that
      // committed since the password was checked leaves no codes behind.
      await this.account.lockForChange(actor, now);
      const codes = await this.account.issueRecoveryCodes(user.id, now);
      await this.account.record(actor, user, 'mfa.enabled', now, { method: 'recovery_codes', regenerated: true });
      await this.account.notify(actor, user, 'New recovery codes were generated for your account; the previous ones no longer work.');
      return codes;
    });
  }
}
