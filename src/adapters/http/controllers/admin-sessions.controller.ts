import { Body, Controller, Delete, Get, HttpCode, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminActor } from '../../../application/admin/admin-actor';
import { ListSessionsUseCase } from '../../../application/admin/list-sessions.use-case';
import { RevokeSessionUseCase } from '../../../application/admin/revoke-session.use-case';
import { RevokeUserSessionsUseCase } from '../../../application/admin/revoke-user-sessions.use-case';
import { Realm } from '../../../domain/realm/realm';
import { Session } from '../../../domain/session/session';
import { AdminAction, CurrentRealm, RealmHeader } from '../decorators';
import { ListSessionsQuery, PageQuery } from '../dto/admin.dto';
import { EmptyBodyDto } from '../dto/empty-body.dto';
import { CurrentAdmin } from '../guards/admin.guard';
import { present } from '../presenters';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { RevokedResponse, SessionsPage, SuccessResponse } from '../openapi/schemas';

/** Sessions of a realm and of one user. */
@ApiTags('admin')
@ApiBearerAuth()
@ApiHeader({ name: 'X-Realm-Id', required: true })
@RealmHeader('required')
@Controller('v1/admin')
export class AdminSessionsController {
  constructor(
    private readonly listSessions: ListSessionsUseCase,
    private readonly revokeSession: RevokeSessionUseCase,
    private readonly revokeUserSessions: RevokeUserSessionsUseCase,
  ) {}

  @ApiOperation({ summary: 'The realm’s live sessions' })
  @ApiOkResponse({ type: SessionsPage })
  @AdminAction('sessions.list')
  @Get('sessions')
  async list(@Query() query: ListSessionsQuery, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    const result = await this.listSessions.execute({ actor, realm, userId: query.userId, status: query.status, page, limit });
    return this.page(result, realm, page, limit);
  }

  @ApiOperation({ summary: 'Revoke a session' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('SESSION_NOT_FOUND')
  @AdminAction('session.revoke')
  @Delete('sessions/:id')
  @HttpCode(200)
  async revoke(@Param('id') id: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    await this.revokeSession.execute({ actor, realm, sessionId: id });
    return { success: true };
  }

  @ApiOperation({ summary: 'A user’s live sessions' })
  @ApiOkResponse({ type: SessionsPage })
  @ApiErrors('USER_NOT_FOUND')
  @AdminAction('user.sessions.list')
  @Get('users/:id/sessions')
  async listForUser(@Param('id') id: string, @Query() query: PageQuery, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    const result = await this.listSessions.execute({ actor, realm, userId: id, page, limit, userMustExist: true });
    return this.page(result, realm, page, limit);
  }

  @ApiOperation({ summary: 'Revoke all of a user’s sessions' })
  @ApiOkResponse({ type: RevokedResponse })
  @ApiErrors('USER_NOT_FOUND')
  @AdminAction('user.sessions.revoke')
  @Delete('users/:id/sessions')
  @HttpCode(200)
  async revokeForUser(
    @Param('id') id: string,
    @Body() _body: EmptyBodyDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    const revoked = await this.revokeUserSessions.execute({ actor, realmId: realm.id, userId: id });
    return { success: true, revoked };
  }

  private page(result: { sessions: Session[]; total: number }, realm: Realm, page: number, limit: number) {
    return {
      sessions: result.sessions.map((session) => present.session(session, realm.policy.sessionLifetime)),
      pagination: present.pagination(result.total, page, limit),
    };
  }
}
