import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';

export interface TimedRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface TimedResponse {
  /** From writing the request to reading the last byte of the answer, in milliseconds. */
  ms: number;
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/**
 * Times requests from a separate process (timing-client-process.mjs), as a remote client would see them:
 * what the service does after its answer is written does not delay the measurement.
 */
export class TimingClient {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, { resolve: (r: TimedResponse) => void; reject: (e: Error) => void }>();
  private next = 0;

  constructor(private readonly baseUrl: string) {
    this.child = fork(join(__dirname, 'timing-client-process.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (message: { id: number; error?: string } & TimedResponse) => {
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.error !== undefined) waiter?.reject(new Error(message.error));
      else waiter?.resolve({ ms: message.ms, status: message.status, body: message.body });
    });
  }

  time(request: TimedRequest): Promise<TimedResponse> {
    const id = (this.next += 1);
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.send({
        id,
        url: new URL(request.path, this.baseUrl).toString(),
        method: request.method,
        headers: request.headers,
        body: request.body,
      });
    });
  }

  close(): void {
    this.child.disconnect();
  }
}

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * Whether the first side of back-to-back pairs is slower than the second by more than noise
 * allows: the median of the paired differences (`a[i] − b[i]`) against 1.5 ms, or 25 % of a
 * typical answer, or 2.5 standard errors of that median (from the differences' spread),
 * whichever is largest. On a quiet machine that is 1.5 ms; under load it widens with the noise it
 * measures, while a side that does more work before answering shifts every pair and moves the
 * median, not the spread. One-sided: doing an address's work before answering can only make the
 * side with the account slower (`a`), and the other side runs a little slower under load.
 */
export function pairedGap(a: number[], b: number[]): { gap: number; allowed: number; within: boolean } {
  const differences = a.map((x, i) => x - b[i]);
  const gap = median(differences);
  const mad = median(differences.map((d) => Math.abs(d - gap)));
  // 1.4826 × MAD estimates σ; the median's standard error is about 1.2533 σ / √n.
  const standardError = (1.4826 * mad * 1.2533) / Math.sqrt(differences.length);
  const allowed = Math.max(1.5, 0.25 * median([...a, ...b]), 2.5 * standardError);
  return { gap, allowed, within: gap <= allowed };
}
