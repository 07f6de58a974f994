import { Module } from '@nestjs/common';
import { ConfirmTotpUseCase } from '../application/mfa/confirm-totp.use-case';
import { DisableTotpUseCase } from '../application/mfa/disable-totp.use-case';
import { FinishWebauthnRegistrationUseCase } from '../application/mfa/finish-webauthn-registration.use-case';
import { GetMfaStatusUseCase } from '../application/mfa/get-mfa-status.use-case';
import { MfaAccount } from '../application/mfa/mfa-account';
import { RegenerateRecoveryCodesUseCase } from '../application/mfa/regenerate-recovery-codes.use-case';
import { RemoveWebauthnCredentialUseCase } from '../application/mfa/remove-webauthn-credential.use-case';
import { SetupTotpUseCase } from '../application/mfa/setup-totp.use-case';
import { StartWebauthnMfaUseCase } from '../application/mfa/start-webauthn-mfa.use-case';
import { StartWebauthnRegistrationUseCase } from '../application/mfa/start-webauthn-registration.use-case';
import { RecoveryCodeFactor, SecondFactors, TotpFactor, WebauthnFactor } from '../application/mfa/second-factors';
import { VerifyMfaUseCase } from '../application/mfa/verify-mfa.use-case';
import { QrCodeRenderer } from '../application/ports/qr-code-renderer';
import { TotpVerifier } from '../application/ports/totp-verifier';
import { WebAuthnRelyingParty } from '../application/ports/webauthn-relying-party';
import { MfaController } from '../adapters/http/controllers/mfa.controller';
import { QrcodeQrCodeRenderer } from '../adapters/mfa/qrcode-qr-code-renderer';
import { SimpleWebAuthnRelyingParty } from '../adapters/mfa/simple-webauthn-relying-party';
import { SpeakeasyTotpVerifier } from '../adapters/mfa/speakeasy-totp-verifier';
import { AuthModule } from './auth.module';

/** The second factor: the login step (TOTP, recovery code, WebAuthn) and managing one's own factors. */
@Module({
  imports: [AuthModule],
  controllers: [MfaController],
  providers: [
    { provide: TotpVerifier, useClass: SpeakeasyTotpVerifier },
    { provide: QrCodeRenderer, useClass: QrcodeQrCodeRenderer },
    { provide: WebAuthnRelyingParty, useClass: SimpleWebAuthnRelyingParty },
    MfaAccount,
    TotpFactor,
    RecoveryCodeFactor,
    WebauthnFactor,
    SecondFactors,
    VerifyMfaUseCase,
    StartWebauthnMfaUseCase,
    GetMfaStatusUseCase,
    SetupTotpUseCase,
    ConfirmTotpUseCase,
    DisableTotpUseCase,
    StartWebauthnRegistrationUseCase,
    FinishWebauthnRegistrationUseCase,
    RemoveWebauthnCredentialUseCase,
    RegenerateRecoveryCodesUseCase,
  ],
  exports: [WebAuthnRelyingParty, MfaAccount, VerifyMfaUseCase],
})
export class MfaModule {}
