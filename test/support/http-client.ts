import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from './test-app';

/**
 * Plain HTTP against a listening app, from a chosen source address. Linux routes all of 127/8 to
 * the loopback interface, so `from: '127.0.3.7'` is a distinct client IP without any proxy header.
 */
export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface SendOptions {
  /** Source address of the connection (the client IP the app sees without TRUST_PROXY). */
  from?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Makes the app listen on 127.0.0.1 and an ephemeral port; returns its base URL. */
export async function listenOnLoopback(t: TestApp): Promise<string> {
  await t.app.listen(0, '127.0.0.1');
  const { port } = t.http.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

export function send(baseUrl: string, method: string, path: string, options: SendOptions = {}): Promise<HttpResult> {
  const url = new URL(path, baseUrl);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = http.request(
      // A connection of its own (no agent), so the source address applies to this request.
      {
        hostname: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers,
        localAddress: options.from,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

let allocated = 0;

/** A loopback address no earlier call returned (127.0.0.1 excluded): a new client for rate limits. */
export function freshIp(): string {
  allocated += 1;
  return `127.${10 + Math.floor(allocated / 62500)}.${Math.floor(allocated / 250) % 250}.${(allocated % 250) + 1}`;
}
