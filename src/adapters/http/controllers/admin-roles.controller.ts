import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminActor } from '../../../application/admin/admin-actor';
import { CreateRoleUseCase } from '../../../application/roles/create-role.use-case';
import { DeleteRoleUseCase } from '../../../application/roles/delete-role.use-case';
import { ListRolesUseCase } from '../../../application/roles/list-roles.use-case';
import { Realm } from '../../../domain/realm/realm';
import { AdminAction, CurrentRealm, RealmHeader } from '../decorators';
import { CreateRoleDto } from '../dto/admin.dto';
import { EmptyBodyDto } from '../dto/empty-body.dto';
import { CurrentAdmin } from '../guards/admin.guard';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { RoleResponse, RolesResponse, SuccessResponse } from '../openapi/schemas';
import { present } from '../presenters';

/** The realm's roles: what administrators assign and access tokens carry. */
@ApiTags('admin')
@ApiBearerAuth()
@ApiHeader({ name: 'X-Realm-Id', required: true })
@RealmHeader('required')
@Controller('v1/admin/roles')
export class AdminRolesController {
  constructor(
    private readonly listRoles: ListRolesUseCase,
    private readonly createRole: CreateRoleUseCase,
    private readonly deleteRole: DeleteRoleUseCase,
  ) {}

  @ApiOperation({ summary: 'The realm’s roles: the built-ins, then the ones it defines' })
  @ApiOkResponse({ type: RolesResponse })
  @AdminAction('roles.list')
  @Get()
  async list(@CurrentRealm() realm: Realm) {
    return { roles: (await this.listRoles.execute({ realm })).map((role) => present.role(role)) };
  }

  @ApiOperation({ summary: 'Define a role, so that it can be assigned' })
  @ApiCreatedResponse({ type: RoleResponse })
  @ApiErrors('ROLE_EXISTS')
  @AdminAction('roles.create')
  @Post()
  @HttpCode(201)
  async create(@Body() body: CreateRoleDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const role = await this.createRole.execute({ actor, realmId: realm.id, name: body.name, description: body.description });
    return { role: present.role(role) };
  }

  @ApiOperation({ summary: 'Delete a defined role; every user who holds it loses it' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('ROLE_NOT_FOUND', 'INVALID_USER_STATE')
  @AdminAction('role.delete')
  @Delete(':name')
  @HttpCode(200)
  async remove(@Param('name') name: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    await this.deleteRole.execute({ actor, realmId: realm.id, name });
    return { success: true };
  }
}
