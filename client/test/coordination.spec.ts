import { coordinator, type Message } from '../src/coordination.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('cross-tab coordination', () => {
  it('runs one task at a time across coordinators of the same name, and delivers messages to the others', async () => {
    const received: Message[][] = [[], [], []];
    const tabs = received.map((inbox) => coordinator('test-lock', true, (m) => inbox.push(m), 20));
    let inside = 0;
    let maxInside = 0;
    const order: number[] = [];
    try {
      await Promise.all(
        tabs.flatMap((tab, i) =>
          [0, 1].map(() =>
            tab.lock(async () => {
              inside += 1;
              maxInside = Math.max(maxInside, inside);
              await sleep(15);
              order.push(i);
              inside -= 1;
            }),
          ),
        ),
      );
      expect(maxInside).toBe(1);
      expect(order.sort()).toEqual([0, 0, 1, 1, 2, 2]);

      tabs[0].post({ t: 'hello', n: 1 });
      await sleep(20);
      expect(received[0]).toEqual([]);
      expect(received[1]).toEqual([{ t: 'hello', n: 1 }]);
      expect(received[2]).toEqual([{ t: 'hello', n: 1 }]);
    } finally {
      tabs.forEach((tab) => tab.close());
    }
  });

  it('does not coordinate what is not shared', async () => {
    const inbox: Message[] = [];
    const a = coordinator('private', false, (m) => inbox.push(m));
    const b = coordinator('private', false, (m) => inbox.push(m));
    let inside = 0;
    let maxInside = 0;
    const task = async () => {
      inside += 1;
      maxInside = Math.max(maxInside, inside);
      await sleep(10);
      inside -= 1;
    };
    await Promise.all([a.lock(task), b.lock(task)]);
    a.post({ t: 'x' });
    await sleep(10);
    expect(maxInside).toBe(2);
    expect(inbox).toEqual([]);
  });
});
