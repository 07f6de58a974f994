import { Global, Module } from '@nestjs/common';
import { DpopBinding } from '../application/sign-in/dpop-binding';
import { DpopProofVerifier } from '../application/ports/dpop-proof-verifier';
import { DpopReplayStore } from '../application/ports/dpop-replay-store';
import { NodeDpopProofVerifier } from '../adapters/crypto/node-dpop-proof-verifier';
import { MemoryDpopReplayStore } from '../adapters/dpop/memory-dpop-replay-store';
import { RedisDpopReplayStore } from '../adapters/dpop/redis-dpop-replay-store';
import { RefreshCookies } from '../adapters/http/refresh-cookies';
import { SignInResponses } from '../adapters/http/sign-in-responses';
import { AppConfig } from '../config/app-config';

/**
 * How tokens travel and whom they work for: the answer of every sign-in, the refresh-token cookie for browser apps, and
 * DPoP sender-constrained sessions (proof checks, the replay store, binding).
 */
@Global()
@Module({
  providers: [
    RefreshCookies,
    SignInResponses,
    DpopBinding,
    { provide: DpopProofVerifier, useClass: NodeDpopProofVerifier },
    {
      provide: DpopReplayStore,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => (config.redisUrl ? new RedisDpopReplayStore(config) : new MemoryDpopReplayStore()),
    },
  ],
  exports: [RefreshCookies, SignInResponses, DpopBinding],
})
export class TokenTransportModule {}
