import { lookup } from 'node:dns/promises';
import { Injectable } from '@nestjs/common';
import { HostResolver, ResolvedAddress } from '../../application/ports/host-resolver';

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), every address it returns. */
@Injectable()
export class DnsHostResolver implements HostResolver {
  async resolve(hostname: string): Promise<ResolvedAddress[]> {
    const found = await lookup(hostname, { all: true, verbatim: true });
    if (found.length === 0) throw new Error(`${hostname} resolves to no address`);
    return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
  }
}
