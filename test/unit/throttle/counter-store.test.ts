import { MemoryCounterStore } from '../../../src/throttle/counter-store.js';

describe('MemoryCounterStore', () => {
  let now = 1_000;
  const clock = () => now;

  test('counts in a fixed window that starts at the first add', async () => {
    const store = new MemoryCounterStore(10, clock);
    expect(await store.add('k', 1, 60_000)).toEqual({ count: 1, resetInMs: 60_000 });
    now += 10_000;
    expect(await store.add('k', 1, 60_000)).toEqual({ count: 2, resetInMs: 50_000 });
    now += 50_000;
    expect(await store.add('k', 1, 60_000)).toEqual({ count: 1, resetInMs: 60_000 });
  });

  test('a negative add takes back, never below zero, and never starts a window', async () => {
    const store = new MemoryCounterStore(10, clock);
    expect(await store.add('gone', -1, 60_000)).toEqual({ count: 0, resetInMs: 0 });
    expect((await store.add('gone', 1, 60_000)).count).toBe(1);
    expect((await store.add('gone', -1, 60_000)).count).toBe(0);
    expect((await store.add('gone', -1, 60_000)).count).toBe(0);
  });

  test('concurrent adds each see a different count', async () => {
    const store = new MemoryCounterStore(10, clock);
    const counts = await Promise.all(Array.from({ length: 50 }, () => store.add('k', 1, 1000)));
    expect(counts.map((c) => c.count).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
  });

  test('keeps at most `capacity` keys, the least recently used first out', async () => {
    const store = new MemoryCounterStore(2, clock);
    await store.add('a', 5, 60_000);
    await store.add('b', 5, 60_000);
    await store.add('a', 1, 60_000); // a is now the most recently used
    await store.add('c', 1, 60_000); // evicts b
    expect((await store.add('a', 0, 60_000)).count).toBe(6);
    expect((await store.add('b', 0, 60_000)).count).toBe(0);
  });
});
