import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { EmailCodeProof, EmailCodeSignInUseCase } from '../../../application/auth/email-code-sign-in.use-case';
import { RequestEmailCodeUseCase } from '../../../application/auth/request-email-code.use-case';
import { DomainError } from '../../../domain/errors';
import { Realm } from '../../../domain/realm/realm';
import { CurrentRealm, Public, RateLimit } from '../decorators';
import { DeferredWork } from '../deferred-work';
import { EmailCodeRequestDto, EmailCodeVerifyDto } from '../dto/passwordless.dto';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { LoginResponse, SuccessResponse } from '../openapi/schemas';
import { AcceptsDpopProof, IssuesRefreshCookie, SET_REFRESH_COOKIE } from '../openapi/token-transport.decorators';
import { AppRequest, clientContext, dpopRequest } from '../request-context';
import { SignInResponses } from '../sign-in-responses';

/** Sign-in with a code sent by email, or with the link beside it in the browser that asked. */
@ApiTags('passwordless')
@Controller('api/v1/auth/email-code')
export class EmailCodeController {
  constructor(
    private readonly request: RequestEmailCodeUseCase,
    private readonly signIn: EmailCodeSignInUseCase,
    private readonly responses: SignInResponses,
    private readonly deferred: DeferredWork,
  ) {}

  /** 202 whether or not the address has an account, answered before it is looked up. */
  @Public()
  @RateLimit('emailCode', 'emailCodeIp')
  @ApiOperation({ summary: 'Email an 8-digit sign-in code (and a link bound to this browser); always 202: no enumeration' })
  @ApiAcceptedResponse({ type: SuccessResponse })
  @Post()
  @HttpCode(202)
  send(@Body() body: EmailCodeRequestDto, @CurrentRealm() realm: Realm) {
    const accepted = this.request.execute({ realm, email: body.email, returnTo: body.returnTo, codeChallenge: body.codeChallenge });
    this.deferred.run('sign-in code request', accepted.send);
    return { success: true };
  }

  @Public()
  @RateLimit('signInVerify')
  @ApiOperation({ summary: 'Sign in with {email, code} or {token, codeVerifier}; answers as POST /login, amr ["email"]' })
  @ApiOkResponse({ type: LoginResponse, headers: SET_REFRESH_COOKIE })
  @ApiErrors('INVALID_CREDENTIALS', 'ACCOUNT_SUSPENDED', 'ACCOUNT_LOCKED', 'INVALID_DPOP_PROOF', 'HOOK_DENIED', 'HOOK_FAILED')
  @AcceptsDpopProof('binds')
  @IssuesRefreshCookie()
  @Post('verify')
  @HttpCode(200)
  async verify(
    @Body() body: EmailCodeVerifyDto,
    @CurrentRealm() realm: Realm,
    @Req() req: AppRequest,
    @Res({ passthrough: true }) res: Response,
  ) {
    const outcome = await this.signIn.execute({
      realm,
      proof: proofOf(body),
      client: clientContext(req, body.deviceFingerprint),
      dpop: dpopRequest(req),
    });
    return this.responses.present(req, res, realm, outcome);
  }
}

/** `{email, code}` or `{token, codeVerifier}`, never parts of both. */
function proofOf(body: EmailCodeVerifyDto): EmailCodeProof {
  if (body.token !== undefined && body.codeVerifier !== undefined) {
    if (body.email !== undefined || body.code !== undefined) throw DomainError.validation('token', 'must not be sent with email and code');
    return { token: body.token, codeVerifier: body.codeVerifier };
  }
  return { email: body.email!, code: body.code! };
}
