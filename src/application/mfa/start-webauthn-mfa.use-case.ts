import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { MfaChallenges, PendingLogin } from '../sign-in/mfa-challenges';
import { Clock } from '../ports/clock';
import { MfaCredentialRepository } from '../ports/mfa-credential.repository';
import { OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { WebAuthnRelyingParty } from '../ports/webauthn-relying-party';
import { openMfaChallenge } from './open-mfa-challenge';

@Injectable()
export class StartWebauthnMfaUseCase {
  constructor(
    private readonly challenges: MfaChallenges,
    private readonly credentials: MfaCredentialRepository,
    private readonly relyingParty: WebAuthnRelyingParty,
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * PublicKeyCredentialRequestOptionsJSON for the second step of a pending login: the user's
   * enabled credentials (a disabled one is not offered), user verification required, and a fresh
   * challenge bound to the mfaToken (it replaces an earlier one and dies with the token).
   * @throws DomainError INVALID_TOKEN | TOKEN_EXPIRED | VALIDATION_FAILED (no enabled credential)
   */
  async execute(input: { realm: Realm; mfaToken: string }): Promise<Record<string, unknown>> {
    const { token, pending } = await openMfaChallenge(this.challenges, input.realm, input.mfaToken, this.clock.now());
    const credentials = (await this.credentials.listWebauthn(token.userId)).filter((c) => !c.disabledAt);
    if (credentials.length === 0) {
      throw DomainError.validation('mfaToken', 'belongs to an account without an enabled WebAuthn credential');
    }
    const { challenge, options } = await this.relyingParty.authenticationOptions(
      credentials.map((c) => ({ id: c.id, transports: c.transports })),
      input.realm.policy.relyingParty,
    );
    const payload: PendingLogin = { ...pending, webauthnChallenge: challenge };
    await this.oneTimeTokens.updatePayload(token.tokenHash, payload as unknown as Record<string, unknown>);
    return options;
  }
}
