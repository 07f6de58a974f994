import { Controller, Delete, Get, HttpCode, Param, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../../application/auth/authenticate.use-case';
import { ListOwnSessionsUseCase } from '../../../application/auth/list-own-sessions.use-case';
import { RevokeOtherSessionsUseCase } from '../../../application/auth/revoke-other-sessions.use-case';
import { RevokeOwnSessionUseCase } from '../../../application/auth/revoke-own-session.use-case';
import { Realm } from '../../../domain/realm/realm';
import { CurrentPrincipal, CurrentRealm } from '../decorators';
import { present } from '../presenters';
import { AppRequest, clientIp } from '../request-context';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { OwnSessionsResponse, RevokedResponse, SuccessResponse } from '../openapi/schemas';

/** The caller's own sessions. */
@ApiTags('auth')
@ApiBearerAuth()
@Controller('api/v1/auth/sessions')
export class SessionsController {
  constructor(
    private readonly listOwn: ListOwnSessionsUseCase,
    private readonly revokeOwn: RevokeOwnSessionUseCase,
    private readonly revokeOthers: RevokeOtherSessionsUseCase,
  ) {}

  @ApiOperation({ summary: 'The caller’s live sessions' })
  @ApiOkResponse({ type: OwnSessionsResponse })
  @Get()
  async list(@CurrentPrincipal() principal: Principal, @CurrentRealm() realm: Realm) {
    const sessions = await this.listOwn.execute({ realm, userId: principal.sub });
    return {
      sessions: sessions.map((s) => ({ ...present.session(s, realm.policy.sessionLifetime), current: s.id === principal.sid })),
    };
  }

  @ApiOperation({ summary: 'Revoke one of the caller’s sessions' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('SESSION_NOT_FOUND')
  @Delete(':id')
  @HttpCode(200)
  async revoke(@Param('id') id: string, @CurrentPrincipal() principal: Principal, @CurrentRealm() realm: Realm, @Req() req: AppRequest) {
    await this.revokeOwn.execute({
      realm,
      userId: principal.sub,
      currentSessionId: principal.sid,
      sessionId: id,
      ip: clientIp(req),
    });
    return { success: true };
  }

  @ApiOperation({ summary: 'Revoke all the caller’s sessions but the current one' })
  @ApiOkResponse({ type: RevokedResponse })
  @Delete()
  @HttpCode(200)
  async revokeAllButCurrent(@CurrentPrincipal() principal: Principal, @CurrentRealm() realm: Realm, @Req() req: AppRequest) {
    const revoked = await this.revokeOthers.execute({
      realm,
      userId: principal.sub,
      currentSessionId: principal.sid,
      ip: clientIp(req),
    });
    return { success: true, revoked };
  }
}
