import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccessTokens } from '../../../application/ports/access-tokens';
import { Public, RealmHeader } from '../decorators';
import { JwksResponse } from '../openapi/schemas';

@ApiTags('keys')
@Controller('.well-known')
export class JwksController {
  constructor(private readonly accessTokens: AccessTokens) {}

  /** Public keys for resource servers; at the root, not under /api. */
  @Public()
  @RealmHeader('none')
  @ApiOperation({ summary: 'Public keys to verify access tokens: the current key and the previous one' })
  @ApiOkResponse({ type: JwksResponse })
  @Get('jwks.json')
  @Header('Cache-Control', 'public, max-age=300')
  jwks() {
    return this.accessTokens.jwks();
  }
}
