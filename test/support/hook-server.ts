import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One call as the hook endpoint saw it. */
export interface HookCall {
  type: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  payload: { type: string; timestamp: string; realmId: string; data: Record<string, unknown> };
  /** The signature verified with `standardwebhooks` and the endpoint's secret. */
  verified: boolean;
}

/** What the endpoint answers: a status, a body (an object is sent as JSON) and how long it waits first. */
export interface HookReply {
  status?: number;
  body?: unknown;
  delayMs?: number;
  headers?: Record<string, string>;
}

/**
 * A backend's hook endpoint on 127.0.0.1, as a team would write it: each call verified with the
 * reference Standard Webhooks library, answered as `reply` says (200 `{"decision": "allow"}` by
 * default).
 */
export class HookServer {
  readonly calls: HookCall[] = [];
  secret = '';
  reply: (call: HookCall) => HookReply = () => ({ body: { decision: 'allow' } });
  private server: http.Server | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();
  private port = 0;

  static async start(): Promise<HookServer> {
    const hook = new HookServer();
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let verified = false;
        try {
          new Webhook(hook.secret).verify(body, {
            'webhook-id': String(req.headers['webhook-id'] ?? ''),
            'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
            'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
          });
          verified = true;
        } catch {
          verified = false;
        }
        let payload: HookCall['payload'];
        try {
          payload = JSON.parse(body);
        } catch {
          payload = { type: '', timestamp: '', realmId: '', data: {} };
        }
        const call: HookCall = { type: payload.type, headers: req.headers, body, payload, verified };
        hook.calls.push(call);
        const reply = hook.reply(call);
        const send = () => {
          if (res.destroyed) return;
          res.statusCode = reply.status ?? 200;
          for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
          if (typeof reply.body === 'string') res.end(reply.body);
          else {
            res.setHeader('content-type', 'application/json');
            res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
          }
        };
        if (reply.delayMs) {
          const timer = setTimeout(() => {
            hook.timers.delete(timer);
            send();
          }, reply.delayMs);
          hook.timers.add(timer);
        } else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    hook.port = (server.address() as AddressInfo).port;
    hook.server = server;
    return hook;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/identity/hook`;
  }

  ofType(type: string): HookCall[] {
    return this.calls.filter((c) => c.type === type);
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
