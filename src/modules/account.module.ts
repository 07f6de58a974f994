import { Module } from '@nestjs/common';
import { ChangePasswordUseCase } from '../application/auth/change-password.use-case';
import { VerifyEmailUseCase } from '../application/auth/verify-email.use-case';
import { ResendVerificationUseCase } from '../application/auth/resend-verification.use-case';
import { ForgotPasswordUseCase } from '../application/auth/forgot-password.use-case';
import { ResetPasswordUseCase } from '../application/auth/reset-password.use-case';
import { ListOwnSessionsUseCase } from '../application/auth/list-own-sessions.use-case';
import { RevokeOtherSessionsUseCase } from '../application/auth/revoke-other-sessions.use-case';
import { RevokeOwnSessionUseCase } from '../application/auth/revoke-own-session.use-case';
import { AccountController } from '../adapters/http/controllers/account.controller';
import { SessionsController } from '../adapters/http/controllers/sessions.controller';
import { AuthModule } from './auth.module';
import { DeferredWorkModule } from './deferred-work.module';

/** Self-service: email verification, password recovery and change, one's own sessions. */
@Module({
  imports: [AuthModule, DeferredWorkModule],
  controllers: [AccountController, SessionsController],
  providers: [
    VerifyEmailUseCase,
    ResendVerificationUseCase,
    ForgotPasswordUseCase,
    ResetPasswordUseCase,
    ChangePasswordUseCase,
    ListOwnSessionsUseCase,
    RevokeOwnSessionUseCase,
    RevokeOtherSessionsUseCase,
  ],
})
export class AccountModule {}
