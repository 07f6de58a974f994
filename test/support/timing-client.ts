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
 * what the service does after its answer is written does not delay the measurement, and the
 * requests of one `sequence` follow each other with nothing of the test's in between.
 */
export class TimingClient {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, { resolve: (r: TimedResponse[]) => void; reject: (e: Error) => void }>();
  private next = 0;

  constructor(private readonly baseUrl: string) {
    this.child = fork(join(__dirname, 'timing-client-process.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (message: { id: number; error?: string; results?: TimedResponse[] }) => {
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.error !== undefined) waiter?.reject(new Error(message.error));
      else waiter?.resolve(message.results ?? []);
    });
  }

  /** Sends the requests back to back: each as soon as the one before it has been answered. */
  sequence(requests: TimedRequest[]): Promise<TimedResponse[]> {
    const id = (this.next += 1);
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.send({
        id,
        requests: requests.map((request) => ({
          url: new URL(request.path, this.baseUrl).toString(),
          method: request.method,
          headers: request.headers,
          body: request.body,
        })),
      });
    });
  }

  close(): void {
    this.child.disconnect();
  }
}

/** Answers to the same number of requests for an address with an account and one without. */
export interface PairedTimings {
  known: TimedResponse[];
  unknown: TimedResponse[];
  /** Per pair: whether the known address's request went first. */
  knownFirst: boolean[];
}

/**
 * `pairs` pairs of requests, the two of a pair back to back, in alternating order (known then
 * unknown, unknown then known), after a few pairs that warm the paths up and are not counted.
 * Back to back, the second request of a pair meets whatever the service still does for the
 * first after answering it: on the embedded database that work runs on the service's only
 * thread and holds its only session. `settle` runs after every pair (waiting for that work), so
 * pairs do not weigh on each other; with `backToBack: false`, after every request, so that work
 * is measured nowhere.
 */
export async function alternatingPairs(
  client: TimingClient,
  requests: { known: TimedRequest; unknown: TimedRequest },
  options: { pairs: number; warmUp?: number; settle?: () => Promise<void>; backToBack?: boolean },
): Promise<PairedTimings> {
  const result: PairedTimings = { known: [], unknown: [], knownFirst: [] };
  const warmUp = options.warmUp ?? 4;
  const one = async (request: TimedRequest) => {
    const [answer] = await client.sequence([request]);
    await options.settle?.();
    return answer;
  };
  for (let i = 0; i < warmUp + options.pairs; i += 1) {
    const knownFirst = i % 2 === 0;
    const order = knownFirst ? [requests.known, requests.unknown] : [requests.unknown, requests.known];
    let first: TimedResponse;
    let second: TimedResponse;
    if (options.backToBack === false) {
      first = await one(order[0]);
      second = await one(order[1]);
    } else {
      [first, second] = await client.sequence(order);
      await options.settle?.();
    }
    if (i < warmUp) continue;
    result.known.push(knownFirst ? first : second);
    result.unknown.push(knownFirst ? second : first);
    result.knownFirst.push(knownFirst);
  }
  return result;
}

/** A difference of medians that scheduling alone causes between two equal answers of a millisecond or two. */
export const TIMING_ALLOWANCE_MS = 1;
/** How far apart the two medians may be, relative to a typical answer (SECURITY.md: within 25 %). */
export const TIMING_RELATIVE_ALLOWANCE = 0.25;

export const median = (xs: number[]): number => {
  const sorted = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export interface TimingComparison {
  /** Medians of each side's answers, in milliseconds. */
  known: number;
  unknown: number;
  /** How much slower the known address answers (negative: faster), from the pairs. */
  gap: number;
  allowed: number;
  within: boolean;
}

/**
 * Whether known and unknown addresses answer in about the same time: the gap, from the paired
 * differences (known − unknown) of each order, is within 25 % of a typical answer or 1 ms,
 * whichever is larger, in either direction. A pair's two requests meet the same load, so the
 * differences keep little of it; the median of each order's differences, averaged, cancels what
 * being first or second does to a request. Work done for the known address before answering
 * moves the gap up; work left after answering that is heavier for it delays the request that
 * follows it (the unknown one in half the pairs) and moves the gap down. No allowance grows
 * with the noise: a loaded machine gets more room only through slower answers.
 */
export function compareTimings(timings: PairedTimings): TimingComparison {
  const differences = (knownFirst: boolean) =>
    timings.known.flatMap((k, i) => (timings.knownFirst[i] === knownFirst ? [k.ms - timings.unknown[i].ms] : []));
  const gap = (median(differences(true)) + median(differences(false))) / 2;
  const all = [...timings.known, ...timings.unknown].map((r) => r.ms);
  const allowed = Math.max(TIMING_ALLOWANCE_MS, TIMING_RELATIVE_ALLOWANCE * median(all));
  return {
    known: median(timings.known.map((r) => r.ms)),
    unknown: median(timings.unknown.map((r) => r.ms)),
    gap,
    allowed,
    within: Math.abs(gap) <= allowed,
  };
}

/**
 * A timing decided by up to three measurements: a first round within the allowance decides;
 * after a first round outside it, two more must both be within. A real gap (work done for the
 * known address only) moves every round by the same milliseconds and fails them all; a burst of
 * load from elsewhere on the machine lands in one. The answer carries each round's figures for the
 * failure message.
 */
export async function decideTiming(measure: () => Promise<PairedTimings>): Promise<TimingComparison & { rounds: TimingComparison[] }> {
  const rounds: TimingComparison[] = [];
  for (;;) {
    const round = compareTimings(await measure());
    rounds.push(round);
    const outside = rounds.filter((r) => !r.within).length;
    if (outside === 0 || outside >= 2 || rounds.length === 3) return { ...round, within: outside < 2, rounds };
  }
}
