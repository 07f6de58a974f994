import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { PasskeySignInUseCase, StartPasskeySignInUseCase } from '../../../application/auth/passkey-sign-in.use-case';
import { Realm } from '../../../domain/realm/realm';
import { CurrentRealm, Public, RateLimit } from '../decorators';
import { EmptyBodyDto } from '../dto/empty-body.dto';
import { PasskeyVerifyDto } from '../dto/passwordless.dto';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { LoginResponse, PasskeyOptionsResponse } from '../openapi/schemas';
import { AcceptsDpopProof, IssuesRefreshCookie, SET_REFRESH_COOKIE } from '../openapi/token-transport.decorators';
import { AppRequest, clientContext, dpopRequest } from '../request-context';
import { SignInResponses } from '../sign-in-responses';

/** Sign-in with a passkey alone (a discoverable WebAuthn credential with user verification). */
@ApiTags('passwordless')
@Controller('api/v1/auth/passkeys')
export class PasskeysController {
  constructor(
    private readonly start: StartPasskeySignInUseCase,
    private readonly signIn: PasskeySignInUseCase,
    private readonly responses: SignInResponses,
  ) {}

  @Public()
  @ApiOperation({ summary: 'A passkey challenge: request options with an empty allowCredentials (for a button or for autofill)' })
  @ApiOkResponse({ type: PasskeyOptionsResponse })
  @Post('options')
  @HttpCode(200)
  async options(@Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm) {
    return this.start.execute({ realm });
  }

  @Public()
  @RateLimit('signInVerify')
  @ApiOperation({ summary: 'Sign in with the passkey’s answer to a challenge; amr ["hwk","mfa"], never a second step' })
  @ApiOkResponse({ type: LoginResponse, headers: SET_REFRESH_COOKIE })
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
  @Post('verify')
  @HttpCode(200)
  async verify(
    @Body() body: PasskeyVerifyDto,
    @CurrentRealm() realm: Realm,
    @Req() req: AppRequest,
    @Res({ passthrough: true }) res: Response,
  ) {
    const outcome = await this.signIn.execute({
      realm,
      challengeId: body.challengeId,
      response: body.response,
      client: clientContext(req, body.deviceFingerprint),
      dpop: dpopRequest(req),
    });
    return this.responses.present(req, res, realm, outcome);
  }
}
