import { Injectable } from '@nestjs/common';
import { ResolvedAddress } from '../../application/ports/host-resolver';
import { WebhookTargetPolicy } from '../../application/ports/webhook-target-policy';
import { AppConfig } from '../../config/app-config';
import { OutboundConnector } from '../outbound/outbound-connector';

/** Webhooks reach public addresses only (unless WEBHOOK_ALLOW_PRIVATE_NETWORKS), through the outbound connector. */
@Injectable()
export class PublicWebhookTargetPolicy implements WebhookTargetPolicy {
  constructor(
    private readonly connector: OutboundConnector,
    private readonly config: AppConfig,
  ) {}

  async check(url: string, field = 'url'): Promise<ResolvedAddress> {
    const policy = { allowHttp: this.config.webhookAllowHttp, allowPrivateNetworks: this.config.webhookAllowPrivateNetworks, field };
    return (await this.connector.check(url, policy)).target;
  }
}
