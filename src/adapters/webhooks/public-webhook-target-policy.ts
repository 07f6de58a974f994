import { isIP } from 'node:net';
import { Injectable } from '@nestjs/common';
import { HostResolver, ResolvedAddress } from '../../application/ports/host-resolver';
import { WebhookTargetPolicy } from '../../application/ports/webhook-target-policy';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { normaliseWebhookUrl } from '../../domain/webhook/webhook';
import { isPublicAddress } from './public-address';

/**
 * Webhooks reach public addresses only (unless WEBHOOK_ALLOW_PRIVATE_NETWORKS): the URL is
 * parsed by the WHATWG parser (which turns `http://2130706433/` or `http://0x7f.1/` into
 * 127.0.0.1), its host resolved once, and every address it resolves to must be public; the
 * first is the one to connect to.
 */
@Injectable()
export class PublicWebhookTargetPolicy implements WebhookTargetPolicy {
  constructor(
    private readonly resolver: HostResolver,
    private readonly config: AppConfig,
  ) {}

  async check(url: string): Promise<ResolvedAddress> {
    const host = new URL(normaliseWebhookUrl(url, this.config.webhookAllowHttp)).hostname.replace(/^\[(.*)\]$/, '$1');
    const literal = isIP(host);
    let addresses: ResolvedAddress[];
    if (literal) {
      addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
    } else {
      try {
        addresses = await this.resolver.resolve(host);
      } catch {
        throw DomainError.validation('url', `host ${host} does not resolve`);
      }
      if (addresses.length === 0) throw DomainError.validation('url', `host ${host} does not resolve`);
    }
    if (!this.config.webhookAllowPrivateNetworks) {
      const refused = addresses.find((a) => !isPublicAddress(a.address));
      if (refused) throw DomainError.validation('url', `must resolve to public addresses only; ${refused.address} is not public`);
    }
    return addresses[0];
  }
}
