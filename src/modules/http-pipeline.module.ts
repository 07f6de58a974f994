import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { AdminRoutesCheck } from '../adapters/http/admin-routes';
import { AllExceptionsFilter } from '../adapters/http/errors/all-exceptions.filter';
import { AccessTokenGuard } from '../adapters/http/guards/access-token.guard';
import { AdminGuard } from '../adapters/http/guards/admin.guard';
import { RateLimitGuard } from '../adapters/http/guards/rate-limit.guard';
import { RealmGuard } from '../adapters/http/guards/realm.guard';
import { AdminModule } from './admin.module';
import { AuthModule } from './auth.module';
import { RateLimitModule } from './rate-limit.module';

/**
 * What every route passes through. The guards run in the order listed: realm, then access token,
 * then rate limit, then admin (@AdminAction only); one filter renders every error. The app does
 * not start while an admin route lacks its admin action.
 */
@Module({
  imports: [AuthModule, AdminModule, RateLimitModule],
  providers: [
    { provide: APP_GUARD, useClass: RealmGuard },
    { provide: APP_GUARD, useClass: AccessTokenGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
    { provide: APP_GUARD, useClass: AdminGuard },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
    AdminRoutesCheck,
  ],
})
export class HttpPipelineModule {}
