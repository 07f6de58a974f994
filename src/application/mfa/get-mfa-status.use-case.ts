import { Injectable } from '@nestjs/common';
import { MfaMethod } from '../../domain/user/user';
import { MfaCredentialRepository, WebauthnCredential } from '../ports/mfa-credential.repository';
import { MfaAccount, MfaActor } from './mfa-account';

export interface MfaStatus {
  enabled: boolean;
  methods: MfaMethod[];
  webauthnCredentials: WebauthnCredential[];
  recoveryCodesRemaining: number;
}

@Injectable()
export class GetMfaStatusUseCase {
  constructor(
    private readonly account: MfaAccount,
    private readonly credentials: MfaCredentialRepository,
  ) {}

  /** The caller's factors (the auth API GET /mfa); never a secret. @throws DomainError INVALID_TOKEN */
  async execute(actor: MfaActor): Promise<MfaStatus> {
    const user = await this.account.user(actor);
    const [webauthnCredentials, recoveryCodesRemaining] = await Promise.all([
      this.credentials.listWebauthn(user.id),
      this.credentials.countUnusedRecoveryCodes(user.id),
    ]);
    return { enabled: user.mfaEnabled, methods: user.mfaMethods, webauthnCredentials, recoveryCodesRemaining };
  }
}
