import { Module } from '@nestjs/common';
import { ListAppsUseCase } from '../application/apps/list-apps.use-case';
import { RevokeAppUseCase } from '../application/apps/revoke-app.use-case';
import { SignOutFromAppUseCase } from '../application/apps/sign-out-from-app.use-case';
import { AppsController } from '../adapters/http/controllers/apps.controller';
import { IdTokenKeys } from '../application/ports/id-token-keys';
import { OpClients } from '../application/ports/op-clients';
import { OpGrants } from '../application/ports/op-grants';
import { OpenIdProviderMount } from '../adapters/http/openid-provider/op-mount';
import { OpRegistrationEndpoint } from '../adapters/http/openid-provider/op-registration';
import { OpTokenLimits } from '../adapters/http/openid-provider/op-token-limits';
import { RegisterClientUseCase } from '../application/clients/register-client.use-case';
import { BackchannelLogoutDispatcher } from '../adapters/openid-provider/backchannel-logout-dispatcher';
import { RepositoryOpClients } from '../adapters/openid-provider/repository-op-clients';
import { OpSigningKeys } from '../adapters/openid-provider/op-signing-keys';
import { RealmProviders } from '../adapters/openid-provider/realm-providers';
import { TypeOrmOpArtifacts } from '../adapters/persistence/typeorm-op-artifacts';
import { TypeOrmIdTokenKeyStore } from '../adapters/persistence/typeorm-signing-key-store';
import { AuthModule } from './auth.module';
import { ClientsModule } from './clients.module';
import { DeferredWorkModule } from './deferred-work.module';
import { FederationModule } from './federation.module';
import { MfaModule } from './mfa.module';
import { PasswordlessModule } from './passwordless.module';
import { RateLimitModule } from './rate-limit.module';
import { RealmSettingsModule } from './realm-settings.module';
import { WebhooksModule } from './webhooks.module';

/**
 * Every realm an OpenID provider: the providers (one per realm, made on first
 * use), their storage and keys, and the pages they send browsers to. configureApp mounts
 * OpenIdProviderMount in front of Nest's routes. Its clients are the realm's, as administrators
 * register them (ClientsModule).
 */
@Module({
  imports: [
    AuthModule,
    MfaModule,
    RealmSettingsModule,
    RateLimitModule,
    ClientsModule,
    WebhooksModule,
    PasswordlessModule,
    DeferredWorkModule,
    FederationModule,
  ],
  controllers: [AppsController],
  providers: [
    ListAppsUseCase,
    RevokeAppUseCase,
    SignOutFromAppUseCase,
    TypeOrmOpArtifacts,
    { provide: OpGrants, useExisting: TypeOrmOpArtifacts },
    TypeOrmIdTokenKeyStore,
    OpSigningKeys,
    { provide: IdTokenKeys, useExisting: OpSigningKeys },
    { provide: OpClients, useClass: RepositoryOpClients },
    RealmProviders,
    OpenIdProviderMount,
    RegisterClientUseCase,
    OpRegistrationEndpoint,
    OpTokenLimits,
    BackchannelLogoutDispatcher,
  ],
  exports: [OpGrants, OpClients, IdTokenKeys, RealmProviders, OpenIdProviderMount, BackchannelLogoutDispatcher],
})
export class OpenIdProviderModule {}
