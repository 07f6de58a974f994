import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { AdminActor } from '../../../application/admin/admin-actor';
import { DeleteHookUseCase } from '../../../application/hooks/delete-hook.use-case';
import { ListHooksUseCase } from '../../../application/hooks/list-hooks.use-case';
import { PutHookUseCase } from '../../../application/hooks/put-hook.use-case';
import { RotateHookSecretUseCase } from '../../../application/hooks/rotate-hook-secret.use-case';
import { HOOK_NAMES } from '../../../domain/hook/hook';
import { Realm } from '../../../domain/realm/realm';
import { AdminAction, CurrentRealm, RealmHeader } from '../decorators';
import { EmptyBodyDto } from '../dto/empty-body.dto';
import { PutHookDto } from '../dto/hook.dto';
import { CurrentAdmin } from '../guards/admin.guard';
import { presentHook } from '../hook-presenters';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { HooksResponse, HookWithSecretResponse, PutHookResponse } from '../openapi/hook-schemas';
import { SuccessResponse } from '../openapi/schemas';

const NAME = { name: 'name', enum: HOOK_NAMES };

/** Hooks: the realm's backend decides at sign-up and sign-in, and adds claims to access tokens. */
@ApiTags('admin')
@ApiBearerAuth()
@ApiHeader({ name: 'X-Realm-Id', required: true })
@RealmHeader('required')
@Controller('v1/admin/hooks')
export class AdminHooksController {
  constructor(
    private readonly listHooks: ListHooksUseCase,
    private readonly putHook: PutHookUseCase,
    private readonly deleteHook: DeleteHookUseCase,
    private readonly rotateSecret: RotateHookSecretUseCase,
  ) {}

  @ApiOperation({ summary: 'The realm’s hooks (without secrets)' })
  @ApiOkResponse({ type: HooksResponse })
  @AdminAction('hooks.list')
  @Get()
  async list(@CurrentRealm() realm: Realm) {
    return { hooks: (await this.listHooks.execute({ realmId: realm.id })).map(presentHook) };
  }

  @ApiOperation({ summary: 'Create or replace a hook; the signing secret is in the answer only when the hook is created' })
  @ApiParam(NAME)
  @ApiOkResponse({ type: PutHookResponse })
  @ApiErrors('NOT_FOUND')
  @AdminAction('hook.put')
  @Put(':name')
  @HttpCode(200)
  async put(@Param('name') name: string, @Body() body: PutHookDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const { hook, secret } = await this.putHook.execute({ actor, realmId: realm.id, name, ...body });
    return { hook: presentHook(hook), ...(secret ? { secret } : {}) };
  }

  @ApiOperation({ summary: 'Remove a hook' })
  @ApiParam(NAME)
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('NOT_FOUND')
  @AdminAction('hook.delete')
  @Delete(':name')
  @HttpCode(200)
  async remove(@Param('name') name: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    await this.deleteHook.execute({ actor, realmId: realm.id, name });
    return { success: true };
  }

  @ApiOperation({ summary: 'New signing secret, shown only in this answer; the old one signs nothing more' })
  @ApiParam(NAME)
  @ApiOkResponse({ type: HookWithSecretResponse })
  @ApiErrors('NOT_FOUND')
  @AdminAction('hook.rotate-secret')
  @Post(':name/rotate-secret')
  @HttpCode(200)
  async rotate(@Param('name') name: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const { hook, secret } = await this.rotateSecret.execute({ actor, realmId: realm.id, name });
    return { hook: presentHook(hook), secret };
  }
}
