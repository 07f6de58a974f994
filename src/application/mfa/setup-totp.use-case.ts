import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { RecentAuthentication } from '../sign-in/recent-authentication';
import { Clock } from '../ports/clock';
import { MfaCredentialRepository } from '../ports/mfa-credential.repository';
import { QrCodeRenderer } from '../ports/qr-code-renderer';
import { SecretCipher } from '../ports/secret-cipher';
import { TotpVerifier } from '../ports/totp-verifier';
import { MfaAccount, MfaActor } from './mfa-account';

export interface TotpSetup {
  secret: string;
  otpauthUrl: string;
  qrCode: string;
}

const alreadyEnabled = () => new DomainError('INVALID_USER_STATE', 'TOTP is already enabled; remove it before setting up a new secret');

@Injectable()
export class SetupTotpUseCase {
  constructor(
    private readonly account: MfaAccount,
    private readonly credentials: MfaCredentialRepository,
    private readonly totp: TotpVerifier,
    private readonly cipher: SecretCipher,
    private readonly qrCodes: QrCodeRenderer,
    private readonly clock: Clock,
    private readonly recentSignIn: RecentAuthentication,
  ) {}

  /**
   * Starts TOTP enrolment: a new 160-bit secret, stored encrypted and pending until confirmed
   * with a code from it (a second setup replaces a pending secret). Shown once, here.
   * Only from a recent sign-in (`RecentAuthentication`).
   * @throws DomainError INVALID_USER_STATE when TOTP is already enabled | FORBIDDEN (a flagged session, or sign-in not recent) | INVALID_TOKEN
   */
  async execute(actor: MfaActor): Promise<TotpSetup> {
    await this.recentSignIn.require(actor.realm.id, actor.sessionId, 'Adding an authenticator app');
    const user = await this.account.user(actor);
    const existing = await this.credentials.findTotp(user.id);
    if (existing?.confirmedAt) throw alreadyEnabled();
    const secret = this.totp.generateSecret();
    const saved = await this.credentials.savePendingTotp({
      userId: user.id,
      secretEncrypted: await this.cipher.encrypt(secret, user.id),
      confirmedAt: null,
      lastUsedStep: 0,
      createdAt: this.clock.now(),
    });
    if (!saved) throw alreadyEnabled();
    const otpauthUrl = this.totp.keyUri({ secret, issuer: actor.realm.name, account: user.email });
    return { secret, otpauthUrl, qrCode: await this.qrCodes.pngDataUrl(otpauthUrl) };
  }
}
