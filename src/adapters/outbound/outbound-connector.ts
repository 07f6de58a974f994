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
   * A `fetch` whose every request goes through `check` and `pinnedExchange` (to the checked
   * address, a redirect answered with the redirect itself, at most 1 MiB read, failing when the
   * whole exchange — the name's lookup included — takes longer than `timeoutMs`).
   */
  fetcher(policy: OutboundPolicy & { timeoutMs: number }): (input: string | URL, init?: RequestInit) => Promise<Response> {
    const send = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
      const { url, target } = await this.check(String(input), policy);
      const method = init.method ?? 'GET';
      const answer = await pinnedExchange(url, target, {
        method,
        headers: Object.fromEntries(new Headers(init.headers).entries()),
        body: init.body == null ? undefined : Buffer.from(await new Response(init.body).arrayBuffer()),
        timeoutMs: policy.timeoutMs,
        signal: init.signal,
        read: MAX_RESPONSE_BYTES,
      });
      const headers = new Headers();
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      }
      const empty = answer.status === 204 || answer.status === 304 || method === 'HEAD';
      return new Response(empty ? null : answer.body, { status: answer.status, headers });
    };
    return (input, init) => withinTimeout(send(input, init), policy.timeoutMs);
  }
}

/** `work`, or a failure once `ms` have passed: the system's name lookup has no deadline of its own. */
function withinTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** What `pinnedExchange` sends. */
export interface PinnedExchangeRequest {
  method: string;
  headers: Record<string, string>;
  body?: Buffer | string;
  /** The whole exchange fails after this long. */
  timeoutMs: number;
  signal?: AbortSignal | null;
  /**
   * A number: the body is read, and an answer longer than that fails the exchange. `{status: n}`:
   * only the status matters — the exchange settles when it arrives, and the body (at most n
   * bytes of it) is read and dropped.
   */
  read: number | { status: number };
}

/** What `pinnedExchange` received: the status, the headers, and the body when it was read. */
export interface PinnedExchangeAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer<ArrayBuffer> | null;
}

/**
 * One request to `url` over a connection to `target` (`pinnedRequest`) — the single way out for
 * webhook deliveries and identity-provider requests alike. A redirect is an answer like any
 * other, never followed.
 */
export function pinnedExchange(url: string, target: ResolvedAddress, request: PinnedExchangeRequest): Promise<PinnedExchangeAnswer> {
  return new Promise<PinnedExchangeAnswer>((resolve, reject) => {
    let done = false;
    const settle = (finish: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      finish();
    };
    const req = pinnedRequest(url, target, { method: request.method, headers: request.headers }, (res) => {
      const status = res.statusCode ?? 502;
      let read = 0;
      if (typeof request.read !== 'number') {
        const limit = request.read.status;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > limit) res.destroy();
        });
        res.on('error', () => undefined);
        settle(() => resolve({ status, headers: res.headers, body: null }));
        return;
      }
      const limit = request.read;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > limit) req.destroy(new Error(`answer larger than ${limit} bytes`));
        else chunks.push(chunk);
      });
      res.on('error', (error) => settle(() => reject(error)));
      res.on('end', () => settle(() => resolve({ status, headers: res.headers, body: Buffer.concat(chunks) })));
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${request.timeoutMs} ms`)), request.timeoutMs);
    request.signal?.addEventListener('abort', () => req.destroy(new Error('aborted')));
    req.on('error', (error) => settle(() => reject(error)));
    req.end(request.body);
  });
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
