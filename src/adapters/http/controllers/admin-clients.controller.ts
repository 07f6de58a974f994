import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminActor } from '../../../application/admin/admin-actor';
import { CreateClientUseCase } from '../../../application/clients/create-client.use-case';
import { CreateInitialAccessTokenUseCase } from '../../../application/clients/create-initial-access-token.use-case';
import { DeleteClientUseCase } from '../../../application/clients/delete-client.use-case';
import { ListClientsUseCase } from '../../../application/clients/list-clients.use-case';
import { RotateClientSecretUseCase } from '../../../application/clients/rotate-client-secret.use-case';
import { UpdateClientUseCase } from '../../../application/clients/update-client.use-case';
import { Realm } from '../../../domain/realm/realm';
import { presentClients } from '../client-presenters';
import { AdminAction, CurrentRealm, RealmHeader } from '../decorators';
import { CreateClientDto, CreateInitialAccessTokenDto, UpdateClientDto } from '../dto/client.dto';
import { EmptyBodyDto } from '../dto/empty-body.dto';
import { CurrentAdmin } from '../guards/admin.guard';
import { ApiErrors } from '../openapi/api-errors.decorator';
import {
  ClientResponse,
  ClientsResponse,
  CreatedClientResponse,
  InitialAccessTokenResponse,
  RotatedClientSecretResponse,
} from '../openapi/client-schemas';
import { SuccessResponse } from '../openapi/schemas';

/** The applications that get tokens from the realm as an OpenID provider, and initial access tokens for dynamic registration. */
@ApiTags('admin')
@ApiBearerAuth()
@ApiHeader({ name: 'X-Realm-Id', required: true })
@RealmHeader('required')
@Controller('v1/admin')
export class AdminClientsController {
  constructor(
    private readonly createClient: CreateClientUseCase,
    private readonly listClients: ListClientsUseCase,
    private readonly updateClient: UpdateClientUseCase,
    private readonly deleteClient: DeleteClientUseCase,
    private readonly rotateSecret: RotateClientSecretUseCase,
    private readonly createInitialAccessToken: CreateInitialAccessTokenUseCase,
  ) {}

  @ApiOperation({ summary: 'The realm’s clients (never their secrets)' })
  @ApiOkResponse({ type: ClientsResponse })
  @AdminAction('clients.list')
  @Get('clients')
  async list(@CurrentRealm() realm: Realm) {
    const clients = await this.listClients.execute({ realmId: realm.id });
    return { clients: clients.map(presentClients.client) };
  }

  @ApiOperation({ summary: 'Register a client; a confidential one’s secret is in this answer only' })
  @ApiCreatedResponse({ type: CreatedClientResponse })
  @ApiErrors('VALIDATION_FAILED')
  @AdminAction('clients.create')
  @Post('clients')
  @HttpCode(201)
  async create(@Body() body: CreateClientDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const { client, clientSecret } = await this.createClient.execute({ actor, realmId: realm.id, ...body });
    return { client: presentClients.client(client), ...(clientSecret !== null ? { clientSecret } : {}) };
  }

  @ApiOperation({ summary: 'One client' })
  @ApiOkResponse({ type: ClientResponse })
  @ApiErrors('CLIENT_NOT_FOUND')
  @AdminAction('client.read')
  @Get('clients/:clientId')
  async get(@Param('clientId') clientId: string, @CurrentRealm() realm: Realm) {
    const [client] = await this.listClients.execute({ realmId: realm.id, clientId });
    return { client: presentClients.client(client) };
  }

  @ApiOperation({ summary: 'Change any field but clientId and type; the whole client is checked again' })
  @ApiOkResponse({ type: ClientResponse })
  @ApiErrors('CLIENT_NOT_FOUND', 'VALIDATION_FAILED')
  @AdminAction('client.update')
  @Patch('clients/:clientId')
  async update(
    @Param('clientId') clientId: string,
    @Body() body: UpdateClientDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    const client = await this.updateClient.execute({ actor, realmId: realm.id, clientId, ...body });
    return { client: presentClients.client(client) };
  }

  @ApiOperation({ summary: 'Delete a client; its grants and tokens end' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('CLIENT_NOT_FOUND')
  @AdminAction('client.delete')
  @Delete('clients/:clientId')
  @HttpCode(200)
  async remove(
    @Param('clientId') clientId: string,
    @Body() _body: EmptyBodyDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    await this.deleteClient.execute({ actor, realmId: realm.id, clientId });
    return { success: true };
  }

  @ApiOperation({ summary: 'A new secret for a confidential client, in this answer only; the old one stops working' })
  @ApiOkResponse({ type: RotatedClientSecretResponse })
  @ApiErrors('CLIENT_NOT_FOUND', 'VALIDATION_FAILED')
  @AdminAction('client.rotate-secret')
  @Post('clients/:clientId/rotate-secret')
  @HttpCode(200)
  async rotate(
    @Param('clientId') clientId: string,
    @Body() _body: EmptyBodyDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    const { client, clientSecret } = await this.rotateSecret.execute({ actor, realmId: realm.id, clientId });
    return { client: presentClients.client(client), clientSecret };
  }

  @ApiOperation({ summary: 'A token for one dynamic client registration (RFC 7591), in this answer only' })
  @ApiCreatedResponse({ type: InitialAccessTokenResponse })
  @ApiErrors('VALIDATION_FAILED')
  @AdminAction('initial-access-tokens.create')
  @Post('initial-access-tokens')
  @HttpCode(201)
  async initialAccessToken(@Body() body: CreateInitialAccessTokenDto, @CurrentRealm() realm: Realm) {
    const { token, expiresAt } = await this.createInitialAccessToken.execute({
      realmId: realm.id,
      expiresInSeconds: body.expiresInSeconds,
    });
    return { initialAccessToken: token, expiresAt: expiresAt.toISOString() };
  }
}
