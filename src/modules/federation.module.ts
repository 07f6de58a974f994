import { Module } from '@nestjs/common';
import { ReturnUrls } from '../application/account/return-urls';
import { CompleteFederationUseCase } from '../application/federation/complete-federation.use-case';
import { CreateIdentityProviderUseCase } from '../application/federation/create-identity-provider.use-case';
import { DeleteIdentityProviderUseCase } from '../application/federation/delete-identity-provider.use-case';
import { ExchangeLoginCodeUseCase } from '../application/federation/exchange-login-code.use-case';
import { IdentityLinks } from '../application/federation/identity-links';
import { LinkIdentityUseCase } from '../application/federation/link-identity.use-case';
import { ListIdentityProvidersUseCase } from '../application/federation/list-identity-providers.use-case';
import { StartFederationUseCase } from '../application/federation/start-federation.use-case';
import { UpdateIdentityProviderUseCase } from '../application/federation/update-identity-provider.use-case';
import { IdentityProviderClient } from '../application/ports/identity-provider-client';
import { OpenIdClientIdentityProviderClient } from '../adapters/federation/openid-client-identity-provider-client';
import { AdminIdentityProvidersController } from '../adapters/http/controllers/admin-identity-providers.controller';
import { FederationController } from '../adapters/http/controllers/federation.controller';
import { AuthModule } from './auth.module';

/**
 * Sign-in with a realm's OpenID Connect providers: the providers over the admin API, the flow
 * (start, the provider's callback, the login-code exchange, the link-code redemption), linked identities, and the client
 * on openid-client behind its port.
 */
@Module({
  imports: [AuthModule],
  controllers: [FederationController, AdminIdentityProvidersController],
  providers: [
    { provide: IdentityProviderClient, useClass: OpenIdClientIdentityProviderClient },
    ReturnUrls,
    CreateIdentityProviderUseCase,
    ListIdentityProvidersUseCase,
    UpdateIdentityProviderUseCase,
    DeleteIdentityProviderUseCase,
    StartFederationUseCase,
    IdentityLinks,
    CompleteFederationUseCase,
    LinkIdentityUseCase,
    ExchangeLoginCodeUseCase,
  ],
  exports: [ListIdentityProvidersUseCase, StartFederationUseCase, ExchangeLoginCodeUseCase],
})
export class FederationModule {}
