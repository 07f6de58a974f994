import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ACCESS_TOKEN_ALGORITHM, AccessTokens } from '../../../application/ports/access-tokens';
import { DPOP_PROOF_ALGORITHMS } from '../../../application/ports/dpop-proof-verifier';
import { AppConfig } from '../../../config/app-config';
import { Public, RealmHeader } from '../decorators';
import { DiscoveryResponse, JwksResponse } from '../openapi/schemas';

@ApiTags('keys')
@Controller('.well-known')
export class JwksController {
  constructor(
    private readonly accessTokens: AccessTokens,
    private readonly config: AppConfig,
  ) {}

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

  /**
   * Discovery metadata (OpenID Connect Discovery / RFC 8414), so a resource server configured with
   * the issuer alone (Spring's issuer-uri, ASP.NET's Authority, openid-client's discovery) finds
   * the keys. The keys are at the service's own address even when JWT_ISSUER names another.
   */
  @Public()
  @RealmHeader('none')
  @ApiOperation({ summary: 'Discovery document: the issuer of access tokens and where its keys are' })
  @ApiOkResponse({ type: DiscoveryResponse })
  @Get('openid-configuration')
  @Header('Cache-Control', 'public, max-age=300')
  discovery(): DiscoveryResponse {
    return {
      issuer: this.config.issuer,
      jwks_uri: `${this.config.apiUrl}/.well-known/jwks.json`,
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [ACCESS_TOKEN_ALGORITHM],
      dpop_signing_alg_values_supported: DPOP_PROOF_ALGORITHMS,
    };
  }
}
