import { afterEach, beforeEach, describe, expect, jest, test } from '@jest/globals';
import type { Database } from '../../../src/execute/database.js';
import { WEBHOOK_ATTEMPT_TIMEOUT_MS, WEBHOOK_LEASE_MS } from '../../../src/limits.js';
import { WebhookStore } from '../../../src/webhooks/store.js';

/**
 * Whether a gateway may start an attempt is decided on its own clock from its last confirmed
 * renewal: the rule that keeps two gateways from delivering at once (docs/webhooks.md). The
 * database answers are given here; the statements run against MySQL in webhooks.test.ts.
 */
function storeAnswering(renewed: () => boolean): WebhookStore {
  const db: Pick<Database, 'run' | 'rows'> = {
    run: async () => ({ affectedRows: renewed() ? 1 : 0, insertId: 0 }) as never,
    rows: async () => [],
  };
  return new WebhookStore(db, 'gw-1', WEBHOOK_LEASE_MS);
}

const attempt = WEBHOOK_ATTEMPT_TIMEOUT_MS + 1000;

describe('the lease decides whether an attempt may start', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  test('after a renewal an attempt may start until the lease could run out during it', async () => {
    const store = storeAnswering(() => true);
    await store.lease('w');
    expect(store.holdsFor('w', attempt)).toBe(true);
    jest.advanceTimersByTime(WEBHOOK_LEASE_MS - attempt);
    expect(store.holdsFor('w', attempt)).toBe(true);
    jest.advanceTimersByTime(1);
    expect(store.holdsFor('w', attempt)).toBe(false);
  });

  test('renewals that fail (MySQL cut off) leave the last confirmed one: the gateway stops in time', async () => {
    let answering = true;
    const store = storeAnswering(() => answering);
    await store.lease('w');
    answering = false;
    jest.advanceTimersByTime(WEBHOOK_LEASE_MS / 2);
    await expect(store.lease('w')).resolves.toBe(false);
    // Another gateway may take it over once it runs out: this one must not start before then.
    expect(store.holdsFor('w', attempt)).toBe(false);
  });

  test('a lease never taken, or let go, allows no attempt', async () => {
    const store = storeAnswering(() => true);
    expect(store.holdsFor('w', attempt)).toBe(false);
    await store.lease('w');
    await store.release('w');
    expect(store.holdsFor('w', attempt)).toBe(false);
  });
});
