import { Controller, Get, Header, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ACCESS_TOKEN_ALGORITHM, realmIssuer } from '../../../application/ports/access-tokens';
import { DPOP_PROOF_ALGORITHMS } from '../../../application/ports/dpop-proof-verifier';
import { RealmDirectory } from '../../../application/realm/realm-directory';
import { AppConfig } from '../../../config/app-config';
import { DomainError } from '../../../domain/errors';
import { Public, RealmHeader } from '../decorators';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { DiscoveryResponse } from '../openapi/schemas';

/**
 * Each realm's discovery metadata (OpenID Connect Discovery 1.0 at `{issuer}/.well-known/…`, and
 * RFC 8414's form), so a resource server configured with the realm's issuer alone (Spring's
 * issuer-uri, ASP.NET's Authority, openid-client's discovery, the verifier package) finds the
 * keys. The keys are at the service's own address even when JWT_ISSUER names another.
 */
@ApiTags('keys')
@Controller()
export class RealmDiscoveryController {
  constructor(
    private readonly realms: RealmDirectory,
    private readonly config: AppConfig,
  ) {}

  @Public()
  @RealmHeader('none')
  @ApiOperation({ summary: 'The realm’s discovery document: the issuer of its tokens and where its keys are' })
  @ApiOkResponse({ type: DiscoveryResponse })
  @ApiErrors('REALM_NOT_FOUND')
  @Get('realms/:realmId/.well-known/openid-configuration')
  @Header('Cache-Control', 'public, max-age=300')
  openidConfiguration(@Param('realmId') realmId: string): Promise<DiscoveryResponse> {
    return this.metadata(realmId);
  }

  @Public()
  @RealmHeader('none')
  @ApiOperation({ summary: 'The realm’s authorization server metadata (RFC 8414): the same document' })
  @ApiOkResponse({ type: DiscoveryResponse })
  @ApiErrors('REALM_NOT_FOUND')
  @Get('.well-known/oauth-authorization-server/realms/:realmId')
  @Header('Cache-Control', 'public, max-age=300')
  authorizationServer(@Param('realmId') realmId: string): Promise<DiscoveryResponse> {
    return this.metadata(realmId);
  }

  /** @throws DomainError REALM_NOT_FOUND */
  private async metadata(realmId: string): Promise<DiscoveryResponse> {
    const realm = /^[a-z0-9][a-z0-9-]{0,62}$/.test(realmId) ? await this.realms.find(realmId) : null;
    if (!realm) throw new DomainError('REALM_NOT_FOUND', `Realm "${realmId}" does not exist`);
    return {
      issuer: realmIssuer(this.config.issuer, realm.id),
      jwks_uri: `${this.config.apiUrl}/.well-known/jwks.json`,
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [ACCESS_TOKEN_ALGORITHM],
      dpop_signing_alg_values_supported: DPOP_PROOF_ALGORITHMS,
    };
  }
}
