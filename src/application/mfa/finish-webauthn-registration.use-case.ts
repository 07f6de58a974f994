import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { credentialName } from '../../domain/mfa/webauthn';
import { User } from '../../domain/user/user';
import { Clock } from '../ports/clock';
import { MfaCredentialRepository, WebauthnCredential } from '../ports/mfa-credential.repository';
import { OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { Transaction } from '../ports/transaction';
import { WebAuthnRelyingParty } from '../ports/webauthn-relying-party';
import { MfaAccount, MfaActor } from './mfa-account';

export interface WebauthnRegistered {
  credential: WebauthnCredential;
  user: User;
  recoveryCodes: string[] | null;
}

const noChallenge = () =>
  new DomainError('VALIDATION_FAILED', 'response does not answer a pending registration challenge of this user', {
    details: [{ field: 'response', message: 'does not answer a pending registration challenge (unknown, used or expired)' }],
  });

@Injectable()
export class FinishWebauthnRegistrationUseCase {
  constructor(
    private readonly account: MfaAccount,
    private readonly credentials: MfaCredentialRepository,
    private readonly relyingParty: WebAuthnRelyingParty,
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly secureTokens: SecureTokens,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Verifies the attestation for the caller's pending challenge (used up whatever the outcome)
   * and stores the credential. A credential id registered before, to anyone, is refused.
   * Not from a flagged session, which keeps its pending challenge for after the step-up.
   * @throws DomainError VALIDATION_FAILED | FORBIDDEN (a flagged session) | INVALID_TOKEN (also when the caller's session ended meanwhile)
   */
  async execute(actor: MfaActor & { response: unknown; name?: string }): Promise<WebauthnRegistered> {
    const givenName = actor.name === undefined ? null : credentialName(actor.name);
    const user = await this.account.userForChange(actor, 'Adding a security key or passkey');
    const now = this.clock.now();
    const challenge = this.relyingParty.challengeOf(actor.response);
    if (!challenge) throw noChallenge();
    const tokenHash = this.secureTokens.hash(challenge);
    const pending = await this.oneTimeTokens.find(tokenHash, 'webauthn_registration');
    if (!pending || pending.userId !== user.id || pending.realmId !== user.realmId) throw noChallenge();
    if (!(await this.oneTimeTokens.consume(tokenHash, now))) throw noChallenge();

    const verified = await this.relyingParty.verifyRegistration(actor.response, challenge, actor.realm.policy.relyingParty);
    const storedName = typeof pending.payload.name === 'string' ? pending.payload.name : null;
    const credential: WebauthnCredential = {
      ...verified,
      userId: user.id,
      name: givenName ?? storedName ?? credentialName(null, pending.payload.passkey === true),
      passkey: pending.payload.passkey === true,
      createdAt: now,
      lastUsedAt: null,
      disabledAt: null,
      disabledReason: null,
    };
    const firstFactor = !user.mfaEnabled;
    const recoveryCodes = await this.tx.run(async () => {
      await this.account.lockForChange(actor, now);
      await this.credentials.insertWebauthn(credential);
      const codes = firstFactor ? await this.account.issueRecoveryCodes(user.id, now) : null;
      await this.account.record(actor, user, 'mfa.enabled', now, {
        method: 'webauthn',
        credentialId: credential.id,
        name: credential.name,
        passkey: credential.passkey,
        recoveryCodesIssued: firstFactor,
      });
      await this.account.notify(
        actor,
        user,
        credential.passkey
          ? `A passkey ("${credential.name}") was added to your account: it signs you in without a password.`
          : `A security key or passkey ("${credential.name}") was added as a second factor to your account.`,
      );
      return codes;
    });
    return { credential, user: await this.account.reload(user), recoveryCodes };
  }
}
