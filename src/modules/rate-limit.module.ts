import { Module } from '@nestjs/common';
import { getOptionsToken, getStorageToken } from '@nestjs/throttler';
import { throttlerOptions } from '../adapters/http/guards/rate-limit.guard';
import { RateLimitStorage } from '../adapters/rate-limit/rate-limit-storage';
import { RateLimitStorageProbe } from '../adapters/rate-limit/rate-limit-storage.probe';
import { AppConfig } from '../config/app-config';

/** Rate limits: @nestjs/throttler's options and storage (memory, or Redis when configured). */
@Module({
  providers: [
    RateLimitStorage,
    RateLimitStorageProbe,
    { provide: getStorageToken(), useExisting: RateLimitStorage },
    { provide: getOptionsToken(), inject: [AppConfig], useFactory: throttlerOptions },
  ],
  exports: [getStorageToken(), getOptionsToken(), RateLimitStorageProbe],
})
export class RateLimitModule {}
