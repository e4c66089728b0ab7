/**
 * Counters in fixed time windows, behind a small interface: the login and registration limits
 * keep their state here. MemoryCounterStore is per process; RedisCounterStore
 * (redis-counter-store.ts, `--redis-url`) implements the same interface so that several gateways
 * count together.
 */

export interface WindowCount {
  /** The key's count in its current window, after the add. */
  readonly count: number;
  /** Milliseconds until the window ends and the count starts again from zero. */
  readonly resetInMs: number;
}

export interface CounterStore {
  /** True when other gateways count in the same store (Redis): a count is everyone's. */
  readonly shared: boolean;
  /**
   * Adds `amount` to `key`'s count and answers the count after it, atomically: concurrent adds to
   * one key each see a different count. A window of `windowMs` starts at the first add to a key
   * that has none; a negative amount (taking back an add) never starts one.
   */
  add(key: string, amount: number, windowMs: number): Promise<WindowCount>;
}

interface Window {
  count: number;
  readonly endsAt: number;
}

/**
 * In-process counters. At most `capacity` keys are kept, least recently used first out: a small
 * store would let an attacker evict a victim's counter by counting many other keys.
 */
export class MemoryCounterStore implements CounterStore {
  readonly shared = false;
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly capacity = 100_000,
    private readonly now: () => number = () => Date.now(),
  ) {}

  add(key: string, amount: number, windowMs: number): Promise<WindowCount> {
    return Promise.resolve(this.addNow(key, amount, windowMs));
  }

  private addNow(key: string, amount: number, windowMs: number): WindowCount {
    const now = this.now();
    let window = this.windows.get(key);
    this.windows.delete(key);
    if (window === undefined || window.endsAt <= now) {
      if (amount < 0) return { count: 0, resetInMs: 0 };
      window = { count: 0, endsAt: now + windowMs };
    }
    window.count = Math.max(0, window.count + amount);
    // Map keeps insertion order: re-inserting makes this key the most recently used.
    this.windows.set(key, window);
    if (this.windows.size > this.capacity) {
      const oldest = this.windows.keys().next().value as string;
      this.windows.delete(oldest);
    }
    return { count: window.count, resetInMs: window.endsAt - now };
  }
}
