import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../../application/auth/authenticate.use-case';
import { ChangePasswordUseCase } from '../../../application/auth/change-password.use-case';
import { ForgotPasswordUseCase } from '../../../application/auth/forgot-password.use-case';
import { ResendVerificationUseCase } from '../../../application/auth/resend-verification.use-case';
import { ResetPasswordUseCase } from '../../../application/auth/reset-password.use-case';
import { VerifyEmailUseCase } from '../../../application/auth/verify-email.use-case';
import { Realm } from '../../../domain/realm/realm';
import { CurrentPrincipal, CurrentRealm, Public, RateLimit } from '../decorators';
import { ChangePasswordDto, EmailAddressDto, EmailLinkTokenDto, ResetPasswordDto } from '../dto/account.dto';
import { DeferredWork } from '../deferred-work';
import { AppRequest, clientIp } from '../request-context';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { SuccessResponse } from '../openapi/schemas';

/** Email verification and password recovery. */
@ApiTags('auth')
@Controller('api/v1/auth')
export class AccountController {
  constructor(
    private readonly verifyEmail: VerifyEmailUseCase,
    private readonly resendVerification: ResendVerificationUseCase,
    private readonly forgotPassword: ForgotPasswordUseCase,
    private readonly resetPassword: ResetPasswordUseCase,
    private readonly changePassword: ChangePasswordUseCase,
    private readonly deferred: DeferredWork,
  ) {}

  @Public()
  @ApiOperation({
    summary: 'Verify the email address with the token from the link, or (notMe: true) disown an account registered with it',
  })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('INVALID_VERIFICATION_TOKEN', 'INVALID_USER_STATE')
  @Post('verify-email')
  @HttpCode(200)
  async verify(@Body() body: EmailLinkTokenDto, @CurrentRealm() realm: Realm, @Req() req: AppRequest) {
    await this.verifyEmail.execute({ realm, token: body.token, notMe: body.notMe === true, ip: clientIp(req) });
    return { success: true };
  }

  /** 202 whether or not the address is known, answered before the lookup is done. */
  @Public()
  @RateLimit('emailRequests')
  @ApiOperation({ summary: 'Send the verification email again (always 202: no enumeration)' })
  @ApiAcceptedResponse({ type: SuccessResponse })
  @Post('verify-email/resend')
  @HttpCode(202)
  resend(@Body() body: EmailAddressDto, @CurrentRealm() realm: Realm) {
    this.deferred.run('verification resend', () => this.resendVerification.execute({ realm, email: body.email }));
    return { success: true };
  }

  /** 202 whether or not the address is known, answered before the lookup is done. */
  @Public()
  @RateLimit('emailRequests')
  @ApiOperation({ summary: 'Email a password-reset link, valid 1 hour (always 202: no enumeration)' })
  @ApiAcceptedResponse({ type: SuccessResponse })
  @Post('password/forgot')
  @HttpCode(202)
  forgot(@Body() body: EmailAddressDto, @CurrentRealm() realm: Realm) {
    this.deferred.run('password reset request', () => this.forgotPassword.execute({ realm, email: body.email }));
    return { success: true };
  }

  @Public()
  @ApiOperation({ summary: 'Set a new password with the token from the reset link; revokes every session' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('INVALID_VERIFICATION_TOKEN')
  @Post('password/reset')
  @HttpCode(200)
  async reset(@Body() body: ResetPasswordDto, @CurrentRealm() realm: Realm, @Req() req: AppRequest) {
    await this.resetPassword.execute({ realm, token: body.token, password: body.password, ip: clientIp(req) });
    return { success: true };
  }

  @ApiBearerAuth()
  @ApiOperation({ summary: 'Change the password; revokes the other sessions' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('INVALID_CREDENTIALS', 'ACCOUNT_LOCKED', 'FORBIDDEN')
  @Post('password/change')
  @HttpCode(200)
  async change(
    @Body() body: ChangePasswordDto,
    @CurrentRealm() realm: Realm,
    @CurrentPrincipal() principal: Principal,
    @Req() req: AppRequest,
  ) {
    await this.changePassword.execute({
      realm,
      userId: principal.sub,
      sessionId: principal.sid,
      currentPassword: body.currentPassword,
      newPassword: body.newPassword,
      ip: clientIp(req),
    });
    return { success: true };
  }
}
