import { Body, Controller, Get, HttpCode, Patch, Post, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../../application/auth/authenticate.use-case';
import { GetMeUseCase } from '../../../application/auth/get-me.use-case';
import { LoginUseCase } from '../../../application/auth/login.use-case';
import { LogoutUseCase } from '../../../application/auth/logout.use-case';
import { RefreshUseCase } from '../../../application/auth/refresh.use-case';
import { RegisterUseCase } from '../../../application/auth/register.use-case';
import { UpdateProfileUseCase } from '../../../application/auth/update-profile.use-case';
import { ListUserIdentitiesUseCase } from '../../../application/federation/list-user-identities.use-case';
import { Clock } from '../../../application/ports/clock';
import { Realm } from '../../../domain/realm/realm';
import { User } from '../../../domain/user/user';
import { CurrentPrincipal, CurrentRealm, Public, RateLimit } from '../decorators';
import { LoginDto, LogoutDto, RefreshDto, RegisterDto, UpdateProfileDto } from '../dto/auth.dto';
import { present } from '../presenters';
import { RefreshCookies } from '../refresh-cookies';
import { SignInResponses } from '../sign-in-responses';
import {
  AcceptsDpopProof,
  CLEAR_REFRESH_COOKIE,
  IssuesRefreshCookie,
  ReadsRefreshCookie,
  SET_REFRESH_COOKIE,
} from '../openapi/token-transport.decorators';
import { AppRequest, clientContext, clientIp, dpopRequest } from '../request-context';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { LOGIN_EXAMPLES, LoginResponse, RegisterResponse, SuccessResponse, TokensResponse, UserResponse } from '../openapi/schemas';

@ApiTags('auth')
@Controller('api/v1/auth')
export class AuthController {
  constructor(
    private readonly registerUser: RegisterUseCase,
    private readonly login: LoginUseCase,
    private readonly refresh: RefreshUseCase,
    private readonly logout: LogoutUseCase,
    private readonly getMe: GetMeUseCase,
    private readonly updateProfile: UpdateProfileUseCase,
    private readonly listIdentities: ListUserIdentitiesUseCase,
    private readonly clock: Clock,
    private readonly cookies: RefreshCookies,
    private readonly responses: SignInResponses,
  ) {}

  @Public()
  @RateLimit('register')
  @ApiOperation({ summary: 'Register; a verification email is queued' })
  @ApiCreatedResponse({ type: RegisterResponse })
  @ApiErrors('EMAIL_ALREADY_REGISTERED', 'REGISTRATION_DISABLED', 'HOOK_DENIED', 'HOOK_FAILED')
  @Post('register')
  @HttpCode(201)
  async register(@Body() body: RegisterDto, @CurrentRealm() realm: Realm, @Req() req: AppRequest) {
    const user = await this.registerUser.execute({ realm, ...body, ip: clientIp(req) });
    return {
      user: present.authUser(user, false),
      message: 'Registration successful. Check your email to verify your address.',
    };
  }

  @Public()
  @RateLimit('login')
  @ApiOperation({ summary: 'Log in with email and password' })
  @ApiOkResponse({
    type: LoginResponse,
    description: 'Tokens, or an mfaToken when the user has MFA',
    examples: LOGIN_EXAMPLES,
    headers: SET_REFRESH_COOKIE,
  })
  @ApiErrors(
    'INVALID_CREDENTIALS',
    'ACCOUNT_SUSPENDED',
    'ACCOUNT_LOCKED',
    'EMAIL_NOT_VERIFIED',
    'INVALID_DPOP_PROOF',
    'HOOK_DENIED',
    'HOOK_FAILED',
  )
  @AcceptsDpopProof('binds')
  @IssuesRefreshCookie()
  @Post('login')
  @HttpCode(200)
  async signIn(@Body() body: LoginDto, @CurrentRealm() realm: Realm, @Req() req: AppRequest, @Res({ passthrough: true }) res: Response) {
    const result = await this.login.execute({
      realm,
      email: body.email,
      password: body.password,
      client: clientContext(req, body.deviceFingerprint),
      dpop: dpopRequest(req),
    });
    return this.responses.present(req, res, realm, result);
  }

  @Public()
  @RateLimit('refresh')
  @ApiOperation({ summary: 'Rotate the refresh token: a new pair; the old token stops working' })
  @ApiOkResponse({ type: TokensResponse, headers: SET_REFRESH_COOKIE })
  @ApiErrors('INVALID_TOKEN', 'MFA_REQUIRED', 'REAUTHENTICATION_REQUIRED', 'FORBIDDEN', 'INVALID_DPOP_PROOF', 'HOOK_FAILED')
  @AcceptsDpopProof('bound')
  @ReadsRefreshCookie()
  @Post('refresh')
  @HttpCode(200)
  async rotate(@Body() body: RefreshDto, @CurrentRealm() realm: Realm, @Req() req: AppRequest, @Res({ passthrough: true }) res: Response) {
    const refreshToken = this.cookies.tokenOf(req, realm.id, body.refreshToken);
    // A refused token is dead for good: the browser may as well forget the cookie.
    const { tokens } = await this.cookies.clearingOn(['INVALID_TOKEN', 'REAUTHENTICATION_REQUIRED'], req, res, realm.id, () =>
      this.refresh.execute({
        realm,
        refreshToken,
        client: clientContext(req, body.deviceFingerprint),
        dpop: dpopRequest(req),
        known: req.refreshTokenContext,
      }),
    );
    return { tokens: this.cookies.deliver(req, res, realm.id, tokens) };
  }

  @Public()
  @ApiOperation({ summary: 'Log out: revokes the session' })
  @ApiOkResponse({ type: SuccessResponse, headers: CLEAR_REFRESH_COOKIE })
  @ApiErrors('INVALID_TOKEN', 'FORBIDDEN', 'INVALID_DPOP_PROOF')
  @AcceptsDpopProof('bound')
  @ReadsRefreshCookie()
  @Post('logout')
  @HttpCode(200)
  async signOut(@Body() body: LogoutDto, @CurrentRealm() realm: Realm, @Req() req: AppRequest, @Res({ passthrough: true }) res: Response) {
    const refreshToken = this.cookies.tokenOf(req, realm.id, body.refreshToken);
    await this.cookies.clearingOn(['INVALID_TOKEN'], req, res, realm.id, () =>
      this.logout.execute({ realm, refreshToken, client: clientContext(req), dpop: dpopRequest(req) }),
    );
    this.cookies.clear(res, realm.id);
    return { success: true };
  }

  @ApiBearerAuth()
  @ApiOperation({ summary: 'The signed-in user' })
  @ApiOkResponse({ type: UserResponse })
  @Get('me')
  async me(@CurrentPrincipal() principal: Principal) {
    const user = await this.getMe.execute({ realmId: principal.realm, userId: principal.sub, loaded: principal.user });
    return this.userView(user);
  }

  @ApiBearerAuth()
  @ApiOperation({ summary: "Change the signed-in user's name or avatar; audited (user.profile_updated)" })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors('VALIDATION_FAILED')
  @Patch('me')
  async updateMe(
    @Body() body: UpdateProfileDto,
    @CurrentPrincipal() principal: Principal,
    @CurrentRealm() realm: Realm,
    @Req() req: AppRequest,
  ) {
    const user = await this.updateProfile.execute({
      realmId: principal.realm,
      userId: principal.sub,
      sessionId: principal.sid,
      lifetime: realm.policy.sessionLifetime,
      changes: body,
      ip: clientIp(req),
    });
    return this.userView(user);
  }

  private async userView(user: User) {
    // Most users have no linked identity: the read that made the user said so, and /me stays one statement.
    const identities = (await this.listIdentities.forUsers(user.realmId, [user])).get(user.id) ?? [];
    return { user: present.user(user.summary(), this.clock.now(), identities) };
  }
}
