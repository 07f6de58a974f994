import { AuditEventType } from '../audit/audit-event';
import { DomainError } from '../errors';

/** Subscribes to every event type. */
export const ALL_EVENTS = '*';

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';
export const WEBHOOK_DELIVERY_STATUSES: WebhookDeliveryStatus[] = ['pending', 'delivered', 'failed'];

export interface WebhookState {
  id: string;
  realmId: string;
  url: string;
  /** Audit event types, or `["*"]`. */
  events: string[];
  description: string | null;
  enabled: boolean;
  /** `whsec_` + base64 of 32 random bytes; kept encrypted at rest. */
  secret: string;
  /** The secret before the last rotation, signing beside the current one until `previousSecretExpiresAt`. */
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WebhookChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
}

/** `whsec_` + standard base64 of the 32 random bytes given as base64url (`SecureTokens.generate`). */
export function webhookSecretFrom(random256Base64url: string): string {
  const base64 = random256Base64url.replace(/-/g, '+').replace(/_/g, '/');
  return `whsec_${base64}${'='.repeat((4 - (base64.length % 4)) % 4)}`;
}

/**
 * The subscribed event list: non-empty, each a known type, or `["*"]` alone; duplicates dropped.
 * @throws DomainError VALIDATION_FAILED
 */
export function normaliseEvents(events: readonly string[], known: readonly AuditEventType[]): string[] {
  if (events.length === 0) throw DomainError.validation('events', 'must list at least one event type, or "*"');
  if (events.includes(ALL_EVENTS)) {
    if (events.some((e) => e !== ALL_EVENTS)) throw DomainError.validation('events', '"*" subscribes to everything and stands alone');
    return [ALL_EVENTS];
  }
  const unknown = events.filter((e) => !known.includes(e as AuditEventType));
  if (unknown.length) throw DomainError.validation('events', `unknown event type ${JSON.stringify(unknown[0])}`);
  return [...new Set(events)];
}

/** An endpoint of a realm's backend that receives the realm's events, signed. */
export class Webhook {
  private constructor(private state: WebhookState) {}

  static create(input: Omit<WebhookState, 'enabled' | 'previousSecret' | 'previousSecretExpiresAt' | 'updatedAt'>): Webhook {
    return new Webhook({ ...input, enabled: true, previousSecret: null, previousSecretExpiresAt: null, updatedAt: input.createdAt });
  }

  static restore(state: WebhookState): Webhook {
    return new Webhook({ ...state, events: [...state.events] });
  }

  get id(): string {
    return this.state.id;
  }
  get realmId(): string {
    return this.state.realmId;
  }
  get url(): string {
    return this.state.url;
  }
  get events(): string[] {
    return [...this.state.events];
  }
  get enabled(): boolean {
    return this.state.enabled;
  }
  get secret(): string {
    return this.state.secret;
  }

  /** Whether events of `type` are sent to it (while enabled). */
  subscribes(type: string): boolean {
    return this.state.events.includes(ALL_EVENTS) || this.state.events.includes(type);
  }

  /** Applies the given fields; returns the names of those that changed. */
  update(changes: WebhookChanges, now: Date): string[] {
    const changed: string[] = [];
    const next = { ...this.state };
    if (changes.url !== undefined && changes.url !== next.url) {
      next.url = changes.url;
      changed.push('url');
    }
    if (changes.events !== undefined && changes.events.join(',') !== next.events.join(',')) {
      next.events = [...changes.events];
      changed.push('events');
    }
    if (changes.description !== undefined && changes.description !== next.description) {
      next.description = changes.description;
      changed.push('description');
    }
    if (changes.enabled !== undefined && changes.enabled !== next.enabled) {
      next.enabled = changes.enabled;
      changed.push('enabled');
    }
    if (changed.length) this.state = { ...next, updatedAt: now };
    return changed;
  }

  /** A receiver answered 410 Gone: no more deliveries until an administrator enables it again. */
  disable(now: Date): void {
    this.state = { ...this.state, enabled: false, updatedAt: now };
  }

  /** A new secret; the current one keeps signing beside it for `overlapSeconds`. */
  rotate(secret: string, now: Date, overlapSeconds: number): void {
    this.state = {
      ...this.state,
      secret,
      previousSecret: overlapSeconds > 0 ? this.state.secret : null,
      previousSecretExpiresAt: overlapSeconds > 0 ? new Date(now.getTime() + overlapSeconds * 1000) : null,
      updatedAt: now,
    };
  }

  /** The secrets that sign a delivery attempted at `now`: the current one, then the previous during its overlap. */
  signingSecrets(now: Date): string[] {
    const { secret, previousSecret, previousSecretExpiresAt } = this.state;
    return previousSecret && previousSecretExpiresAt && previousSecretExpiresAt > now ? [secret, previousSecret] : [secret];
  }

  snapshot(): WebhookState {
    return { ...this.state, events: [...this.state.events] };
  }
}

/** One event on its way to one webhook; `id` is the `webhook-id` every attempt carries. */
export interface WebhookDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  type: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
}
