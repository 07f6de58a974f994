import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { getOptionsToken, getStorageToken } from '@nestjs/throttler';
import { ActivateUserUseCase } from './application/admin/activate-user.use-case';
import { AuthorizeAdminUseCase } from './application/admin/authorize-admin.use-case';
import { BootstrapUseCase } from './application/admin/bootstrap.use-case';
import { CreateAdminUseCase } from './application/admin/create-admin.use-case';
import { CreateRealmUseCase } from './application/admin/create-realm.use-case';
import { CreateUserUseCase } from './application/admin/create-user.use-case';
import { DeleteUserUseCase } from './application/admin/delete-user.use-case';
import { GetUserUseCase } from './application/admin/get-user.use-case';
import { ListEventsUseCase } from './application/admin/list-events.use-case';
import { ListRealmsUseCase } from './application/admin/list-realms.use-case';
import { ListSessionsUseCase } from './application/admin/list-sessions.use-case';
import { ListUsersUseCase } from './application/admin/list-users.use-case';
import { ResetUserMfaUseCase } from './application/admin/reset-user-mfa.use-case';
import { ResetUserPasswordUseCase } from './application/admin/reset-user-password.use-case';
import { RevokeSessionUseCase } from './application/admin/revoke-session.use-case';
import { RevokeUserSessionsUseCase } from './application/admin/revoke-user-sessions.use-case';
import { RotateSigningKeysUseCase } from './application/admin/rotate-signing-keys.use-case';
import { SetUserRolesUseCase } from './application/admin/set-user-roles.use-case';
import { SuspendUserUseCase } from './application/admin/suspend-user.use-case';
import { UnlockUserUseCase } from './application/admin/unlock-user.use-case';
import { AccountEmails } from './application/auth/account-emails';
import { AuthenticateUseCase } from './application/auth/authenticate.use-case';
import { ChangePasswordUseCase } from './application/auth/change-password.use-case';
import { DeviceObserver } from './application/auth/device-observation';
import { EmailLinkTokens } from './application/auth/email-link-tokens';
import { ForgotPasswordUseCase } from './application/auth/forgot-password.use-case';
import { GetMeUseCase } from './application/auth/get-me.use-case';
import { ListOwnSessionsUseCase } from './application/auth/list-own-sessions.use-case';
import { RevokeOtherSessionsUseCase } from './application/auth/revoke-other-sessions.use-case';
import { RevokeOwnSessionUseCase } from './application/auth/revoke-own-session.use-case';
import { LoginUseCase } from './application/auth/login.use-case';
import { LogoutUseCase } from './application/auth/logout.use-case';
import { MfaChallenges } from './application/auth/mfa-challenges';
import { RecentAuthentication } from './application/auth/recent-authentication';
import { ConfirmTotpUseCase } from './application/mfa/confirm-totp.use-case';
import { DisableTotpUseCase } from './application/mfa/disable-totp.use-case';
import { FinishWebauthnRegistrationUseCase } from './application/mfa/finish-webauthn-registration.use-case';
import { GetMfaStatusUseCase } from './application/mfa/get-mfa-status.use-case';
import { MfaAccount } from './application/mfa/mfa-account';
import { RegenerateRecoveryCodesUseCase } from './application/mfa/regenerate-recovery-codes.use-case';
import { RemoveWebauthnCredentialUseCase } from './application/mfa/remove-webauthn-credential.use-case';
import { SetupTotpUseCase } from './application/mfa/setup-totp.use-case';
import { StartWebauthnMfaUseCase } from './application/mfa/start-webauthn-mfa.use-case';
import { StartWebauthnRegistrationUseCase } from './application/mfa/start-webauthn-registration.use-case';
import { VerifyMfaUseCase } from './application/mfa/verify-mfa.use-case';
import { MfaCredentialRepository } from './application/ports/mfa-credential.repository';
import { QrCodeRenderer } from './application/ports/qr-code-renderer';
import { SecretCipher } from './application/ports/secret-cipher';
import { TotpVerifier } from './application/ports/totp-verifier';
import { WebAuthnRelyingParty } from './application/ports/webauthn-relying-party';
import { AesGcmSecretCipher } from './adapters/crypto/aes-gcm-secret-cipher';
import { MfaController } from './adapters/http/controllers/mfa.controller';
import { QrcodeQrCodeRenderer } from './adapters/mfa/qrcode-qr-code-renderer';
import { SimpleWebAuthnRelyingParty } from './adapters/mfa/simple-webauthn-relying-party';
import { SpeakeasyTotpVerifier } from './adapters/mfa/speakeasy-totp-verifier';
import { TypeOrmMfaCredentialRepository } from './adapters/persistence/typeorm-mfa-credential.repository';
import { RefreshUseCase } from './application/auth/refresh.use-case';
import { RegisterUseCase } from './application/auth/register.use-case';
import { ResendVerificationUseCase } from './application/auth/resend-verification.use-case';
import { ResetPasswordUseCase } from './application/auth/reset-password.use-case';
import { VerifyEmailUseCase } from './application/auth/verify-email.use-case';
import { FingerprintSessionGuardian } from './application/auth/fingerprint-session-guardian';
import { SessionGuardian } from './application/auth/session-guardian';
import { SessionIssuer } from './application/auth/session-issuer';
import { AccessTokens } from './application/ports/access-tokens';
import { AuditLog } from './application/ports/audit-log';
import { Clock } from './application/ports/clock';
import { DeviceDetector } from './application/ports/device-detector';
import { GeoIp } from './application/ports/geo-ip';
import { Mailer } from './application/ports/mailer';
import { MailTransport } from './application/ports/mail-transport';
import { OneTimeTokenRepository } from './application/ports/one-time-token.repository';
import { PasswordBlocklist } from './application/ports/password-blocklist';
import { PasswordHasher } from './application/ports/password-hasher';
import { READINESS_PROBES } from './application/ports/readiness-probe';
import { RealmRepository } from './application/ports/realm.repository';
import { RefreshTokenRepository } from './application/ports/refresh-token.repository';
import { SecureTokens } from './application/ports/secure-tokens';
import { SessionRepository } from './application/ports/session.repository';
import { Transaction } from './application/ports/transaction';
import { ExpiredDataPurger } from './application/ports/expired-data-purger';
import { JobLock } from './application/ports/job-lock';
import { HousekeepingUseCase } from './application/housekeeping/housekeeping.use-case';
import { UserRepository } from './application/ports/user.repository';
import { BcryptPasswordHasher } from './adapters/crypto/bcrypt-password-hasher';
import { JwtAccessTokens } from './adapters/crypto/jwt-access-tokens';
import { NodeSecureTokens } from './adapters/crypto/node-secure-tokens';
import { SystemClock } from './adapters/crypto/system-clock';
import { ZxcvbnPasswordBlocklist } from './adapters/crypto/zxcvbn-password-blocklist';
import { UaParserDeviceDetector } from './adapters/device/ua-parser-device-detector';
import { geoIpFor } from './adapters/geoip/maxmind-geo-ip';
import { AccountController } from './adapters/http/controllers/account.controller';
import { DeferredWork } from './adapters/http/deferred-work';
import { AdminEventsController } from './adapters/http/controllers/admin-events.controller';
import { AdminRealmsController } from './adapters/http/controllers/admin-realms.controller';
import { AdminSessionsController } from './adapters/http/controllers/admin-sessions.controller';
import { AdminUsersController } from './adapters/http/controllers/admin-users.controller';
import { AuthController } from './adapters/http/controllers/auth.controller';
import { HealthController } from './adapters/http/controllers/health.controller';
import { MetricsController } from './adapters/http/controllers/metrics.controller';
import { JwksController } from './adapters/http/controllers/jwks.controller';
import { SessionsController } from './adapters/http/controllers/sessions.controller';
import { AllExceptionsFilter } from './adapters/http/errors/all-exceptions.filter';
import { LoggingModule } from './adapters/http/logging/logging.module';
import { AccessTokenGuard } from './adapters/http/guards/access-token.guard';
import { AdminGuard } from './adapters/http/guards/admin.guard';
import { RateLimitGuard, throttlerOptions } from './adapters/http/guards/rate-limit.guard';
import { RealmGuard } from './adapters/http/guards/realm.guard';
import { BootstrapRunner } from './adapters/lifecycle/bootstrap-runner';
import { HousekeepingScheduler } from './adapters/lifecycle/housekeeping-scheduler';
import { AdvisoryJobLock } from './adapters/persistence/advisory-job-lock';
import { TypeOrmExpiredDataPurger } from './adapters/persistence/typeorm-expired-data-purger';
import { OutboxMailer } from './adapters/mail/outbox-mailer';
import { LogMailTransport } from './adapters/mail/log-mail-transport';
import { OutboxDispatcher } from './adapters/mail/outbox-dispatcher';
import { OutboxReadinessProbe } from './adapters/mail/outbox-readiness-probe';
import { SmtpMailTransport } from './adapters/mail/smtp-mail-transport';
import { PersistenceModule } from './adapters/persistence/persistence.module';
import { TypeOrmAuditLog } from './adapters/persistence/typeorm-audit-log';
import { MeteredAuditLog } from './adapters/metrics/metered-audit-log';
import { LoggedAuditLog } from './adapters/audit/logged-audit-log';
import { PrometheusMetrics } from './adapters/metrics/prometheus-metrics';
import { TypeOrmOneTimeTokenRepository } from './adapters/persistence/typeorm-one-time-token.repository';
import { TypeOrmReadinessProbe } from './adapters/persistence/typeorm-readiness-probe';
import { TypeOrmRealmRepository } from './adapters/persistence/typeorm-realm.repository';
import { TypeOrmRefreshTokenRepository } from './adapters/persistence/typeorm-refresh-token.repository';
import { TypeOrmServerSecrets } from './adapters/persistence/typeorm-server-secrets';
import { TypeOrmSessionRepository } from './adapters/persistence/typeorm-session.repository';
import { TypeOrmSigningKeyStore } from './adapters/persistence/typeorm-signing-key-store';
import { TypeOrmTransaction } from './adapters/persistence/typeorm-transaction';
import { TypeOrmUserRepository } from './adapters/persistence/typeorm-user.repository';
import { RateLimitStorage } from './adapters/rate-limit/rate-limit-storage';
import { RateLimitStorageProbe } from './adapters/rate-limit/rate-limit-storage.probe';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { TokenTransportModule } from './modules/token-transport.module';

