import { Injectable } from '@nestjs/common';
import { credentialName } from '../../domain/mfa/webauthn';
import { RecentAuthentication } from '../sign-in/recent-authentication';
import { Clock } from '../ports/clock';
import { MfaCredentialRepository } from '../ports/mfa-credential.repository';
import { OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { Transaction } from '../ports/transaction';
import { WebAuthnRelyingParty } from '../ports/webauthn-relying-party';
import { MfaAccount, MfaActor } from './mfa-account';

/** How long a registration challenge stays usable (the ceremony timeout announced to the browser). */
export const WEBAUTHN_REGISTRATION_TTL_SECONDS = 300;

@Injectable()
export class StartWebauthnRegistrationUseCase {
  constructor(
    private readonly account: MfaAccount,
    private readonly credentials: MfaCredentialRepository,
    private readonly relyingParty: WebAuthnRelyingParty,
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly secureTokens: SecureTokens,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly recentSignIn: RecentAuthentication,
  ) {}

  /**
   * PublicKeyCredentialCreationOptionsJSON for a new credential of the caller. The challenge is
   * kept server-side (hashed, bound to the user, 5 minutes, single use); a newer one voids it.
   * Credentials the user already has are excluded. Only from a recent sign-in (`RecentAuthentication`).
   * A passkey asks the authenticator for a discoverable credential; the challenge remembers it, so
   * only the answer to these options is stored as a passkey.
   * @throws DomainError VALIDATION_FAILED (name) | FORBIDDEN (a flagged session, or sign-in not recent) | INVALID_TOKEN
   */
  async execute(actor: MfaActor & { name?: string; passkey?: boolean }): Promise<Record<string, unknown>> {
    const passkey = actor.passkey === true;
    const name = actor.name === undefined ? null : credentialName(actor.name);
    await this.recentSignIn.require(actor.realm.id, actor.sessionId, 'Adding a security key or passkey');
    const user = await this.account.user(actor);
    const existing = await this.credentials.listWebauthn(user.id);
    const { challenge, options } = await this.relyingParty.registrationOptions({
      userId: user.id,
      userName: user.email,
      displayName: `${user.profile.firstName} ${user.profile.lastName}`.trim() || user.email,
      exclude: existing.map((c) => ({ id: c.id, transports: c.transports })),
      rp: actor.realm.policy.relyingParty,
      passkey,
    });
    const now = this.clock.now();
    await this.tx.run(async () => {
      await this.oneTimeTokens.voidUnused(user.id, 'webauthn_registration', now);
      await this.oneTimeTokens.insert({
        tokenHash: this.secureTokens.hash(challenge),
        realmId: user.realmId,
        userId: user.id,
        kind: 'webauthn_registration',
        email: null,
        payload: { ...(name ? { name } : {}), ...(passkey ? { passkey } : {}) },
        attempts: 0,
        createdAt: now,
        expiresAt: new Date(now.getTime() + WEBAUTHN_REGISTRATION_TTL_SECONDS * 1000),
        usedAt: null,
      });
    });
    return options;
  }
}
