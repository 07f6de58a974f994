import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminActor } from '../../../application/admin/admin-actor';
import { CreateRealmUseCase } from '../../../application/admin/create-realm.use-case';
import { ListRealmsUseCase } from '../../../application/admin/list-realms.use-case';
import { AdminAction, RealmHeader } from '../decorators';
import { CreateRealmDto } from '../dto/admin.dto';
import { CurrentAdmin } from '../guards/admin.guard';
import { present } from '../presenters';
import { RealmResponse, RealmsResponse } from '../openapi/schemas';

/** Realms: super-admin of master only. */
@ApiTags('admin')
@ApiBearerAuth()
@ApiHeader({ name: 'X-Realm-Id', required: true })
@RealmHeader('required')
@Controller('v1/admin/realms')
export class AdminRealmsController {
  constructor(
    private readonly listRealms: ListRealmsUseCase,
    private readonly createRealm: CreateRealmUseCase,
  ) {}

  @ApiOperation({ summary: 'Every realm (super-admin)' })
  @ApiOkResponse({ type: RealmsResponse })
  @AdminAction('realms.list')
  @Get()
  async list() {
    return { realms: (await this.listRealms.execute()).map(present.realm) };
  }

  @ApiOperation({ summary: 'Create a realm (super-admin)' })
  @ApiCreatedResponse({ type: RealmResponse })
  @AdminAction('realms.create')
  @Post()
  @HttpCode(201)
  async create(@Body() body: CreateRealmDto, @CurrentAdmin() actor: AdminActor) {
    const realm = await this.createRealm.execute({ id: body.id, name: body.name, actorId: actor.id, ip: actor.ip });
    return { realm: present.realm(realm) };
  }
}
