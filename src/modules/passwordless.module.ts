import { Module } from '@nestjs/common';
import { PasskeySignInUseCase, StartPasskeySignInUseCase } from '../application/auth/passkey-sign-in.use-case';
import { EmailCodeSignInUseCase } from '../application/auth/email-code-sign-in.use-case';
import { RequestEmailCodeUseCase } from '../application/auth/request-email-code.use-case';
import { ReturnUrls } from '../application/account/return-urls';
import { EmailCodeController } from '../adapters/http/controllers/email-code.controller';
import { PasskeysController } from '../adapters/http/controllers/passkeys.controller';
import { AuthModule } from './auth.module';
import { DeferredWorkModule } from './deferred-work.module';
import { MfaModule } from './mfa.module';

/** Signing in without a password: passkeys, and codes and links sent by email. */
@Module({
  imports: [AuthModule, MfaModule, DeferredWorkModule],
  controllers: [PasskeysController, EmailCodeController],
  providers: [StartPasskeySignInUseCase, PasskeySignInUseCase, ReturnUrls, RequestEmailCodeUseCase, EmailCodeSignInUseCase],
  exports: [RequestEmailCodeUseCase, EmailCodeSignInUseCase],
})
export class PasswordlessModule {}
