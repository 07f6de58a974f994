import { Module } from '@nestjs/common';
import { ClientSecrets } from '../application/clients/client-secrets';
import { CreateClientUseCase } from '../application/clients/create-client.use-case';
import { CreateInitialAccessTokenUseCase } from '../application/clients/create-initial-access-token.use-case';
import { CreateResourceUseCase } from '../application/clients/create-resource.use-case';
import { DeleteClientUseCase } from '../application/clients/delete-client.use-case';
import { DeleteResourceUseCase } from '../application/clients/delete-resource.use-case';
import { InitialAccessTokens } from '../application/clients/initial-access-tokens';
import { ListClientsUseCase } from '../application/clients/list-clients.use-case';
import { ListResourcesUseCase } from '../application/clients/list-resources.use-case';
import { RotateClientSecretUseCase } from '../application/clients/rotate-client-secret.use-case';
import { UpdateClientUseCase } from '../application/clients/update-client.use-case';
import { UpdateResourceUseCase } from '../application/clients/update-resource.use-case';
import { ClientGrants } from '../application/ports/client-grants';
import { ClientRepository } from '../application/ports/client.repository';
import { InitialAccessTokenRepository } from '../application/ports/initial-access-token.repository';
import { ResourceRepository } from '../application/ports/resource.repository';
import { TypeOrmClientGrants } from '../adapters/persistence/typeorm-client-grants';
import { AdminClientsController } from '../adapters/http/controllers/admin-clients.controller';
import { AdminResourcesController } from '../adapters/http/controllers/admin-resources.controller';
import { TypeOrmClientRepository } from '../adapters/persistence/typeorm-client.repository';
import { TypeOrmInitialAccessTokenRepository } from '../adapters/persistence/typeorm-initial-access-token.repository';
import { TypeOrmResourceRepository } from '../adapters/persistence/typeorm-resource.repository';
import { WebhooksModule } from './webhooks.module';

const ports = [
  { provide: ClientRepository, useClass: TypeOrmClientRepository },
  { provide: ResourceRepository, useClass: TypeOrmResourceRepository },
  { provide: InitialAccessTokenRepository, useClass: TypeOrmInitialAccessTokenRepository },
  // Until the realm's OpenID provider binds what ends its grants of a deleted client.
  { provide: ClientGrants, useClass: TypeOrmClientGrants },
];

/**
 * Clients and API resources of each realm as an OpenID provider: the admin
 * routes, their repositories, client secrets and initial access tokens. Exports what the OpenID
 * provider reads: the repositories, `ClientSecrets.verify` and `InitialAccessTokens.consume`,
 * and `CreateClientUseCase` for dynamic registration. The back-channel logout and JWKS URIs
 * follow the webhooks' address rule (WebhookTargetPolicy).
 */
@Module({
  imports: [WebhooksModule],
  controllers: [AdminClientsController, AdminResourcesController],
  providers: [
    ...ports,
    ClientSecrets,
    InitialAccessTokens,
    ListClientsUseCase,
    CreateClientUseCase,
    UpdateClientUseCase,
    DeleteClientUseCase,
    RotateClientSecretUseCase,
    ListResourcesUseCase,
    CreateResourceUseCase,
    UpdateResourceUseCase,
    DeleteResourceUseCase,
    CreateInitialAccessTokenUseCase,
  ],
  exports: [...ports.map((p) => p.provide), ClientSecrets, InitialAccessTokens, CreateClientUseCase],
})
export class ClientsModule {}
