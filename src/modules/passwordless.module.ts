import { Module } from '@nestjs/common';
import { PasskeySignInUseCase, StartPasskeySignInUseCase } from '../application/auth/passkey-sign-in.use-case';
import { PasskeysController } from '../adapters/http/controllers/passkeys.controller';
import { AuthModule } from './auth.module';
import { MfaModule } from './mfa.module';

/** Signing in without a password: passkeys, and codes and links sent by email. */
@Module({
  imports: [AuthModule, MfaModule],
  controllers: [PasskeysController],
  providers: [StartPasskeySignInUseCase, PasskeySignInUseCase],
})
export class PasswordlessModule {}
