import { Module } from '@nestjs/common';
import { RefreshCookies } from '../adapters/http/refresh-cookies';

/** How tokens travel and are held: the refresh-token cookie for browser apps. */
@Module({
  providers: [RefreshCookies],
  exports: [RefreshCookies],
})
export class TokenTransportModule {}
