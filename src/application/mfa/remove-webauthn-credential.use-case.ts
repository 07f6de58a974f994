import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { User } from '../../domain/user/user';
import { Clock } from '../ports/clock';
import { MfaCredentialRepository } from '../ports/mfa-credential.repository';
import { Transaction } from '../ports/transaction';
import { MfaAccount, MfaActor } from './mfa-account';

@Injectable()
export class RemoveWebauthnCredentialUseCase {
  constructor(
    private readonly account: MfaAccount,
    private readonly credentials: MfaCredentialRepository,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Removes one of the caller's WebAuthn credentials after re-checking the password; its next
   * assertion fails. With no factor left, MFA is off and the recovery codes are deleted.
   * @throws DomainError INVALID_CREDENTIALS | ACCOUNT_LOCKED | NOT_FOUND (no such credential of the caller) | INVALID_TOKEN
   */
  async execute(actor: MfaActor & { credentialId: string; password: string }): Promise<User> {
    const user = await this.account.user(actor);
    const now = this.clock.now();
    await this.account.confirmPassword(user, actor.password, actor, 'mfa.webauthn.delete', now);
    return this.tx.run(async () => {
      if (!(await this.credentials.deleteWebauthn(user.id, actor.credentialId))) {
        throw new DomainError('NOT_FOUND', 'No such WebAuthn credential');
      }
      const after = await this.account.afterRemoval(user);
      await this.account.record(actor, user, 'mfa.disabled', now, {
        method: 'webauthn',
        credentialId: actor.credentialId,
        mfaEnabled: after.mfaEnabled,
      });
      await this.account.notify(
        actor,
        user,
        after.mfaEnabled
          ? 'A security key or passkey was removed from your account.'
          : 'A security key or passkey was removed from your account; two-step sign-in is now off.',
      );
      return after;
    });
  }
}
