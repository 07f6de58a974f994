import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { RealmSettings } from '../../domain/realm/realm-settings';
import { PASSWORD_MIN_LENGTH } from '../../domain/user/password-policy';

/** The deployment's settings (the environment), which every realm follows where it sets nothing itself. */
export function realmDefaultsFrom(config: AppConfig): RealmSettings {
  return {
    publicUrl: config.publicUrl,
    webauthn: { rpId: config.webauthnRpId, rpName: config.webauthnRpName, origins: [...config.webauthnOrigins] },
    registration: 'open',
    requireVerifiedEmail: false,
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    sessionIdleTimeoutSeconds: config.sessionIdleTimeoutSeconds,
    sessionMaxLifetimeSeconds: config.sessionMaxLifetimeSeconds,
    lockout: { maxFailures: config.lockoutMaxFailures, durationSeconds: config.lockoutDurationSeconds },
    passwordMinLength: PASSWORD_MIN_LENGTH,
    fingerprintMatchThreshold: config.fingerprintMatchThreshold,
    allowedReturnUrls: [],
  };
}

/** The deployment defaults as an injectable value, for whoever creates or restores realms. */
@Injectable()
export class RealmDefaults {
  readonly settings: RealmSettings;

  constructor(config: AppConfig) {
    this.settings = realmDefaultsFrom(config);
  }
}
