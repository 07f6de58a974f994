import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { assertWayInRemains } from '../../domain/user/ways-in';
import { User } from '../../domain/user/user';
import { Clock } from '../ports/clock';
import { MfaCredentialRepository } from '../ports/mfa-credential.repository';
import { LinkedIdentityRepository } from '../ports/linked-identity.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { MfaAccount, MfaActor } from './mfa-account';

@Injectable()
export class RemoveWebauthnCredentialUseCase {
  constructor(
    private readonly account: MfaAccount,
    private readonly credentials: MfaCredentialRepository,
    private readonly users: UserRepository,
    private readonly identities: LinkedIdentityRepository,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Removes one of the caller's WebAuthn credentials after re-checking the password (or, for an
   * account without one, a recent sign-in); its next assertion fails. With no factor left, MFA is
   * off and the recovery codes are deleted. An account's last way to sign in stays.
   * @throws DomainError INVALID_CREDENTIALS | ACCOUNT_LOCKED | NOT_FOUND (no such credential of the caller) | INVALID_TOKEN |
   *   INVALID_USER_STATE (its last passkey, with no password or identity) | FORBIDDEN (a flagged session, or
   *   no recent sign-in without a password) | VALIDATION_FAILED
   */
  async execute(actor: MfaActor & { credentialId: string; password?: string }): Promise<User> {
    const user = await this.account.user(actor);
    const now = this.clock.now();
    await this.account.confirmPassword(user, actor.password, actor, 'mfa.webauthn.delete', now);
    return this.tx.run(async () => {
      // The user's row is held until the end: two removals at once cannot both take the last-but-one passkey.
      const current = await this.users.findByIdForUpdate(actor.realm.id, user.id);
      if (!current) throw new DomainError('INVALID_TOKEN', 'The access token is invalid');
      const credentials = await this.credentials.listWebauthn(user.id);
      // A disabled passkey (its counter went back) signs nobody in: removing it takes no way in away.
      const removing = credentials.find((c) => c.id === actor.credentialId);
      if (removing?.passkey && !removing.disabledAt && !current.hasPassword) {
        const identities = await this.identities.listForUser(actor.realm.id, user.id);
        const passkeys = credentials.filter((c) => c.passkey && !c.disabledAt).length;
        assertWayInRemains({ hasPassword: false, identities: identities.length, passkeys }, 'passkey');
      }
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
