import { Injectable } from '@nestjs/common';
import { ReadinessCheck, ReadinessProbe } from '../../application/ports/readiness-probe';
import { RateLimitStorage } from './rate-limit-storage';

/**
 * Where rate-limit counters live. Not critical: without Redis the instance still limits, in
 * memory, so it stays ready — but the operator sees the limits are no longer shared.
 */
@Injectable()
export class RateLimitStorageProbe implements ReadinessProbe {
  constructor(private readonly storage: RateLimitStorage) {}

  check(): Promise<ReadinessCheck[]> {
    const { backend, degraded } = this.storage.state();
    const detail = degraded ? 'memory (redis unreachable)' : backend;
    return Promise.resolve([{ name: 'rateLimits', ok: !degraded, detail, critical: false }]);
  }
}
