import http from 'node:http';
import { AddressInfo } from 'node:net';

/** One back-channel logout request as the app's endpoint received it. */
export interface ReceivedLogout {
  contentType: string | undefined;
  logoutToken: string;
}

/** An app's back-channel logout endpoint on 127.0.0.1: records each POST's `logout_token`, answers 200. */
export class BackchannelReceiver {
  readonly received: ReceivedLogout[] = [];
  private server: http.Server | null = null;
  private waiters: (() => void)[] = [];

  static async start(): Promise<BackchannelReceiver> {
    const receiver = new BackchannelReceiver();
    receiver.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        receiver.received.push({ contentType: req.headers['content-type'], logoutToken: body.get('logout_token') ?? '' });
        res.writeHead(200).end();
        for (const wake of receiver.waiters.splice(0)) wake();
      });
    });
    await new Promise<void>((resolve) => receiver.server!.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/backchannel-logout`;
  }

  /** Resolves with the first request `matches` accepts, once it has arrived, or rejects after `timeoutMs`. */
  async waitFor(matches: (logout: ReceivedLogout) => boolean, timeoutMs: number): Promise<ReceivedLogout> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find(matches);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching back-channel logout among ${this.received.length} received`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
