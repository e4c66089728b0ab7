import { WorkQueue, WorkRefused } from '../../../src/throttle/work-queue.js';

/** A task that finishes when told; counts how many run at once. */
function gate() {
  let running = 0;
  let peak = 0;
  const release: (() => void)[] = [];
  const task = () => {
    running++;
    peak = Math.max(peak, running);
    return new Promise<void>((resolve) =>
      release.push(() => {
        running--;
        resolve();
      }),
    );
  };
  return { task, release, peak: () => peak };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('WorkQueue', () => {
  test('runs at most `concurrency` tasks at once and every accepted task eventually', async () => {
    const queue = new WorkQueue({ concurrency: 2, perClient: 10, maxWaiting: 10 });
    const g = gate();
    const done = Array.from({ length: 6 }, (_, i) => queue.run(`c${i}`, g.task));
    for (let i = 0; i < 6; i++) {
      await settle();
      g.release.shift()?.();
    }
    await Promise.all(done);
    expect(g.peak()).toBe(2);
  });

  test('refuses a client past its share, and only that client', async () => {
    const queue = new WorkQueue({ concurrency: 1, perClient: 2, maxWaiting: 10 });
    const g = gate();
    const accepted = [queue.run('a', g.task), queue.run('a', g.task)];
    await expect(queue.run('a', g.task)).rejects.toEqual(new WorkRefused('client-busy'));
    const other = queue.run('b', g.task);
    for (let i = 0; i < 3; i++) {
      await settle();
      g.release.shift()?.();
    }
    await Promise.all([...accepted, other]);
    // Its share is back once its tasks are done.
    const again = queue.run('a', g.task);
    await settle();
    g.release.shift()?.();
    await again;
  });

  test('refuses anyone when `maxWaiting` tasks wait', async () => {
    const queue = new WorkQueue({ concurrency: 1, perClient: 10, maxWaiting: 2 });
    const g = gate();
    const accepted = ['a', 'b', 'c'].map((client) => queue.run(client, g.task));
    const refusals = await Promise.allSettled(['d', 'e'].map((c) => queue.run(c, g.task)));
    expect(refusals.map((r) => r.status === 'rejected' && r.reason.reason)).toEqual([
      'queue-full',
      'queue-full',
    ]);
    for (let i = 0; i < 3; i++) {
      await settle();
      g.release.shift()?.();
    }
    await Promise.all(accepted);
  });

  test('a failing task frees its slot and its share', async () => {
    const queue = new WorkQueue({ concurrency: 1, perClient: 1, maxWaiting: 0 });
    await expect(queue.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(queue.run('a', () => Promise.resolve(7))).resolves.toBe(7);
  });
});
