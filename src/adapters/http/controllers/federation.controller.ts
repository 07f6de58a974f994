import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AuthenticateUseCase, Principal } from '../../../application/auth/authenticate.use-case';
import { DpopBinding } from '../../../application/sign-in/dpop-binding';
import { CompleteFederationUseCase } from '../../../application/federation/complete-federation.use-case';
import { ExchangeLoginCodeUseCase } from '../../../application/federation/exchange-login-code.use-case';
import { LinkIdentityUseCase } from '../../../application/federation/link-identity.use-case';
import { ListIdentityProvidersUseCase } from '../../../application/federation/list-identity-providers.use-case';
import { ListUserIdentitiesUseCase } from '../../../application/federation/list-user-identities.use-case';
import { StartFederationUseCase } from '../../../application/federation/start-federation.use-case';
import { UnlinkIdentityUseCase } from '../../../application/federation/unlink-identity.use-case';
import { Clock } from '../../../application/ports/clock';
import { OrganizationSignIn } from '../../../application/organizations/organization-sign-in';
import { AppConfig } from '../../../config/app-config';
import { DomainError } from '../../../domain/errors';
import { Realm } from '../../../domain/realm/realm';
import { CurrentPrincipal, CurrentRealm, Public, RateLimit } from '../decorators';
import { EmptyBodyDto } from '../dto/empty-body.dto';
import { ExchangeLoginCodeDto, LinkIdentityDto, ProvidersQuery, StartFederationDto } from '../dto/federation.dto';
import { presentFederation } from '../federation-presenters';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { LOGIN_EXAMPLES, LoginResponse, SuccessResponse } from '../openapi/schemas';
import { AcceptsDpopProof, IssuesRefreshCookie, SET_REFRESH_COOKIE } from '../openapi/token-transport.decorators';
import { AppRequest, clientContext, clientIp, dpopRequest } from '../request-context';
import { SignInResponses } from '../sign-in-responses';
import { AuthorizationUrlResponse, IdentitiesResponse, IdentityResponse, ProvidersResponse } from '../openapi/federation-schemas';

const BEARER = /^(Bearer|DPoP) ([A-Za-z0-9_.~+/=-]+)$/;

/** Sign-in with the realm's OpenID Connect providers, and the caller's linked accounts. */
@ApiTags('auth')
@Controller('api/v1/auth')
export class FederationController {
  constructor(
    private readonly listProviders: ListIdentityProvidersUseCase,
    private readonly start: StartFederationUseCase,
    private readonly complete: CompleteFederationUseCase,
    private readonly exchange: ExchangeLoginCodeUseCase,
    private readonly linkIdentity: LinkIdentityUseCase,
    private readonly listIdentities: ListUserIdentitiesUseCase,
    private readonly unlink: UnlinkIdentityUseCase,
    private readonly authenticate: AuthenticateUseCase,
    private readonly dpop: DpopBinding,
    private readonly responses: SignInResponses,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly organizations: OrganizationSignIn,
  ) {}

  @Public()
  @ApiOperation({
    summary: 'The realm’s enabled identity providers, for sign-in buttons; with ?email=, the organization of the address’s domain',
  })
  @ApiOkResponse({ type: ProvidersResponse })
  @Get('providers')
  async providers(@CurrentRealm() realm: Realm, @Query() query: ProvidersQuery) {
    const providers = await this.listProviders.execute({ realmId: realm.id, enabledOnly: true });
    const buttons = providers.map((p) => ({ alias: p.alias, displayName: p.displayName }));
    if (query.email === undefined) return { providers: buttons };
    return { providers: buttons, organization: await this.organizations.discover(realm.id, query.email) };
  }

  @Public()
  @RateLimit('federation')
  @ApiOperation({ summary: 'Start a sign-in (or, with an access token and link: true, a link) at an identity provider' })
  @ApiOkResponse({ type: AuthorizationUrlResponse })
  @ApiErrors('IDENTITY_PROVIDER_NOT_FOUND', 'VALIDATION_FAILED', 'INVALID_TOKEN', 'FORBIDDEN')
  @Post('federation/:alias/start')
  @HttpCode(200)
  async begin(@Param('alias') alias: string, @Body() body: StartFederationDto, @CurrentRealm() realm: Realm, @Req() req: AppRequest) {
    const linker = body.link ? await this.caller(req, realm) : null;
    return this.start.execute({
      realm,
      alias,
      returnTo: body.returnTo,
      codeChallenge: body.codeChallenge,
      client: clientContext(req, body.deviceFingerprint),
      ...(linker ? { linkUserId: linker.sub, linkSessionId: linker.sid } : {}),
    });
  }

