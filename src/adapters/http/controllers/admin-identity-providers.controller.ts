import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminActor } from '../../../application/admin/admin-actor';
import { CreateIdentityProviderUseCase } from '../../../application/federation/create-identity-provider.use-case';
import { DeleteIdentityProviderUseCase } from '../../../application/federation/delete-identity-provider.use-case';
import { ListIdentityProvidersUseCase } from '../../../application/federation/list-identity-providers.use-case';
import { UpdateIdentityProviderUseCase } from '../../../application/federation/update-identity-provider.use-case';
import { AppConfig } from '../../../config/app-config';
import { Realm } from '../../../domain/realm/realm';
import { AdminAction, CurrentRealm, RealmHeader } from '../decorators';
import { EmptyBodyDto } from '../dto/empty-body.dto';
import { CreateIdentityProviderDto, UpdateIdentityProviderDto } from '../dto/federation.dto';
import { presentFederation } from '../federation-presenters';
import { CurrentAdmin } from '../guards/admin.guard';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { IdentityProviderResponse, IdentityProvidersResponse } from '../openapi/federation-schemas';
import { SuccessResponse } from '../openapi/schemas';

/** The realm's OpenID Connect providers. */
@ApiTags('admin')
@ApiBearerAuth()
@ApiHeader({ name: 'X-Realm-Id', required: true })
@RealmHeader('required')
@Controller('v1/admin/identity-providers')
export class AdminIdentityProvidersController {
  constructor(
    private readonly createProvider: CreateIdentityProviderUseCase,
    private readonly listProviders: ListIdentityProvidersUseCase,
    private readonly updateProvider: UpdateIdentityProviderUseCase,
    private readonly deleteProvider: DeleteIdentityProviderUseCase,
    private readonly config: AppConfig,
  ) {}

  @ApiOperation({ summary: 'Register a provider; its discovery document is read now. Register the answer’s redirectUri at the provider' })
  @ApiCreatedResponse({ type: IdentityProviderResponse })
  @ApiErrors('VALIDATION_FAILED', 'IDENTITY_PROVIDER_EXISTS')
  @AdminAction('identity-providers.create')
  @Post()
  @HttpCode(201)
  async create(@Body() body: CreateIdentityProviderDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const provider = await this.createProvider.execute({ actor, realmId: realm.id, ...body });
    return { identityProvider: presentFederation.provider(provider, this.config.apiUrl) };
  }

  @ApiOperation({ summary: 'The realm’s providers (never their secrets)' })
  @ApiOkResponse({ type: IdentityProvidersResponse })
  @AdminAction('identity-providers.list')
  @Get()
  async list(@CurrentRealm() realm: Realm) {
    const providers = await this.listProviders.execute({ realmId: realm.id });
    return { identityProviders: providers.map((p) => presentFederation.provider(p, this.config.apiUrl)) };
  }

  @ApiOperation({ summary: 'One provider' })
  @ApiOkResponse({ type: IdentityProviderResponse })
  @ApiErrors('IDENTITY_PROVIDER_NOT_FOUND')
  @AdminAction('identity-provider.read')
  @Get(':alias')
  async get(@Param('alias') alias: string, @CurrentRealm() realm: Realm) {
    const [provider] = await this.listProviders.execute({ realmId: realm.id, alias });
    return { identityProvider: presentFederation.provider(provider, this.config.apiUrl) };
  }

  @ApiOperation({ summary: 'Change any field but the alias; a new issuer’s discovery document is read' })
  @ApiOkResponse({ type: IdentityProviderResponse })
  @ApiErrors('IDENTITY_PROVIDER_NOT_FOUND', 'VALIDATION_FAILED')
  @AdminAction('identity-provider.update')
  @Patch(':alias')
  async update(
    @Param('alias') alias: string,
    @Body() body: UpdateIdentityProviderDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    const provider = await this.updateProvider.execute({ actor, realmId: realm.id, alias, ...body });
    return { identityProvider: presentFederation.provider(provider, this.config.apiUrl) };
  }

  @ApiOperation({ summary: 'Delete a provider; its links go with it (the users keep their accounts)' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('IDENTITY_PROVIDER_NOT_FOUND')
  @AdminAction('identity-provider.delete')
  @Delete(':alias')
  @HttpCode(200)
  async remove(
    @Param('alias') alias: string,
    @Body() _body: EmptyBodyDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    await this.deleteProvider.execute({ actor, realmId: realm.id, alias });
    return { success: true };
  }
}
