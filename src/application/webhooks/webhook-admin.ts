import { AppConfig } from '../../config/app-config';
import { AUDIT_EVENT_TYPES } from '../../domain/audit/audit-event';
import { DomainError } from '../../domain/errors';
import { normaliseOutboundUrl } from '../../domain/outbound-url';
import { normaliseEvents, Webhook } from '../../domain/webhook/webhook';
import { WebhookRepository } from '../ports/webhook.repository';
import { WebhookTargetPolicy } from '../ports/webhook-target-policy';

/**
 * The webhook `id` of the administered realm.
 * @throws DomainError WEBHOOK_NOT_FOUND for an unknown id or one of another realm
 */
export async function findWebhook(webhooks: WebhookRepository, realmId: string, id: string): Promise<Webhook> {
  const webhook = await webhooks.findById(realmId, id);
  if (!webhook) throw new DomainError('WEBHOOK_NOT_FOUND', 'Webhook not found');
  return webhook;
}

/**
 * `findWebhook` for a change, inside a transaction: the row stays locked until it ends.
 * @throws DomainError WEBHOOK_NOT_FOUND
 */
export async function lockWebhook(webhooks: WebhookRepository, realmId: string, id: string): Promise<Webhook> {
  const webhook = await webhooks.findByIdForUpdate(realmId, id);
  if (!webhook) throw new DomainError('WEBHOOK_NOT_FOUND', 'Webhook not found');
  return webhook;
}

/**
 * A URL as it will be stored, once its form and every address its host resolves to pass the
 * webhooks' address rules, which every call out to an address an administrator
 * chooses follows (a client's back-channel logout URI and JWKS too): refusals name `field`.
 * @throws DomainError VALIDATION_FAILED
 */
export async function acceptableUrl(policy: WebhookTargetPolicy, config: AppConfig, url: string, field = 'url'): Promise<string> {
  const normalised = normaliseOutboundUrl(url, config.webhookAllowHttp, field);
  await policy.check(normalised, field);
  return normalised;
}

/**
 * @throws DomainError VALIDATION_FAILED for an empty list or an unknown type
 */
export function acceptableEvents(events: readonly string[]): string[] {
  return normaliseEvents(events, AUDIT_EVENT_TYPES);
}

/**
 * @throws DomainError VALIDATION_FAILED for a description over 500 characters or with control characters
 */
export function acceptableDescription(description: string | null | undefined): string | null {
  if (description === undefined || description === null) return null;
  const trimmed = description.trim();
  if (trimmed.length > 500) throw DomainError.validation('description', 'must be at most 500 characters');
  if (/\p{Cc}/u.test(trimmed)) throw DomainError.validation('description', 'must not contain control characters');
  return trimmed || null;
}
