/**
 * A pool connection within a bound. mysql2's pool waits for a free connection for ever; we
 * answer instead: when the wait passes ALIVE_CHECK_MS the server is pinged on the control
 * connection, and a server that does not answer (frozen, partitioned) is 503 at once; a
 * server that answers is only busy, so the request keeps waiting up to `maxWaitMs` (then 503).
 */
import type { Pool, PoolConnection } from 'mysql2';
import { mapDbError } from '../db/errors.js';
import { databaseBusy, databaseUnavailable } from '../errors.js';
import { ALIVE_CHECK_MS } from '../limits.js';

export interface AcquireBound {
  /** Resolves true when the server answers a ping (within about a second). */
  readonly isAlive: () => Promise<boolean>;
  /** The longest a request waits for a connection from a live but busy server. */
  readonly maxWaitMs: number;
}

export function acquire(pool: Pool, bound: AcquireBound): Promise<PoolConnection> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let aliveTimer: NodeJS.Timeout | undefined;
    let giveUpTimer: NodeJS.Timeout | undefined;
    const settle = (error: unknown, connection?: PoolConnection) => {
      if (settled) {
        // We gave up on this wait: the connection goes straight back.
        connection?.release();
        return;
      }
      settled = true;
      clearTimeout(aliveTimer);
      clearTimeout(giveUpTimer);
      if (connection) resolve(connection);
      else reject(error);
    };
    pool.getConnection((error, connection) =>
      error ? settle(mapDbError(error)) : settle(null, connection),
    );
    // mysql2 hands an idle connection over on the next tick, queued before this one: then the
    // wait is over before it is bounded, and no timer pair is made and cleared for nothing
    // (issue 17). A real wait (every connection busy, or a new one connecting) gets both.
    process.nextTick(() => {
      if (settled) return;
      aliveTimer = setTimeout(() => {
        bound.isAlive().then(
          (alive) => alive || settle(databaseUnavailable()),
          () => settle(databaseUnavailable()),
        );
      }, ALIVE_CHECK_MS);
      giveUpTimer = setTimeout(() => settle(databaseBusy()), bound.maxWaitMs);
    });
  });
}
