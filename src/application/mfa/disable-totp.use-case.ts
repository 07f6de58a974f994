import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { User } from '../../domain/user/user';
import { Clock } from '../ports/clock';
import { MfaCredentialRepository } from '../ports/mfa-credential.repository';
import { Transaction } from '../ports/transaction';
import { MfaAccount, MfaActor } from './mfa-account';

@Injectable()
export class DisableTotpUseCase {
  constructor(
    private readonly account: MfaAccount,
    private readonly credentials: MfaCredentialRepository,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Removes the TOTP secret (pending or active) after re-checking the password; its codes stop
   * working at once. With no factor left, MFA is off and the recovery codes are deleted.
   * @throws DomainError INVALID_CREDENTIALS | ACCOUNT_LOCKED | NOT_FOUND (no TOTP) | FORBIDDEN (a flagged session) | INVALID_TOKEN
   */
  async execute(actor: MfaActor & { password?: string }): Promise<User> {
    const user = await this.account.user(actor);
    const now = this.clock.now();
    await this.account.confirmPassword(user, actor.password, actor, 'mfa.totp.delete', now);
    return this.tx.run(async () => {
      const existing = await this.credentials.findTotp(user.id);
      if (!existing || !(await this.credentials.deleteTotp(user.id))) throw new DomainError('NOT_FOUND', 'TOTP is not set up');
      const after = await this.account.afterRemoval(user);
      if (existing.confirmedAt) {
        await this.account.record(actor, user, 'mfa.disabled', now, { method: 'totp', mfaEnabled: after.mfaEnabled });
        await this.account.notify(
          actor,
          user,
          after.mfaEnabled
            ? 'The authenticator app (TOTP) was removed from your account.'
            : 'The authenticator app (TOTP) was removed from your account; two-step sign-in is now off.',
        );
      }
      return after;
    });
  }
}
