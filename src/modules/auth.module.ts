import { Module } from '@nestjs/common';
import { AuthenticateUseCase } from '../application/auth/authenticate.use-case';
import { DeviceObserver } from '../application/sign-in/device-observation';
import { GetMeUseCase } from '../application/auth/get-me.use-case';
import { UpdateProfileUseCase } from '../application/auth/update-profile.use-case';
import { FingerprintSessionGuardian } from '../application/sign-in/fingerprint-session-guardian';
import { LoginUseCase } from '../application/auth/login.use-case';
import { LogoutUseCase } from '../application/auth/logout.use-case';
import { MfaChallenges } from '../application/sign-in/mfa-challenges';
import { NewPassword } from '../application/account/new-password';
import { RecentAuthentication } from '../application/sign-in/recent-authentication';
import { RefreshTokenResolver } from '../application/sign-in/refresh-token-resolver';
import { RefreshUseCase } from '../application/auth/refresh.use-case';
import { RegisterUseCase } from '../application/auth/register.use-case';
import { SessionGuardian } from '../application/sign-in/session-guardian';
import { SessionIssuer } from '../application/sign-in/session-issuer';
import { OrganizationSignIn } from '../application/organizations/organization-sign-in';
import { SignInContinuation } from '../application/sign-in/sign-in-continuation';
import { AccountTakeover } from '../application/account/account-takeover';
import { ListUserIdentitiesUseCase } from '../application/federation/list-user-identities.use-case';
import { UnlinkIdentityUseCase } from '../application/federation/unlink-identity.use-case';
import { DeviceDetector } from '../application/ports/device-detector';
import { GeoIp } from '../application/ports/geo-ip';
import { UaParserDeviceDetector } from '../adapters/device/ua-parser-device-detector';
import { geoIpFor } from '../adapters/geoip/maxmind-geo-ip';
import { AuthController } from '../adapters/http/controllers/auth.controller';
import { JwksController } from '../adapters/http/controllers/jwks.controller';
import { AppConfig } from '../config/app-config';
import { HooksModule } from './hooks.module';

/**
 * Signing in: registration, login, refresh, logout, the caller's profile, the access-token check and
 * the device rules that guard a session (fingerprint, place). The second factor is MfaModule's.
 */
@Module({
  // A realm's own decisions and claims at sign-up and sign-in (SignInHooks).
  imports: [HooksModule],
  controllers: [AuthController, JwksController],
  providers: [
    { provide: DeviceDetector, useClass: UaParserDeviceDetector },
    { provide: GeoIp, inject: [AppConfig], useFactory: geoIpFor },
    { provide: SessionGuardian, useClass: FingerprintSessionGuardian },
    DeviceObserver,
    SessionIssuer,
    RecentAuthentication,
    MfaChallenges,
    SignInContinuation,
    AccountTakeover,
    NewPassword,
    ListUserIdentitiesUseCase,
    UnlinkIdentityUseCase,
    RegisterUseCase,
    GetMeUseCase,
    UpdateProfileUseCase,
    LoginUseCase,
    RefreshTokenResolver,
    RefreshUseCase,
    LogoutUseCase,
    AuthenticateUseCase,
    OrganizationSignIn,
  ],
  exports: [
    HooksModule,
    DeviceObserver,
    SessionIssuer,
    MfaChallenges,
    SignInContinuation,
    RecentAuthentication,
    AccountTakeover,
    NewPassword,
    ListUserIdentitiesUseCase,
    UnlinkIdentityUseCase,
    AuthenticateUseCase,
    RefreshTokenResolver,
    LoginUseCase,
    OrganizationSignIn,
  ],
})
export class AuthModule {}