  @Public()
  @RateLimit('federation')
  @ApiOperation({ summary: 'The provider’s redirect: 303 to returnTo with a one-time login code, a one-time link code, or error=…' })
  @ApiResponse({
    status: 303,
    description:
      'To returnTo with a one-time login code, a one-time link code after a link (redeemed at POST /federation/link), ' +
      'or error and error_description',
    headers: {
      Location: {
        description: 'returnTo?code=… | returnTo?link_code=… | returnTo?error=…&error_description=…',
        schema: { type: 'string' },
      },
    },
  })
  @ApiErrors('INVALID_VERIFICATION_TOKEN')
  @Get('federation/:alias/callback')
  async callback(@Param('alias') alias: string, @Query() query: Record<string, unknown>, @Req() req: AppRequest, @Res() res: Response) {
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    const { redirect } = await this.complete.execute({
      alias,
      callbackUrl: `${this.config.apiUrl}${req.originalUrl}`,
      state: text(query.state),
      error: text(query.error),
      ip: clientIp(req),
    });
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.redirect(303, redirect);
  }

  @Public()
  @RateLimit('signInVerify')
  @ApiOperation({ summary: 'Redeem a login code with its code verifier: answered as POST /login' })
  @ApiOkResponse({ type: LoginResponse, examples: LOGIN_EXAMPLES, headers: SET_REFRESH_COOKIE })
  @ApiErrors(
    'INVALID_TOKEN',
    'ACCOUNT_SUSPENDED',
    'ACCOUNT_LOCKED',
    'EMAIL_NOT_VERIFIED',
    'INVALID_DPOP_PROOF',
    'HOOK_DENIED',
    'HOOK_FAILED',
  )
  @AcceptsDpopProof('binds')
  @IssuesRefreshCookie()
  @Post('federation/exchange')
  @HttpCode(200)
  async redeem(
    @Body() body: ExchangeLoginCodeDto,
    @CurrentRealm() realm: Realm,
    @Req() req: AppRequest,
    @Res({ passthrough: true }) res: Response,
  ) {
    const outcome = await this.exchange.execute({
      realm,
      code: body.code,
      codeVerifier: body.codeVerifier,
      client: clientContext(req, body.deviceFingerprint),
      dpop: dpopRequest(req),
    });
    return this.responses.present(req, res, realm, outcome);
  }

  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Finish a link: the link code from returnTo?link_code=… with the verifier of the start’s codeChallenge',
    description:
      'Only the user who started the link redeems its code, with the verifier of the challenge sent at start. ' +
      'Any attempt spends the code.',
  })
  @ApiOkResponse({ type: IdentityResponse })
  @ApiErrors('INVALID_TOKEN', 'INVALID_USER_STATE', 'FORBIDDEN', 'VALIDATION_FAILED')
  @Post('federation/link')
  @HttpCode(200)
  async finishLink(
    @Body() body: LinkIdentityDto,
    @CurrentPrincipal() principal: Principal,
    @CurrentRealm() realm: Realm,
    @Req() req: AppRequest,
  ) {
    const identity = await this.linkIdentity.execute({
      realm,
      userId: principal.sub,
      sessionId: principal.sid,
      code: body.code,
      codeVerifier: body.codeVerifier,
      ip: clientIp(req),
    });
    return { identity: presentFederation.identity(identity) };
  }

  @ApiBearerAuth()
  @ApiOperation({ summary: 'The caller’s linked identity-provider accounts' })
  @ApiOkResponse({ type: IdentitiesResponse })
  @Get('identities')
  async identities(@CurrentPrincipal() principal: Principal) {
    const byUser = await this.listIdentities.execute({ realmId: principal.realm, userIds: [principal.sub] });
    return { identities: (byUser.get(principal.sub) ?? []).map(presentFederation.identity) };
  }

  @ApiBearerAuth()
  @ApiOperation({ summary: 'Unlink one of the caller’s identity-provider accounts (not the last way to sign in)' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('NOT_FOUND', 'INVALID_USER_STATE', 'FORBIDDEN')
  @Delete('identities/:id')
  @HttpCode(200)
  async remove(@Param('id') id: string, @Body() _body: EmptyBodyDto, @CurrentPrincipal() principal: Principal, @Req() req: AppRequest) {
    await this.unlink.execute({
      realmId: principal.realm,
      userId: principal.sub,
      sessionId: principal.sid,
      identityId: id,
      ip: clientIp(req),
    });
    return { success: true };
  }

  /** The signed-in caller of a public route, checked as the access-token guard checks (DPoP included). */
  private async caller(req: AppRequest, realm: Realm): Promise<Principal> {
    const match = BEARER.exec(req.headers.authorization ?? '');
    if (!match) throw new DomainError('INVALID_TOKEN', 'Linking needs the signed-in user’s access token');
    const principal = await this.authenticate.execute(match[2]);
    if (principal.cnf) {
      if (match[1] !== 'DPoP') throw new DomainError('INVALID_DPOP_PROOF', 'A DPoP-bound access token must be sent as Authorization: DPoP');
      await this.dpop.assertResourceProof(principal.cnf.jkt, match[2], dpopRequest(req), this.clock.now());
    }
    if (principal.realm !== realm.id) throw new DomainError('INVALID_TOKEN', 'The access token belongs to another realm');
    return principal;
  }
}
