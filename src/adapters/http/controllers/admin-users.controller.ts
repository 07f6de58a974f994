import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiTags } from '@nestjs/swagger';
import { ActivateUserUseCase } from '../../../application/admin/activate-user.use-case';
import { AdminActor } from '../../../application/admin/admin-actor';
import { CreateUserUseCase } from '../../../application/admin/create-user.use-case';
import { DeleteUserUseCase } from '../../../application/admin/delete-user.use-case';
import { GetUserUseCase } from '../../../application/admin/get-user.use-case';
import { ListUsersUseCase } from '../../../application/admin/list-users.use-case';
import { ResetUserMfaUseCase } from '../../../application/admin/reset-user-mfa.use-case';
import { ResetUserPasswordUseCase } from '../../../application/admin/reset-user-password.use-case';
import { SetUserRolesUseCase } from '../../../application/admin/set-user-roles.use-case';
import { SuspendUserUseCase } from '../../../application/admin/suspend-user.use-case';
import { UnlockUserUseCase } from '../../../application/admin/unlock-user.use-case';
import { Clock } from '../../../application/ports/clock';
import { Realm } from '../../../domain/realm/realm';
import { User } from '../../../domain/user/user';
import { AdminRoute, CurrentRealm, RealmHeader } from '../decorators';
import { CreateUserDto, ListUsersQuery, ResetPasswordDto, SetRolesDto, SuspendUserDto } from '../dto/admin.dto';
import { EmptyBodyDto } from '../dto/empty-body.dto';
import { CurrentAdmin } from '../guards/admin.guard';
import { present } from '../presenters';

/** Users of a realm (contract §7). */
@ApiTags('admin')
@ApiBearerAuth()
@ApiHeader({ name: 'X-Realm-Id', required: true })
@AdminRoute()
@RealmHeader('required')
@Controller('v1/admin/users')
export class AdminUsersController {
  constructor(
    private readonly listUsers: ListUsersUseCase,
    private readonly createUser: CreateUserUseCase,
    private readonly getUser: GetUserUseCase,
    private readonly deleteUser: DeleteUserUseCase,
    private readonly suspendUser: SuspendUserUseCase,
    private readonly activateUser: ActivateUserUseCase,
    private readonly unlockUser: UnlockUserUseCase,
    private readonly resetPassword: ResetUserPasswordUseCase,
    private readonly resetMfa: ResetUserMfaUseCase,
    private readonly setRoles: SetUserRolesUseCase,
    private readonly clock: Clock,
  ) {}

  @Get()
  async list(@Query() query: ListUsersQuery, @CurrentRealm() realm: Realm) {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    const { users, total } = await this.listUsers.execute({
      realmId: realm.id,
      page,
      limit,
      search: query.search,
      status: query.status,
      emailVerified: query.emailVerified === undefined ? undefined : query.emailVerified === 'true',
      sort: query.sort,
    });
    const now = this.clock.now();
    return { users: users.map((user) => present.user(user, now)), pagination: present.pagination(total, page, limit) };
  }

  @Post()
  @HttpCode(201)
  async create(@Body() body: CreateUserDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    return this.user(await this.createUser.execute({ actor, realm, ...body }));
  }

  @Get(':id')
  async get(@Param('id') id: string, @CurrentRealm() realm: Realm) {
    return this.user(await this.getUser.execute({ realmId: realm.id, userId: id }));
  }

  @Delete(':id')
  @HttpCode(200)
  async remove(@Param('id') id: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    await this.deleteUser.execute({ actor, realmId: realm.id, userId: id });
    return { success: true };
  }

  @Post(':id/suspend')
  @HttpCode(200)
  async suspend(@Param('id') id: string, @Body() body: SuspendUserDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    return this.user(await this.suspendUser.execute({ actor, realmId: realm.id, userId: id, reason: body.reason }));
  }

  @Post(':id/activate')
  @HttpCode(200)
  async activate(@Param('id') id: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    return this.user(await this.activateUser.execute({ actor, realmId: realm.id, userId: id }));
  }

  @Post(':id/unlock')
  @HttpCode(200)
  async unlock(@Param('id') id: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    return this.user(await this.unlockUser.execute({ actor, realmId: realm.id, userId: id }));
  }

  @Post(':id/reset-password')
  @HttpCode(200)
  async resetUserPassword(
    @Param('id') id: string,
    @Body() body: ResetPasswordDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    const { method } = await this.resetPassword.execute({ actor, realm, userId: id, password: body.password });
    return { success: true, method };
  }

  @Post(':id/mfa/reset')
  @HttpCode(200)
  async resetUserMfa(
    @Param('id') id: string,
    @Body() _body: EmptyBodyDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    return this.user(await this.resetMfa.execute({ actor, realmId: realm.id, userId: id }));
  }

  @Put(':id/roles')
  @HttpCode(200)
  async roles(@Param('id') id: string, @Body() body: SetRolesDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    return this.user(await this.setRoles.execute({ actor, realmId: realm.id, userId: id, roles: body.roles }));
  }

  private user(user: User) {
    return { user: present.user(user, this.clock.now()) };
  }
}
