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
 *
 * The waits in progress are a list linked through the waits themselves, not a Set. A Set that
 * lives long and has an entry added and deleted per request rebuilds its table every few dozen
 * requests, and V8 links each retired table to its successor and leaves the retired one's
 * entries in place; once the Set's table has reached the old generation (one quiet second is
 * enough: a big streamed read), every successor is allocated there too. Every wait, with the
 * request its callback closes over, was then reachable from a dead old table until the next
 * full GC: each request's objects were promoted, ~3 KB each, and every small request after such
 * a read cost 13–30 % more CPU (issue 17, sixth pass). An unlinked wait points nowhere.
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
  readonly done: Lent;
  /**
   * Its neighbours in the list of waits in progress; both null once it is out of it. Out of the
   * list is ended: `done` was told, or is told now by whoever took it out.
   */
  older: Wait | null;
  newer: Wait | null;
}

/** The waits in progress, oldest first (see the top of this file for why not a Set). */
class WaitList {
  oldest: Wait | null = null;
  private newest: Wait | null = null;

  add(wait: Wait): void {
    wait.older = this.newest;
    if (this.newest) this.newest.newer = wait;
    else this.oldest = wait;
    this.newest = wait;
  }

  /** Takes `wait` out of the list: false when it was not in it (any more). */
  take(wait: Wait): boolean {
    if (wait.older === null && this.oldest !== wait) return false;
    if (wait.older) wait.older.newer = wait.newer;
    else this.oldest = wait.newer;
    if (wait.newer) wait.newer.older = wait.older;
    else this.newest = wait.older;
    wait.older = null;
    wait.newer = null;
    return true;
  }
}

/** Hands out the connections of one pool within the bound. */
export class Acquirer {
  private readonly waits = new WaitList();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly bound: AcquireBound,
  ) {}

  /** A connection to `done`, within the bound; by callback, as every statement's path needs no promise. */
  lend(done: Lent): void {
    const wait: Wait = {
      since: Date.now(),
      asked: false,
      done,
      older: null,
      newer: null,
    };
    this.waits.add(wait);
    if (this.sweeper === undefined) {
      this.sweeper = setInterval(() => this.sweep(), WAIT_SWEEP_MS);
      this.sweeper.unref();
    }
    this.pool.getConnection((error, connection) => {
      if (error) this.settle(wait, mapDbError(error));
      else this.settle(wait, null, connection);
    });
  }

  /** Tells `wait` once; a wait already ended (we gave up on it) hands a late connection back. */
  private settle(wait: Wait, error: unknown, connection?: PoolConnection): void {
    if (!this.waits.take(wait)) {
      connection?.release();
      return;
    }
    wait.done(error, connection);
  }

  /** Stops the sweep (the pool is closing); waits still in progress end with the pool. */
  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private sweep(): void {
    if (this.waits.oldest === null) {
      this.close();
      return;
    }
    const now = Date.now();
    for (let wait: Wait | null = this.waits.oldest, next: Wait | null; wait !== null; wait = next) {
      // Read before `wait` may leave the list.
      next = wait.newer;
      const waited = now - wait.since;
      if (waited >= this.bound.maxWaitMs) {
        this.settle(wait, databaseBusy());
      } else if (waited >= ALIVE_CHECK_MS && !wait.asked) {
        wait.asked = true;
        this.bound.isAlive().then(
          (alive) => {
            if (!alive) this.settle(wait, databaseUnavailable());
          },
          () => this.settle(wait, databaseUnavailable()),
        );
      }
    }
  }
}
