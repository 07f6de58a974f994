import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { User } from '../../domain/user/user';
import { Clock } from '../ports/clock';
import { MfaCredentialRepository } from '../ports/mfa-credential.repository';
import { SecretCipher } from '../ports/secret-cipher';
import { TotpVerifier } from '../ports/totp-verifier';
import { Transaction } from '../ports/transaction';
import { MfaAccount, MfaActor } from './mfa-account';

export interface FactorEnrolled {
  user: User;
  /** Given only when this was the user's first factor. */
  recoveryCodes: string[] | null;
}

@Injectable()
export class ConfirmTotpUseCase {
  constructor(
    private readonly account: MfaAccount,
    private readonly credentials: MfaCredentialRepository,
    private readonly totp: TotpVerifier,
    private readonly cipher: SecretCipher,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Activates the pending TOTP secret with a valid code from it (NIST 800-63B §6.1.2.1). The
   * code's step is recorded, so the same code cannot then complete a login. The first factor
   * comes with 10 recovery codes.
   * @throws DomainError VALIDATION_FAILED (wrong code) | INVALID_USER_STATE (nothing pending, or already enabled) |
   *   FORBIDDEN (a flagged session) | INVALID_TOKEN
   */
  async execute(actor: MfaActor & { code: string }): Promise<FactorEnrolled> {
    const user = await this.account.userForChange(actor, 'Adding an authenticator app');
    const pending = await this.credentials.findTotp(user.id);
    if (!pending) throw new DomainError('INVALID_USER_STATE', 'No TOTP setup is pending; call /mfa/totp/setup first');
    if (pending.confirmedAt) throw new DomainError('INVALID_USER_STATE', 'TOTP is already enabled');
    const now = this.clock.now();
    const secret = await this.cipher.decrypt(pending.secretEncrypted, user.id);
    const step = this.totp.matchingStep(secret, actor.code, now);
    if (step === null) throw DomainError.validation('code', 'is not the current code of the new secret');
    const firstFactor = !user.mfaEnabled;
    const recoveryCodes = await this.tx.run(async () => {
      // Decided on the locked row with the session checked again: a takeover or an MFA reset that
      // committed meanwhile (and a setup that stored another secret after it) enables nothing.
      await this.account.lockForChange(actor, now);
      if (!(await this.credentials.confirmTotp(user.id, step, now))) {
        throw new DomainError('INVALID_USER_STATE', 'TOTP is already enabled');
      }
      const codes = firstFactor ? await this.account.issueRecoveryCodes(user.id, now) : null;
      await this.account.record(actor, user, 'mfa.enabled', now, { method: 'totp', recoveryCodesIssued: firstFactor });
      await this.account.notify(actor, user, 'An authenticator app (TOTP) was added as a second factor to your account.');
      return codes;
    });
    return { user: await this.account.reload(user), recoveryCodes };
  }
}
