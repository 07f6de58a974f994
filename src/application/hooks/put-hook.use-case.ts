import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Hook, HookFailurePolicy } from '../../domain/hook/hook';
import { webhookSecretFrom } from '../../domain/webhook/webhook';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { HookRepository } from '../ports/hook.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { Transaction } from '../ports/transaction';
import { WebhookTargetPolicy } from '../ports/webhook-target-policy';
import { acceptableUrl } from '../webhooks/webhook-admin';
import { hookNamed } from './hook-admin';

export interface PutHookInput {
  actor: AdminActor;
  realmId: string;
  name: string;
  url: string;
  enabled?: boolean;
  timeoutMs?: number;
  failure?: HookFailurePolicy;
}

@Injectable()
export class PutHookUseCase {
  constructor(
    private readonly hooks: HookRepository,
    private readonly policy: WebhookTargetPolicy,
    private readonly tokens: SecureTokens,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * Creates the realm's hook of that name with a new signing secret (returned this once), or
   * replaces an existing one's configuration (what is left out takes its default; the secret
   * stays). The URL follows the webhooks' address rules.
   * @throws DomainError NOT_FOUND (not a hook's name) | VALIDATION_FAILED
   */
  async execute(input: PutHookInput): Promise<{ hook: Hook; secret: string | null }> {
    const name = hookNamed(input.name);
    const url = await acceptableUrl(this.policy, this.config, input.url);
    const settings = { url, enabled: input.enabled, timeoutMs: input.timeoutMs, failure: input.failure };
    const now = this.clock.now();
    return this.tx.run(async () => {
      const existing = await this.hooks.findForUpdate(input.realmId, name);
      let secret: string | null = null;
      let hook: Hook;
      if (existing) {
        existing.replace(settings, now);
        hook = existing;
      } else {
        secret = webhookSecretFrom(this.tokens.generate());
        hook = Hook.create({ realmId: input.realmId, name, settings, secret, now });
      }
      await this.hooks.save(hook);
      await this.audit.record({
        type: 'hook.updated',
        realmId: input.realmId,
        actorId: input.actor.id,
        ip: input.actor.ip,
        at: now,
        details: {
          name,
          created: !existing,
          host: new URL(url).host,
          enabled: hook.enabled,
          timeoutMs: hook.timeoutMs,
          failure: hook.failure,
        },
      });
      return { hook, secret };
    });
  }
}
