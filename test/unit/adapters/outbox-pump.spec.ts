import { OutboxPump } from '../../../src/adapters/lifecycle/outbox-pump';

type Outcome = 'sent' | 'retrying';

/** An outbox of `due` rows whose sends answer with `outcomeOf(n)` (n counts the claims from 1). */
function outbox(due: number, outcomeOf: (n: number) => Outcome = () => 'sent') {
  const state = { claims: 0, left: due, inFlight: 0, maxInFlight: 0 };
  const next = async (): Promise<Outcome | null> => {
    state.claims += 1;
    if (state.left === 0) return null;
    state.left -= 1;
    const n = due - state.left;
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    state.inFlight -= 1;
    return outcomeOf(n);
  };
  return { state, next };
}

function pump(next: () => Promise<Outcome | null>, concurrency = 4, perWorkerPerPass = 50) {
  return new OutboxPump<Outcome>({
    name: 'Test outbox',
    pollIntervalMs: 0,
    concurrency,
    perWorkerPerPass,
    outcomes: ['sent', 'retrying'],
    next,
    stopsWorker: (outcome) => outcome === 'retrying',
  });
}

describe('OutboxPump passes', () => {
  it('asks the database once when nothing is due, whatever its concurrency', async () => {
    const { state, next } = outbox(0);
    expect(await pump(next, 4).dispatchDue()).toEqual({ sent: 0, retrying: 0 });
    expect(state.claims).toBe(1);
  });

  it('sends everything due with its workers in parallel once the first claim found a row', async () => {
    const { state, next } = outbox(10);
    expect(await pump(next, 4).dispatchDue()).toEqual({ sent: 10, retrying: 0 });
    expect(state.maxInFlight).toBe(4);
    // The ten claims that found a row, then one empty claim per worker.
    expect(state.claims).toBe(14);
  });

  it('sends at most concurrency × perWorkerPerPass rows a pass, the first claim included', async () => {
    const { state, next } = outbox(100);
    expect(await pump(next, 2, 3).dispatchDue()).toEqual({ sent: 6, retrying: 0 });
    expect(state.left).toBe(94);
  });

  it('stops the pass after one attempt when its first send meets an outage', async () => {
    const { state, next } = outbox(10, () => 'retrying');
    expect(await pump(next, 4).dispatchDue()).toEqual({ sent: 0, retrying: 1 });
    expect(state.claims).toBe(1);
  });

  it('stops each worker at its first failed send when the outage starts during the pass', async () => {
    const { state, next } = outbox(20, (n) => (n <= 3 ? 'sent' : 'retrying'));
    const report = await pump(next, 4).dispatchDue();
    expect(report.sent).toBe(3);
    expect(report.retrying).toBe(4);
    expect(state.left).toBe(13);
  });

  it('claims nothing once drained', async () => {
    const { state, next } = outbox(5);
    const p = pump(next, 4);
    await p.drain();
    expect(await p.dispatchDue()).toEqual({ sent: 0, retrying: 0 });
    expect(state.claims).toBe(0);
  });
});
