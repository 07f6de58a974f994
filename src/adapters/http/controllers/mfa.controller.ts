import { Body, Controller, Delete, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../../application/auth/authenticate.use-case';
import { ConfirmTotpUseCase } from '../../../application/mfa/confirm-totp.use-case';
import { DisableTotpUseCase } from '../../../application/mfa/disable-totp.use-case';
import { FinishWebauthnRegistrationUseCase } from '../../../application/mfa/finish-webauthn-registration.use-case';
import { GetMfaStatusUseCase } from '../../../application/mfa/get-mfa-status.use-case';
import { MfaActor } from '../../../application/mfa/mfa-account';
import { RegenerateRecoveryCodesUseCase } from '../../../application/mfa/regenerate-recovery-codes.use-case';
import { RemoveWebauthnCredentialUseCase } from '../../../application/mfa/remove-webauthn-credential.use-case';
import { SetupTotpUseCase } from '../../../application/mfa/setup-totp.use-case';
import { StartWebauthnMfaUseCase } from '../../../application/mfa/start-webauthn-mfa.use-case';
import { StartWebauthnRegistrationUseCase } from '../../../application/mfa/start-webauthn-registration.use-case';
import { VerifyMfaUseCase } from '../../../application/mfa/verify-mfa.use-case';
import { Realm } from '../../../domain/realm/realm';
import { CurrentPrincipal, CurrentRealm, Public, RateLimit } from '../decorators';
import {
  MfaTokenDto,
  MfaVerifyDto,
  PasswordConfirmationDto,
  TotpConfirmDto,
  WebauthnRegisterOptionsDto,
  WebauthnRegisterVerifyDto,
} from '../dto/mfa.dto';
import { present } from '../presenters';
import { RefreshCookies } from '../refresh-cookies';
import { AcceptsDpopProof, IssuesRefreshCookie, SET_REFRESH_COOKIE } from '../openapi/token-transport.decorators';
import { AppRequest, clientContext, clientIp, dpopRequest } from '../request-context';
import { ApiErrors } from '../openapi/api-errors.decorator';
import {
  AuthenticatedResponse,
  MfaEnabledResponse,
  MfaResponse,
  MfaStatusResponse,
  PublicKeyCredentialCreationOptionsView,
  PublicKeyCredentialRequestOptionsView,
  RecoveryCodesResponse,
  TotpSetupResponse,
  WebauthnRegisteredResponse,
} from '../openapi/schemas';

function actor(realm: Realm, principal: Principal, req: AppRequest): MfaActor {
  return { realm, userId: principal.sub, sessionId: principal.sid, ip: clientIp(req) };
}

/** The second factor: the login step and the caller's own factors. */
@ApiTags('mfa')
@Controller('api/v1/auth/mfa')
export class MfaController {
  constructor(
    private readonly verifyMfa: VerifyMfaUseCase,
    private readonly startWebauthnMfa: StartWebauthnMfaUseCase,
    private readonly getStatus: GetMfaStatusUseCase,
    private readonly setupTotp: SetupTotpUseCase,
    private readonly confirmTotp: ConfirmTotpUseCase,
    private readonly disableTotp: DisableTotpUseCase,
    private readonly startRegistration: StartWebauthnRegistrationUseCase,
    private readonly finishRegistration: FinishWebauthnRegistrationUseCase,
    private readonly removeCredential: RemoveWebauthnCredentialUseCase,
    private readonly regenerateCodes: RegenerateRecoveryCodesUseCase,
    private readonly cookies: RefreshCookies,
  ) {}

  @Public()
  @RateLimit('mfaVerify')
  @ApiOperation({ summary: 'Complete a login, or re-verify a flagged session, with a second factor' })
  @ApiOkResponse({ type: AuthenticatedResponse, headers: SET_REFRESH_COOKIE })
  @ApiErrors('INVALID_MFA_CODE', 'INVALID_TOKEN', 'TOKEN_EXPIRED', 'INVALID_DPOP_PROOF', 'HOOK_FAILED')
  @IssuesRefreshCookie()
  @AcceptsDpopProof('binds')
  @Post('verify')
  @HttpCode(200)
  async verify(
    @Body() body: MfaVerifyDto,
    @CurrentRealm() realm: Realm,
    @Req() req: AppRequest,
    @Res({ passthrough: true }) res: Response,
  ) {
    const result = await this.verifyMfa.execute({
      realm,
      mfaToken: body.mfaToken,
      type: body.type,
      code: body.code,
      client: clientContext(req, body.deviceFingerprint),
      dpop: dpopRequest(req),
    });
    return { user: present.authUser(result.user), tokens: this.cookies.deliver(req, res, realm.id, result.tokens) };
  }

  @Public()
  @ApiOperation({ summary: 'WebAuthn challenge for an mfaToken (PublicKeyCredentialRequestOptionsJSON)' })
  @ApiOkResponse({ type: PublicKeyCredentialRequestOptionsView })
  @ApiErrors('INVALID_TOKEN', 'TOKEN_EXPIRED')
  @Post('webauthn/options')
  @HttpCode(200)
  async webauthnOptions(@Body() body: MfaTokenDto, @CurrentRealm() realm: Realm) {
    return this.startWebauthnMfa.execute({ realm, mfaToken: body.mfaToken });
  }

  @ApiBearerAuth()
  @ApiOperation({ summary: 'The caller’s second factors' })
  @ApiOkResponse({ type: MfaStatusResponse })
  @Get()
  async status(@CurrentRealm() realm: Realm, @CurrentPrincipal() principal: Principal, @Req() req: AppRequest) {
    return present.mfaStatus(await this.getStatus.execute(actor(realm, principal, req)));
  }

  @ApiBearerAuth()
  @ApiOperation({ summary: 'Start TOTP enrolment: a secret, pending until confirmed' })
  @ApiOkResponse({ type: TotpSetupResponse })
  @ApiErrors('INVALID_USER_STATE', 'FORBIDDEN')
  @Post('totp/setup')
  @HttpCode(200)
  async totpSetup(@CurrentRealm() realm: Realm, @CurrentPrincipal() principal: Principal, @Req() req: AppRequest) {
    const setup = await this.setupTotp.execute(actor(realm, principal, req));
    return { secret: setup.secret, otpauthUrl: setup.otpauthUrl, qrCode: setup.qrCode };
  }

  @ApiBearerAuth()
  @ApiOperation({ summary: 'Confirm TOTP with a current code; recovery codes when it is the first method' })
  @ApiOkResponse({ type: MfaEnabledResponse })
  @ApiErrors('INVALID_USER_STATE', 'FORBIDDEN')
  @Post('totp/confirm')
  @HttpCode(200)
  async totpConfirm(
    @Body() body: TotpConfirmDto,
    @CurrentRealm() realm: Realm,
    @CurrentPrincipal() principal: Principal,
    @Req() req: AppRequest,
  ) {
    const { user, recoveryCodes } = await this.confirmTotp.execute({ ...actor(realm, principal, req), code: body.code });
    return { mfa: present.mfa(user), ...(recoveryCodes ? { recoveryCodes } : {}) };
  }

  @ApiBearerAuth()
  @ApiOperation({ summary: 'Remove TOTP (password required)' })
  @ApiOkResponse({ type: MfaResponse })
  @ApiErrors('INVALID_CREDENTIALS', 'ACCOUNT_LOCKED', 'NOT_FOUND', 'FORBIDDEN')
  @Delete('totp')
  @HttpCode(200)
  async totpDelete(
    @Body() body: PasswordConfirmationDto,
    @CurrentRealm() realm: Realm,
    @CurrentPrincipal() principal: Principal,
    @Req() req: AppRequest,
  ) {
    const user = await this.disableTotp.execute({ ...actor(realm, principal, req), password: body.password });
    return { mfa: present.mfa(user) };
  }

  @ApiBearerAuth()
  @ApiOperation({ summary: 'WebAuthn registration options (PublicKeyCredentialCreationOptionsJSON)' })
  @ApiOkResponse({ type: PublicKeyCredentialCreationOptionsView })
  @ApiErrors('FORBIDDEN')
  @Post('webauthn/register/options')
  @HttpCode(200)
  async registerOptions(
    @Body() body: WebauthnRegisterOptionsDto,
    @CurrentRealm() realm: Realm,
    @CurrentPrincipal() principal: Principal,
    @Req() req: AppRequest,
  ) {
    return this.startRegistration.execute({ ...actor(realm, principal, req), name: body.name, passkey: body.passkey });
  }

  @ApiBearerAuth()
  @ApiOperation({ summary: 'Register a WebAuthn credential from the browser’s registration response' })
  @ApiOkResponse({ type: WebauthnRegisteredResponse })
  @ApiErrors('FORBIDDEN')
  @Post('webauthn/register/verify')
  @HttpCode(200)
  async registerVerify(
    @Body() body: WebauthnRegisterVerifyDto,
    @CurrentRealm() realm: Realm,
    @CurrentPrincipal() principal: Principal,
    @Req() req: AppRequest,
  ) {
    const result = await this.finishRegistration.execute({ ...actor(realm, principal, req), response: body.response, name: body.name });
    return {
      credential: present.webauthnCredentialCreated(result.credential),
      mfa: present.mfa(result.user),
      ...(result.recoveryCodes ? { recoveryCodes: result.recoveryCodes } : {}),
    };
  }

  @ApiBearerAuth()
  @ApiOperation({ summary: 'Remove a WebAuthn credential (password required)' })
  @ApiOkResponse({ type: MfaResponse })
  @ApiErrors('INVALID_CREDENTIALS', 'ACCOUNT_LOCKED', 'NOT_FOUND', 'INVALID_USER_STATE', 'FORBIDDEN')
  @Delete('webauthn/:credentialId')
  @HttpCode(200)
  async webauthnDelete(
    @Param('credentialId') credentialId: string,
    @Body() body: PasswordConfirmationDto,
    @CurrentRealm() realm: Realm,
    @CurrentPrincipal() principal: Principal,
    @Req() req: AppRequest,
  ) {
    const user = await this.removeCredential.execute({ ...actor(realm, principal, req), credentialId, password: body.password });
    return { mfa: present.mfa(user) };
  }

  @ApiBearerAuth()
  @ApiOperation({ summary: 'New recovery codes (password required); the old ones stop working' })
  @ApiOkResponse({ type: RecoveryCodesResponse })
  @ApiErrors('INVALID_CREDENTIALS', 'ACCOUNT_LOCKED', 'INVALID_USER_STATE', 'FORBIDDEN')
  @Post('recovery-codes')
  @HttpCode(200)
  async recoveryCodes(
    @Body() body: PasswordConfirmationDto,
    @CurrentRealm() realm: Realm,
    @CurrentPrincipal() principal: Principal,
    @Req() req: AppRequest,
  ) {
    return { recoveryCodes: await this.regenerateCodes.execute({ ...actor(realm, principal, req), password: body.password }) };
  }
}