/** The composition root: every port is bound to its adapter here. */
@Module({
  imports: [ConfigModule, LoggingModule, PersistenceModule, JwtModule.register({}), TokenTransportModule],
  controllers: [
    AuthController,
    MfaController,
    AccountController,
    SessionsController,
    JwksController,
    HealthController,
    MetricsController,
    AdminUsersController,
    AdminSessionsController,
    AdminEventsController,
    AdminRealmsController,
  ],
  providers: [
    // Ports → adapters
    { provide: Clock, useClass: SystemClock },
    { provide: Transaction, useExisting: TypeOrmTransaction },
    { provide: JobLock, useClass: AdvisoryJobLock },
    { provide: ExpiredDataPurger, useClass: TypeOrmExpiredDataPurger },
    { provide: RealmRepository, useClass: TypeOrmRealmRepository },
    { provide: UserRepository, useClass: TypeOrmUserRepository },
    { provide: SessionRepository, useClass: TypeOrmSessionRepository },
    { provide: RefreshTokenRepository, useClass: TypeOrmRefreshTokenRepository },
    { provide: OneTimeTokenRepository, useClass: TypeOrmOneTimeTokenRepository },
    { provide: MfaCredentialRepository, useClass: TypeOrmMfaCredentialRepository },
    { provide: TotpVerifier, useClass: SpeakeasyTotpVerifier },
    { provide: QrCodeRenderer, useClass: QrcodeQrCodeRenderer },
    { provide: SecretCipher, useClass: AesGcmSecretCipher },
    { provide: WebAuthnRelyingParty, useClass: SimpleWebAuthnRelyingParty },
    // Audit events also move the security counters of /metrics and are written as log lines.
    {
      provide: AuditLog,
      inject: [TypeOrmAuditLog, PrometheusMetrics, Transaction],
      useFactory: (log: TypeOrmAuditLog, metrics: PrometheusMetrics, tx: Transaction) =>
        new LoggedAuditLog(new MeteredAuditLog(log, metrics, tx), tx),
    },
    TypeOrmAuditLog,
    PrometheusMetrics,
    { provide: Mailer, useClass: OutboxMailer },
    {
      provide: MailTransport,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => (config.smtpUrl ? new SmtpMailTransport(config) : new LogMailTransport()),
    },
    { provide: PasswordHasher, useClass: BcryptPasswordHasher },
    { provide: PasswordBlocklist, useClass: ZxcvbnPasswordBlocklist },
    { provide: SecureTokens, useClass: NodeSecureTokens },
    { provide: AccessTokens, useExisting: JwtAccessTokens },
    { provide: DeviceDetector, useClass: UaParserDeviceDetector },
    { provide: GeoIp, inject: [AppConfig], useFactory: geoIpFor },
    {
      provide: READINESS_PROBES,
      inject: [TypeOrmReadinessProbe, OutboxReadinessProbe, RateLimitStorageProbe],
      useFactory: (...probes: unknown[]) => probes,
    },
    JwtAccessTokens,
    TypeOrmSigningKeyStore,
    TypeOrmServerSecrets,
    TypeOrmReadinessProbe,
    OutboxDispatcher,
    OutboxReadinessProbe,
    DeferredWork,
    // Rate limits: @nestjs/throttler's guard, options and storage, bound here.
    RateLimitStorage,
    RateLimitStorageProbe,
    { provide: getStorageToken(), useExisting: RateLimitStorage },
    { provide: getOptionsToken(), inject: [AppConfig], useFactory: throttlerOptions },

    // Application services and use cases
    DeviceObserver,
    SessionIssuer,
    { provide: SessionGuardian, useClass: FingerprintSessionGuardian },
    MfaChallenges,
    MfaAccount,
    RecentAuthentication,
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
    AccountEmails,
    EmailLinkTokens,
    VerifyEmailUseCase,
    ResendVerificationUseCase,
    ForgotPasswordUseCase,
    ResetPasswordUseCase,
    ChangePasswordUseCase,
    RegisterUseCase,
    LoginUseCase,
    RefreshUseCase,
    LogoutUseCase,
    GetMeUseCase,
    ListOwnSessionsUseCase,
    RevokeOwnSessionUseCase,
    RevokeOtherSessionsUseCase,
    AuthenticateUseCase,
    BootstrapUseCase,
    BootstrapRunner,
    HousekeepingUseCase,
    HousekeepingScheduler,
    AuthorizeAdminUseCase,
    ListUsersUseCase,
    CreateUserUseCase,
    GetUserUseCase,
    DeleteUserUseCase,
    SuspendUserUseCase,
    ActivateUserUseCase,
    UnlockUserUseCase,
    ResetUserPasswordUseCase,
    ResetUserMfaUseCase,
    SetUserRolesUseCase,
    ListSessionsUseCase,
    RevokeSessionUseCase,
    RevokeUserSessionsUseCase,
    ListEventsUseCase,
    ListRealmsUseCase,
    CreateRealmUseCase,
    CreateAdminUseCase,
    RotateSigningKeysUseCase,

    // HTTP: guards run in this order — realm, then access token, then rate limit, then admin (@AdminRoute only).
    { provide: APP_GUARD, useClass: RealmGuard },
    { provide: APP_GUARD, useClass: AccessTokenGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
    { provide: APP_GUARD, useClass: AdminGuard },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
})
export class AppModule {}
