import { createHmac } from 'node:crypto';
import { ResolvedAddress } from '../../application/ports/host-resolver';
import { pinnedExchange } from '../outbound/outbound-connector';

/** Bytes of a receiver's answer read (and discarded) before the connection is closed. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * The Standard Webhooks signature of one attempt: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`
 * keyed with the secret's bytes (the base64 after `whsec_`), one per secret, space-separated.
 */
export function webhookSignature(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
    })
    .join(' ');
}

export interface WebhookRequest {
  url: string;
  /** The address that was checked; the connection goes there and nowhere else. */
  target: ResolvedAddress;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

/**
 * POSTs a webhook and resolves with the answer's status (redirects are answers, not followed);
 * rejects on a network error or when the exchange takes longer than `timeoutMs`. The socket
 * connects to `target`, the address that was checked, through the outbound connector's
 * `pinnedExchange`, as every request to an address others chose does.
 */
export async function postWebhook(request: WebhookRequest): Promise<number> {
  const answer = await pinnedExchange(request.url, request.target, {
    method: 'POST',
    headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
    body: request.body,
    timeoutMs: request.timeoutMs,
    read: { status: MAX_RESPONSE_BYTES },
  });
  return answer.status;
}
