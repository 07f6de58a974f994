import { Module } from '@nestjs/common';
import { DeferredWork } from '../adapters/http/deferred-work';

/** The one queue of work that requests start without waiting for: shutdown waits for all of it. */
@Module({
  providers: [DeferredWork],
  exports: [DeferredWork],
})
export class DeferredWorkModule {}
