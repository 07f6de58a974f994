import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminActor } from '../../../application/admin/admin-actor';
import { CreateResourceUseCase } from '../../../application/clients/create-resource.use-case';
import { DeleteResourceUseCase } from '../../../application/clients/delete-resource.use-case';
import { ListResourcesUseCase } from '../../../application/clients/list-resources.use-case';
import { UpdateResourceUseCase } from '../../../application/clients/update-resource.use-case';
import { Realm } from '../../../domain/realm/realm';
import { presentClients } from '../client-presenters';
import { AdminAction, CurrentRealm, RealmHeader } from '../decorators';
import { CreateResourceDto, UpdateResourceDto } from '../dto/client.dto';
import { EmptyBodyDto } from '../dto/empty-body.dto';
import { CurrentAdmin } from '../guards/admin.guard';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { ResourceResponse, ResourcesResponse } from '../openapi/client-schemas';
import { SuccessResponse } from '../openapi/schemas';

/** The APIs the realm's access tokens are for (RFC 8707), with their scopes. */
@ApiTags('admin')
@ApiBearerAuth()
@ApiHeader({ name: 'X-Realm-Id', required: true })
@RealmHeader('required')
@Controller('v1/admin/resources')
export class AdminResourcesController {
  constructor(
    private readonly createResource: CreateResourceUseCase,
    private readonly listResources: ListResourcesUseCase,
    private readonly updateResource: UpdateResourceUseCase,
    private readonly deleteResource: DeleteResourceUseCase,
  ) {}

  @ApiOperation({ summary: 'The realm’s resources' })
  @ApiOkResponse({ type: ResourcesResponse })
  @AdminAction('resources.list')
  @Get()
  async list(@CurrentRealm() realm: Realm) {
    const resources = await this.listResources.execute({ realmId: realm.id });
    return { resources: resources.map(presentClients.resource) };
  }

  @ApiOperation({ summary: 'Register an API; its identifier is the aud of its access tokens' })
  @ApiCreatedResponse({ type: ResourceResponse })
  @ApiErrors('VALIDATION_FAILED', 'RESOURCE_EXISTS')
  @AdminAction('resources.create')
  @Post()
  @HttpCode(201)
  async create(@Body() body: CreateResourceDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const resource = await this.createResource.execute({ actor, realmId: realm.id, ...body });
    return { resource: presentClients.resource(resource) };
  }

  @ApiOperation({ summary: 'Change the name, the scopes or the token lifetime; a scope taken away leaves every client' })
  @ApiOkResponse({ type: ResourceResponse })
  @ApiErrors('RESOURCE_NOT_FOUND', 'VALIDATION_FAILED')
  @AdminAction('resource.update')
  @Patch(':id')
  async update(@Param('id') id: string, @Body() body: UpdateResourceDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const resource = await this.updateResource.execute({ actor, realmId: realm.id, id, ...body });
    return { resource: presentClients.resource(resource) };
  }

  @ApiOperation({ summary: 'Delete a resource; it and its scopes leave every client' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('RESOURCE_NOT_FOUND')
  @AdminAction('resource.delete')
  @Delete(':id')
  @HttpCode(200)
  async remove(@Param('id') id: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    await this.deleteResource.execute({ actor, realmId: realm.id, id });
    return { success: true };
  }
}
