import { ResolvedAddress } from './host-resolver';

/**
 * Where webhooks — and the other calls out to addresses administrators choose (a client's
 * back-channel logout URI and JWKS) — may send: the rule against server-side request forgery.
 */
export abstract class WebhookTargetPolicy {
  /**
   * Resolves the URL's host and checks every address it resolves to; returns the address to
   * connect to, so the connection goes exactly where the check looked (no second lookup a
   * rebinding DNS server could answer differently).
   * @throws DomainError VALIDATION_FAILED (on `field`, `url` by default) for a URL or an address that is refused
   */
  abstract check(url: string, field?: string): Promise<ResolvedAddress>;
}
