import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request as the receiver saw it. */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  contentType: string | undefined;
  method: string | undefined;
  path: string | undefined;
  body: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> & { id: string; details: Record<string, unknown> } };
  /** Which of the receiver's secrets verified it (standardwebhooks, one secret at a time). */
  verifiedWith: string[];
}

/**
 * A real HTTP receiver on 127.0.0.1 that verifies every request with the reference Standard
 * Webhooks library (`standardwebhooks`), as a backend would. `answer` decides the status of the
 * next request (204 by default); `down()` makes it refuse connections until `up()`.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** Secrets to verify with; a request none of them verifies is recorded as unverified. */
  secrets: string[] = [];
  answer: (request: ReceivedWebhook) => number = () => 204;
  private server: http.Server | null = null;
  private port = 0;
  private waiters: (() => void)[] = [];

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await receiver.up();
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks/identity`;
  }

  async up(): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = {
          'webhook-id': String(req.headers['webhook-id'] ?? ''),
          'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
          'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
        };
        const verifiedWith = this.secrets.filter((secret) => {
          try {
            new Webhook(secret).verify(body, headers);
            return true;
          } catch {
            return false;
          }
        });
        let payload: ReceivedWebhook['payload'];
        try {
          payload = JSON.parse(body);
        } catch {
          payload = { type: '', timestamp: '', data: { id: '', details: {} } };
        }
        const request: ReceivedWebhook = {
          id: headers['webhook-id'],
          timestamp: headers['webhook-timestamp'],
          signature: headers['webhook-signature'],
          contentType: req.headers['content-type'],
          method: req.method,
          path: req.url,
          body,
          payload,
          verifiedWith,
        };
        this.received.push(request);
        const status = this.answer(request);
        res.statusCode = status;
        if (status >= 300 && status < 400) res.setHeader('location', 'http://127.0.0.1:1/elsewhere');
        res.end();
        for (const wake of this.waiters.splice(0)) wake();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening: connections are refused until `up()` (same port). */
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Requests whose payload is of `type`. */
  ofType(type: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.payload.type === type);
  }

  async waitFor(predicate: (all: ReceivedWebhook[]) => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.received)) {
      if (Date.now() > deadline) throw new Error(`webhook receiver: condition not met; got ${this.received.length} request(s)`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  clear(): void {
    this.received.length = 0;
  }
}
