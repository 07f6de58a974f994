import { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Injectable } from '@nestjs/common';
import { HostResolver, ResolvedAddress } from '../../application/ports/host-resolver';
import { DomainError } from '../../domain/errors';
import { normaliseOutboundUrl } from '../../domain/outbound-url';
import { isPublicAddress } from './public-address';

/** What a caller (webhooks, identity providers) allows its outgoing requests. */
export interface OutboundPolicy {
  /** `http:` besides `https:` (development and tests). */
  allowHttp: boolean;
  /** Loopback, private, link-local … addresses (development and tests). */
  allowPrivateNetworks: boolean;
  /** The request field a refused URL is reported on (`url`, `issuer`). */
  field: string;
}

/** Bytes of an answer read before the request is abandoned. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * The one way out of the service to addresses that others choose (webhook receivers, identity
 * providers), against server-side request forgery: the URL is parsed by the WHATWG parser (which
 * turns `http://2130706433/` or `http://0x7f.1/` into 127.0.0.1), its host resolved once, every
 * address it resolves to must be public, and the connection goes to the address that was checked
 * (no second lookup a rebinding DNS server could answer differently). Redirects are answers,
 * never followed.
 */
@Injectable()
export class OutboundConnector {
  constructor(private readonly resolver: HostResolver) {}

  /**
   * The normalised URL and the address to connect to.
   * @throws DomainError VALIDATION_FAILED (on `policy.field`) for a URL or an address that is refused
   */
  async check(raw: string, policy: OutboundPolicy): Promise<{ url: string; target: ResolvedAddress }> {
    const url = normaliseOutboundUrl(raw, policy.allowHttp, policy.field);
    const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
    const literal = isIP(host);
    let addresses: ResolvedAddress[];
    if (literal) {
      addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
    } else {
      try {
        addresses = await this.resolver.resolve(host);
      } catch {
        throw DomainError.validation(policy.field, `host ${host} does not resolve`);
      }
      if (addresses.length === 0) throw DomainError.validation(policy.field, `host ${host} does not resolve`);
    }
    if (!policy.allowPrivateNetworks) {
      const refused = addresses.find((a) => !isPublicAddress(a.address));
      if (refused) throw DomainError.validation(policy.field, `must resolve to public addresses only; ${refused.address} is not public`);
    }
    return { url, target: addresses[0] };
  }

  /**
   * A `fetch` whose every request goes through `check` and to the checked address, answers a
   * redirect with the redirect itself, reads at most 1 MiB and fails when the whole exchange
   * takes longer than `timeoutMs`.
   */
  fetcher(policy: OutboundPolicy & { timeoutMs: number }): (input: string | URL, init?: RequestInit) => Promise<Response> {
    return async (input, init = {}) => {
      const { url, target } = await this.check(String(input), policy);
      const headers = Object.fromEntries(new Headers(init.headers).entries());
      const body = init.body == null ? undefined : Buffer.from(await new Response(init.body).arrayBuffer());
      return new Promise<Response>((resolve, reject) => {
        const req = pinnedRequest(url, target, { method: init.method ?? 'GET', headers }, (res) => {
          const chunks: Buffer[] = [];
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_RESPONSE_BYTES) req.destroy(new Error(`answer larger than ${MAX_RESPONSE_BYTES} bytes`));
            else chunks.push(chunk);
          });
          res.on('error', (error) => settle(() => reject(error)));
          res.on('end', () => {
            const status = res.statusCode ?? 502;
            const answer = new Headers();
            for (const [name, value] of Object.entries(res.headers)) {
              if (value !== undefined) answer.set(name, Array.isArray(value) ? value.join(', ') : value);
            }
            const empty = status === 204 || status === 304 || (init.method ?? 'GET') === 'HEAD';
            settle(() => resolve(new Response(empty ? null : Buffer.concat(chunks), { status, headers: answer })));
          });
        });
        const timer = setTimeout(() => req.destroy(new Error(`no answer within ${policy.timeoutMs} ms`)), policy.timeoutMs);
        let done = false;
        const settle = (finish: () => void) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          finish();
        };
        init.signal?.addEventListener('abort', () => req.destroy(new Error('aborted')));
        req.on('error', (error) => settle(() => reject(error)));
        req.end(body);
      });
    };
  }
}

/**
 * An http(s) request to `url` whose socket connects to `target` whatever DNS says now (a `lookup`
 * that answers with it), while the Host header and TLS server name stay the URL's host, so
 * certificates are still checked.
 */
export function pinnedRequest(
  url: string,
  target: ResolvedAddress,
  options: http.RequestOptions,
  onResponse: (res: http.IncomingMessage) => void,
): http.ClientRequest {
  const parsed = new URL(url);
  const client = parsed.protocol === 'https:' ? https : http;
  const { address, family } = target;
  return client.request(
    parsed,
    {
      ...options,
      agent: false,
      lookup: (_hostname: string, lookupOptions: { all?: boolean }, callback: (...args: unknown[]) => void) => {
        if (lookupOptions?.all) callback(null, [{ address, family } satisfies LookupAddress]);
        else callback(null, address, family);
      },
    } as http.RequestOptions,
    onResponse,
  );
}
