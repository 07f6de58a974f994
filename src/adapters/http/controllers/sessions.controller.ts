import { Controller, Delete, Get, HttpCode, Param, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../../application/auth/authenticate.use-case';
import { ListOwnSessionsUseCase } from '../../../application/auth/list-own-sessions.use-case';
import { RevokeOtherSessionsUseCase } from '../../../application/auth/revoke-other-sessions.use-case';
import { RevokeOwnSessionUseCase } from '../../../application/auth/revoke-own-session.use-case';
import { AppConfig } from '../../../config/app-config';
import { CurrentPrincipal } from '../decorators';
import { present } from '../presenters';
import { AppRequest, clientIp } from '../request-context';

/** The caller's own sessions (contract §3.7). */
@ApiTags('auth')
@ApiBearerAuth()
@Controller('api/v1/auth/sessions')
export class SessionsController {
  constructor(
    private readonly listOwn: ListOwnSessionsUseCase,
    private readonly revokeOwn: RevokeOwnSessionUseCase,
    private readonly revokeOthers: RevokeOtherSessionsUseCase,
    private readonly config: AppConfig,
  ) {}

  @Get()
  async list(@CurrentPrincipal() principal: Principal) {
    const sessions = await this.listOwn.execute({ realmId: principal.realm, userId: principal.sub });
    return {
      sessions: sessions.map((s) => ({ ...present.session(s, this.config.sessionIdleTimeoutSeconds), current: s.id === principal.sid })),
    };
  }

  @Delete(':id')
  @HttpCode(200)
  async revoke(@Param('id') id: string, @CurrentPrincipal() principal: Principal, @Req() req: AppRequest) {
    await this.revokeOwn.execute({ realmId: principal.realm, userId: principal.sub, currentSessionId: principal.sid, sessionId: id, ip: clientIp(req) });
    return { success: true };
  }

  @Delete()
  @HttpCode(200)
  async revokeAllButCurrent(@CurrentPrincipal() principal: Principal, @Req() req: AppRequest) {
    const revoked = await this.revokeOthers.execute({ realmId: principal.realm, userId: principal.sub, currentSessionId: principal.sid, ip: clientIp(req) });
    return { success: true, revoked };
  }
}
