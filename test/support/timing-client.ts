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
