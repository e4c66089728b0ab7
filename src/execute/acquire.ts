/**
 * A pool connection within a bound. mysql2's pool waits for a free connection for ever; we
 * answer instead: when the wait passes ALIVE_CHECK_MS the server is pinged on the control
 * connection, and a server that does not answer (frozen, partitioned) is 503 at once; a
 * server that answers is only busy, so the request keeps waiting up to `maxWaitMs` (then 503).
 *
 * Under load nearly every request waits (more HTTP connections than pool connections), so the
 * bounds are not a timer pair per wait (four timer operations and three closures per request,
 * issue 17) but one sweep every WAIT_SWEEP_MS over the waits in progress, running only while
 * there are any. A bound therefore fires up to WAIT_SWEEP_MS late, nothing a client can tell
 * from a 1 s check and a multi-second limit.
 */
import type { Pool, PoolConnection } from 'mysql2';
import { mapDbError } from '../db/errors.js';
import { databaseBusy, databaseUnavailable } from '../errors.js';
import { ALIVE_CHECK_MS, WAIT_SWEEP_MS } from '../limits.js';

export interface AcquireBound {
  /** Resolves true when the server answers a ping (within about a second). */
  readonly isAlive: () => Promise<boolean>;
  /** The longest a request waits for a connection from a live but busy server. */
  readonly maxWaitMs: number;
}

/** Told once: the connection, or why there is none. */
export type Lent = (error: unknown, connection?: PoolConnection) => void;

interface Wait {
  readonly since: number;
  /** The server was asked whether it is alive for this wait. */
  asked: boolean;
  settled: boolean;
  readonly done: Lent;
}

function settle(wait: Wait, error: unknown, connection?: PoolConnection): void {
  if (wait.settled) {
    // We gave up on this wait: the connection goes straight back.
    connection?.release();
    return;
  }
  wait.settled = true;
  wait.done(error, connection);
}

/** Hands out the connections of one pool within the bound. */
export class Acquirer {
  private readonly waits = new Set<Wait>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly bound: AcquireBound,
  ) {}

  /** A connection to `done`, within the bound; by callback, as every statement's path needs no promise. */
  lend(done: Lent): void {
    const wait: Wait = { since: Date.now(), asked: false, settled: false, done };
    this.waits.add(wait);
    if (this.sweeper === undefined) {
      this.sweeper = setInterval(() => this.sweep(), WAIT_SWEEP_MS);
      this.sweeper.unref();
    }
    this.pool.getConnection((error, connection) => {
      this.waits.delete(wait);
      if (error) settle(wait, mapDbError(error));
      else settle(wait, null, connection);
    });
  }

  /** Stops the sweep (the pool is closing); waits still in progress end with the pool. */
  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private sweep(): void {
    if (this.waits.size === 0) {
      this.close();
      return;
    }
    const now = Date.now();
    for (const wait of this.waits) {
      const waited = now - wait.since;
      if (waited >= this.bound.maxWaitMs) {
        this.waits.delete(wait);
        settle(wait, databaseBusy());
      } else if (waited >= ALIVE_CHECK_MS && !wait.asked) {
        wait.asked = true;
        this.bound.isAlive().then(
          (alive) => {
            if (alive) return;
            this.waits.delete(wait);
            settle(wait, databaseUnavailable());
          },
          () => {
            this.waits.delete(wait);
            settle(wait, databaseUnavailable());
          },
        );
      }
    }
  }
}
