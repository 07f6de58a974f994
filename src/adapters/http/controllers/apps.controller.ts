import { Controller, Delete, Get, HttpCode, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ListAppsUseCase } from '../../../application/apps/list-apps.use-case';
import { RevokeAppUseCase } from '../../../application/apps/revoke-app.use-case';
import { Principal } from '../../../application/auth/authenticate.use-case';
import { Realm } from '../../../domain/realm/realm';
import { CurrentPrincipal, CurrentRealm } from '../decorators';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { AppsResponse, SuccessResponse } from '../openapi/schemas';

/** The apps the caller let sign them in through the realm's OpenID provider. */
@ApiTags('auth')
@ApiBearerAuth()
@Controller('api/v1/auth/apps')
export class AppsController {
  constructor(
    private readonly listApps: ListAppsUseCase,
    private readonly revokeApp: RevokeAppUseCase,
  ) {}

  @ApiOperation({ summary: 'The apps the caller allowed, with what each may see' })
  @ApiOkResponse({ type: AppsResponse })
  @Get()
  async list(@CurrentPrincipal() principal: Principal, @CurrentRealm() realm: Realm) {
    const apps = await this.listApps.execute({ realmId: realm.id, userId: principal.sub });
    return {
      apps: apps.map((app) => ({
        clientId: app.clientId,
        name: app.name,
        scopes: app.scopes,
        grantedAt: app.grantedAt.toISOString(),
        lastUsedAt: app.lastUsedAt ? app.lastUsedAt.toISOString() : null,
      })),
    };
  }

  @ApiOperation({ summary: 'Revoke an app: every token it holds for the caller ends' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('CLIENT_NOT_FOUND')
  @Delete(':clientId')
  @HttpCode(200)
  async revoke(@Param('clientId') clientId: string, @CurrentPrincipal() principal: Principal, @CurrentRealm() realm: Realm) {
    await this.revokeApp.execute({ realmId: realm.id, userId: principal.sub, clientId });
    return { success: true };
  }
}
