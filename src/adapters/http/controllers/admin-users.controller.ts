import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ActivateUserUseCase } from '../../../application/admin/activate-user.use-case';
import { AdminActor } from '../../../application/admin/admin-actor';
import { CreateUserUseCase } from '../../../application/admin/create-user.use-case';
import { DeleteUserUseCase } from '../../../application/admin/delete-user.use-case';
import { GetUserUseCase } from '../../../application/admin/get-user.use-case';
import { ListUsersUseCase } from '../../../application/admin/list-users.use-case';
import { ResetUserMfaUseCase } from '../../../application/admin/reset-user-mfa.use-case';
import { ResetUserPasswordUseCase } from '../../../application/admin/reset-user-password.use-case';
import { SetUserAppMetadataUseCase } from '../../../application/admin/set-user-app-metadata.use-case';
import { SetUserRolesUseCase } from '../../../application/admin/set-user-roles.use-case';
import { SuspendUserUseCase } from '../../../application/admin/suspend-user.use-case';
import { UnlockUserUseCase } from '../../../application/admin/unlock-user.use-case';
import { UnlinkIdentityUseCase } from '../../../application/federation/unlink-identity.use-case';
import { ListUserIdentitiesUseCase } from '../../../application/federation/list-user-identities.use-case';
import { Clock } from '../../../application/ports/clock';
import { Realm } from '../../../domain/realm/realm';
import { User } from '../../../domain/user/user';
import { AdminAction, CurrentRealm, RealmHeader } from '../decorators';
import { CreateUserDto, ListUsersQuery, ResetPasswordDto, SetAppMetadataDto, SetRolesDto, SuspendUserDto } from '../dto/admin.dto';
import { EmptyBodyDto } from '../dto/empty-body.dto';
import { CurrentAdmin } from '../guards/admin.guard';
import { present } from '../presenters';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { PasswordResetResult, SuccessResponse, UserResponse, UsersPage } from '../openapi/schemas';

/** Users of a realm. */
@ApiTags('admin')
@ApiBearerAuth()
@ApiHeader({ name: 'X-Realm-Id', required: true })
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
    private readonly listIdentities: ListUserIdentitiesUseCase,
    private readonly setAppMetadata: SetUserAppMetadataUseCase,
    private readonly unlink: UnlinkIdentityUseCase,
    private readonly clock: Clock,
  ) {}

  @ApiOperation({ summary: 'List and search the realm’s users' })
  @ApiOkResponse({ type: UsersPage })
  @AdminAction('users.list')
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
    const identities = await this.listIdentities.forUsers(realm.id, users);
    const now = this.clock.now();
    return {
      users: users.map((user) => present.user(user, now, identities.get(user.id) ?? [])),
      pagination: present.pagination(total, page, limit),
    };
  }

  @ApiOperation({ summary: 'Create a user; without a password an invitation email is sent' })
  @ApiCreatedResponse({ type: UserResponse })
  @ApiErrors('EMAIL_ALREADY_REGISTERED')
  @AdminAction('users.create')
  @Post()
  @HttpCode(201)
  async create(@Body() body: CreateUserDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    return this.user(await this.createUser.execute({ actor, realm, ...body }));
  }

  @ApiOperation({ summary: 'One user' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors('USER_NOT_FOUND')
  @AdminAction('user.read')
  @Get(':id')
  async get(@Param('id') id: string, @CurrentRealm() realm: Realm) {
    return this.user(await this.getUser.execute({ realmId: realm.id, userId: id }));
  }

  @ApiOperation({ summary: 'Delete a user with their sessions, credentials and tokens' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('USER_NOT_FOUND')
  @AdminAction('user.delete')
  @Delete(':id')
  @HttpCode(200)
  async remove(@Param('id') id: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    await this.deleteUser.execute({ actor, realmId: realm.id, userId: id });
    return { success: true };
  }

  @ApiOperation({ summary: 'Suspend a user; revokes their sessions' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors('USER_NOT_FOUND', 'INVALID_USER_STATE')
  @AdminAction('user.suspend')
  @Post(':id/suspend')
  @HttpCode(200)
  async suspend(@Param('id') id: string, @Body() body: SuspendUserDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    return this.user(await this.suspendUser.execute({ actor, realmId: realm.id, userId: id, reason: body.reason }));
  }

  @ApiOperation({ summary: 'Reactivate a suspended user' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors('USER_NOT_FOUND', 'INVALID_USER_STATE')
  @AdminAction('user.activate')
  @Post(':id/activate')
  @HttpCode(200)
  async activate(@Param('id') id: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    return this.user(await this.activateUser.execute({ actor, realmId: realm.id, userId: id }));
  }

  @ApiOperation({ summary: 'Unlock a locked user' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors('USER_NOT_FOUND', 'INVALID_USER_STATE')
  @AdminAction('user.unlock')
  @Post(':id/unlock')
  @HttpCode(200)
  async unlock(@Param('id') id: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    return this.user(await this.unlockUser.execute({ actor, realmId: realm.id, userId: id }));
  }

  @ApiOperation({ summary: 'Set a password, or email a reset link; revokes the user’s sessions' })
  @ApiOkResponse({ type: PasswordResetResult })
  @ApiErrors('USER_NOT_FOUND')
  @AdminAction('user.reset-password')
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

  @ApiOperation({ summary: 'Remove every second factor of a user; revokes their sessions' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors('USER_NOT_FOUND')
  @AdminAction('user.reset-mfa')
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

  @ApiOperation({ summary: 'Replace a user’s realm roles: each built in or defined by the realm; tokens carry them from the next refresh' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors('USER_NOT_FOUND')
  @AdminAction('user.set-roles')
  @Put(':id/roles')
  @HttpCode(200)
  async roles(@Param('id') id: string, @Body() body: SetRolesDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    return this.user(await this.setRoles.execute({ actor, realmId: realm.id, userId: id, roles: body.roles }));
  }

  @ApiOperation({ summary: 'Replace a user’s app metadata; tokens carry it as app_metadata from the next refresh' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors('USER_NOT_FOUND')
  @AdminAction('user.set-app-metadata')
  @Put(':id/app-metadata')
  @HttpCode(200)
  async appMetadata(
    @Param('id') id: string,
    @Body() body: SetAppMetadataDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    return this.user(await this.setAppMetadata.execute({ actor, realmId: realm.id, userId: id, appMetadata: body.appMetadata }));
  }

  @ApiOperation({ summary: 'Unlink one of a user’s identity-provider accounts (even the last way to sign in)' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('USER_NOT_FOUND', 'NOT_FOUND')
  @AdminAction('user.identity.unlink')
  @Delete(':id/identities/:identityId')
  @HttpCode(200)
  async unlinkIdentity(
    @Param('id') id: string,
    @Param('identityId') identityId: string,
    @Body() _body: EmptyBodyDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    await this.unlink.execute({ realmId: realm.id, userId: id, identityId, ip: actor.ip, adminId: actor.id });
    return { success: true };
  }

  private async user(user: User) {
    const identities = await this.listIdentities.execute({ realmId: user.realmId, userIds: [user.id] });
    return { user: present.user(user.summary(), this.clock.now(), identities.get(user.id) ?? []) };
  }
}
