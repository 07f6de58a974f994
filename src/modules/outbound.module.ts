import { Global, Module } from '@nestjs/common';
import { HostResolver } from '../application/ports/host-resolver';
import { DnsHostResolver } from '../adapters/outbound/dns-host-resolver';
import { OutboundConnector } from '../adapters/outbound/outbound-connector';

/** The one way out to addresses others choose (webhook receivers, identity providers): resolver and SSRF-checking connector. */
@Global()
@Module({
  providers: [{ provide: HostResolver, useClass: DnsHostResolver }, OutboundConnector],
  exports: [HostResolver, OutboundConnector],
})
export class OutboundModule {}
