/** A message between the clients of one realm in the tabs of an origin. */
export type Message = { t: string } & Record<string, unknown>;

/** Cross-tab coordination: one refresher at a time, and news shared with the other tabs. */
export interface Coordinator {
  /** Runs `task` while no other tab runs one under the same name. */
  lock<T>(task: () => Promise<T>): Promise<T>;
  post(message: Message): void;
  close(): void;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Coordinates the clients that share a refresh token (tabs of one origin, with the cookie or a
 * shared storage). The lock is the Web Locks API where the browser has it; elsewhere a lease
 * negotiated over BroadcastChannel: a claimant announces a random ticket, waits, and backs off if
 * it heard a better ticket or a holder. Without BroadcastChannel (or when nothing is shared),
 * tasks just run: single flight within the page is the caller's job.
 */
export function coordinator(name: string, shared: boolean, onMessage: (message: Message) => void, claimWindowMs = 50): Coordinator {
  const Channel = shared ? globalThis.BroadcastChannel : undefined;
  const channel = Channel ? new Channel(name) : null;
  const locks = shared && typeof navigator !== 'undefined' ? navigator.locks : undefined;
  const id = Math.random().toString(36).slice(2);
  let holder: string | null = null;
  let holderUntil = 0;
  let ticket = -1;
  let lost = false;
  let holding = false;
  let queue: Promise<unknown> = Promise.resolve();

  if (channel) {
    channel.onmessage = ({ data }: MessageEvent<Message>) => {
      const { t } = data;
      if (t === '~claim') {
        if (holding) channel.postMessage({ t: '~held', id });
        else if (ticket < 0) {
          // A claim heard before this page claims: that page may win, so wait as if it held.
          holder = data.id as string;
          holderUntil = Date.now() + 3 * claimWindowMs;
        } else if ((data.n as number) < ticket || (data.n === ticket && (data.id as string) < id)) lost = true;
      } else if (t === '~held') {
        holder = data.id as string;
        holderUntil = Date.now() + 15_000;
        if (ticket >= 0) lost = true;
      } else if (t === '~free') {
        if (holder === data.id) holder = null;
      } else onMessage(data);
    };
  }

  const held = () => holder !== null && Date.now() < holderUntil;

  async function lease<T>(task: () => Promise<T>): Promise<T> {
    for (;;) {
      while (held()) await sleep(20);
      ticket = Math.random();
      lost = false;
      channel!.postMessage({ t: '~claim', id, n: ticket });
      await sleep(claimWindowMs);
      const won = !lost && !held();
      ticket = -1;
      if (won) break;
      await sleep(claimWindowMs * (0.5 + Math.random()));
    }
    holding = true;
    channel!.postMessage({ t: '~held', id });
    try {
      return await task();
    } finally {
      holding = false;
      channel!.postMessage({ t: '~free', id });
    }
  }

  return {
    lock(task) {
      if (locks) return locks.request(name, task);
      if (!channel) return task();
      // Within this page, one claimant at a time (the channel does not echo a page's own claims).
      const run = queue.then(() => lease(task));
      queue = run.catch(() => undefined);
      return run;
    },
    post: (message) => channel?.postMessage(message),
    close: () => channel?.close(),
  };
}
