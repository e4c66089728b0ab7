/**
 * The argon2 share per client address (auth/limits.ts): counted in the store when the store is
 * shared (two AuthLimits over one store stand for two gateways over one Redis), by each process's
 * queue otherwise — never both.
 */
import { AuthLimits } from '../../../src/auth/limits.js';
import { ApiError } from '../../../src/errors.js';
import { ARGON2_PER_CLIENT } from '../../../src/limits.js';
import { type CounterStore, MemoryCounterStore } from '../../../src/throttle/counter-store.js';

/** One in-process store that says it is shared, as RedisCounterStore does. */
function sharedStore(): CounterStore {
  const memory = new MemoryCounterStore();
  return { shared: true, add: (key, amount, windowMs) => memory.add(key, amount, windowMs) };
}

/** Starts `count` hashes for 127.0.0.1 that hold their slot until `release()`. */
function held(limits: AuthLimits, count: number) {
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const outcomes = Array.from({ length: count }, () =>
    limits
      .hashing('127.0.0.1', () => gate.then(() => 'hashed'))
      .then(
        (value) => value,
        (error: unknown) => (error instanceof ApiError ? error.code : String(error)),
      ),
  );
  return { outcomes: Promise.all(outcomes), release: () => release() };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test(`a shared store: ${ARGON2_PER_CLIENT} hashes per address across two gateways, the rest 429, every share given back`, async () => {
  const store = sharedStore();
  const [a, b] = [new AuthLimits(store), new AuthLimits(store)];
  const onA = held(a, 6);
  await tick();
  const onB = held(b, 6);
  await tick();
  onA.release();
  onB.release();
  expect(await onA.outcomes).toEqual(Array(6).fill('hashed'));
  expect(await onB.outcomes).toEqual([
    ...Array(ARGON2_PER_CLIENT - 6).fill('hashed'),
    ...Array(12 - ARGON2_PER_CLIENT).fill('TOO_MANY_CONCURRENT_REQUESTS'),
  ]);
  // Every share was taken back: a full set fits again.
  const again = held(b, ARGON2_PER_CLIENT);
  again.release();
  expect(await again.outcomes).toEqual(Array(ARGON2_PER_CLIENT).fill('hashed'));
});

test(`a store of one process: each gateway gives an address its own ${ARGON2_PER_CLIENT}`, async () => {
  const [a, b] = [
    new AuthLimits(new MemoryCounterStore()),
    new AuthLimits(new MemoryCounterStore()),
  ];
  const onA = held(a, 6);
  const onB = held(b, ARGON2_PER_CLIENT + 1);
  await tick();
  onA.release();
  onB.release();
  expect(await onA.outcomes).toEqual(Array(6).fill('hashed'));
  expect(await onB.outcomes).toEqual([
    ...Array(ARGON2_PER_CLIENT).fill('hashed'),
    'TOO_MANY_CONCURRENT_REQUESTS',
  ]);
});
