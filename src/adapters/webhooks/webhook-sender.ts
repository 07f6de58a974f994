import { createHmac } from 'node:crypto';
import { ResolvedAddress } from '../../application/ports/host-resolver';
import { pinnedRequest } from '../outbound/outbound-connector';

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
 * rejects on a network error or when the whole exchange takes longer than `timeoutMs`. The
 * socket connects to `target`, the address that was checked (`pinnedRequest`).
 */
export function postWebhook(request: WebhookRequest): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const req = pinnedRequest(
      request.url,
      request.target,
      { method: 'POST', headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) } },
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on('error', () => undefined);
        res.on('close', () => undefined);
        finish(() => resolve(res.statusCode ?? 0));
        res.resume();
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${request.timeoutMs} ms`));
    }, request.timeoutMs);
    let done = false;
    const finish = (settle: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      settle();
    };
    req.on('error', (error) => finish(() => reject(error)));
    req.end(request.body);
  });
}
