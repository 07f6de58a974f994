import { Module } from '@nestjs/common';
import { DeleteHookUseCase } from '../application/hooks/delete-hook.use-case';
import { ListHooksUseCase } from '../application/hooks/list-hooks.use-case';
import { PutHookUseCase } from '../application/hooks/put-hook.use-case';
import { RotateHookSecretUseCase } from '../application/hooks/rotate-hook-secret.use-case';
import { HookRepository } from '../application/ports/hook.repository';
import { SignInHooks } from '../application/ports/sign-in-hooks';
import { HttpSignInHooks } from '../adapters/hooks/http-sign-in-hooks';
import { AdminHooksController } from '../adapters/http/controllers/admin-hooks.controller';
import { TypeOrmHookRepository } from '../adapters/persistence/typeorm-hook.repository';
import { WebhooksModule } from './webhooks.module';

/**
 * Hooks: the realm's backend decides at sign-up and sign-in and adds claims to access tokens.
 * The admin routes and their table, and `SignInHooks` bound to the signed HTTP calls (the address
 * rule is the webhooks'). A team that decides in-process binds its own `SignInHooks` here instead
 * (docs/extending.md).
 */
@Module({
  imports: [WebhooksModule],
  controllers: [AdminHooksController],
  providers: [
    TypeOrmHookRepository,
    { provide: HookRepository, useExisting: TypeOrmHookRepository },
    HttpSignInHooks,
    { provide: SignInHooks, useExisting: HttpSignInHooks },
    ListHooksUseCase,
    PutHookUseCase,
    DeleteHookUseCase,
    RotateHookSecretUseCase,
  ],
  exports: [SignInHooks],
})
export class HooksModule {}
