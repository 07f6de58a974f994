import { Module } from '@nestjs/common';
import { ConfigModule } from './config/config.module';
import { AccountModule } from './modules/account.module';
import { AdminModule } from './modules/admin.module';
import { AuthModule } from './modules/auth.module';
import { ClientsModule } from './modules/clients.module';
import { OrganizationsModule } from './modules/organizations.module';
import { ConsoleModule } from './modules/console.module';
import { CryptoModule } from './modules/crypto.module';
import { HousekeepingModule } from './modules/housekeeping.module';
import { HttpPipelineModule } from './modules/http-pipeline.module';
import { MailModule } from './modules/mail.module';
import { MfaModule } from './modules/mfa.module';
import { ObservabilityModule } from './modules/observability.module';
import { PasswordlessModule } from './modules/passwordless.module';
import { PersistenceModule } from './modules/persistence.module';
import { RateLimitModule } from './modules/rate-limit.module';
import { RealmSettingsModule } from './modules/realm-settings.module';
import { RolesModule } from './modules/roles.module';
import { TokenTransportModule } from './modules/token-transport.module';
import { FederationModule } from './modules/federation.module';
import { OutboundModule } from './modules/outbound.module';
import { OpenIdProviderModule } from './modules/openid-provider.module';
import { WebhooksModule } from './modules/webhooks.module';

/** The application: one module per capability (src/modules); each binds the ports it owns. */
@Module({
  imports: [
    // Shared by every feature, bound once.
    ConfigModule,
    PersistenceModule,
    RealmSettingsModule,
    CryptoModule,
    ObservabilityModule,
    MailModule,
    RateLimitModule,
    TokenTransportModule,
    OutboundModule,
    // Features.
    AuthModule,
    MfaModule,
    PasswordlessModule,
    FederationModule,
    AccountModule,
    AdminModule,
    RolesModule,
    HousekeepingModule,
    HttpPipelineModule,
    WebhooksModule,
    ClientsModule,
    OrganizationsModule,
    OpenIdProviderModule,
    ConsoleModule,
  ],
})
export class AppModule {}
