/**
 * The connections of the host in use (hosts.ts, backend.ts), lent and given back: every
 * statement's path, by callback (no promise) where it is hot. A failure that says the host may
 * be gone is reported to the host switch, which then looks for another host of `-h`.
 */
import type { PoolConnection } from 'mysql2';
import { mapDbError } from '../db/errors.js';
import type { Backend } from './backend.js';
import type { HostSwitch } from './hosts.js';
import { dropsConnection } from './retry.js';

export class Lending {
  constructor(
    private readonly switcher: HostSwitch<Backend>,
    /** Whether `-h` names more than one host (only then is a failure reported). */
    private readonly several: boolean,
  ) {}

  /** An error that says the host may be gone (refused connect, lost connection) is reported. */
  report(backend: Backend, error: unknown): void {
    if (this.several && mapDbError(error).code === 'DATABASE_UNAVAILABLE') {
      this.switcher.suspect(backend);
    }
  }

  /**
   * A pool connection of the host in use, by callback (no promise: this is every statement's
   * path), with the host that lent it, in the fair turn of the client at `address`
   * (acquire.ts). While a search for another host is under way, one of the host it settles on.
   * A failure to get one is reported (the host may be gone). The borrower has the watchdog watch
   * it (stream.ts does so itself).
   */
  borrow(
    address: string,
    done: (error: unknown, held?: PoolConnection, backend?: Backend) => void,
    rows = 0,
  ): void {
    const settling = this.switcher.settling;
    if (settling) {
      settling.then(() => this.borrow(address, done, rows), done);
      return;
    }
    const backend = this.switcher.backend;
    backend.acquirer.lend(
      address,
      (error, held) => {
        if (held === undefined) {
          this.report(backend, error);
          done(error);
          return;
        }
        done(null, held, backend);
      },
      rows,
    );
  }

  /**
   * Gives a borrowed connection back, or drops it when it broke (mysql2 3.x already takes a
   * connection with a fatal error out of the pool; destroying it says so here, and also drops
   * one that leads to a Galera node without quorum). A failure is reported.
   */
  giveBack(backend: Backend, held: PoolConnection, error: unknown): void {
    backend.watchdog.release(held);
    if (error === null || error === undefined) {
      backend.acquirer.giveBack(held);
      return;
    }
    this.report(backend, error);
    backend.acquirer.giveBack(held, dropsConnection(error));
  }

  /**
   * Runs `work` on a borrowed connection and gives it back. Driver errors pass through as they
   * are: the retries (retry.ts) read them, the HTTP error handler maps them.
   */
  using<T>(address: string, work: (held: PoolConnection) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.borrow(address, (error, held, backend) => {
        if (held === undefined || backend === undefined) {
          reject(error);
          return;
        }
        backend.watchdog.watch(held);
        let working: Promise<T>;
        try {
          working = work(held);
        } catch (thrown) {
          working = Promise.reject(thrown);
        }
        working.then(
          (value) => {
            this.giveBack(backend, held, null);
            resolve(value);
          },
          (failure: unknown) => {
            this.giveBack(backend, held, failure);
            reject(failure);
          },
        );
      });
    });
  }

  /**
   * using() by callback: `work` on a borrowed connection, which is given back when work calls
   * `finish` (the path of small reads and one-statement writes, without promises).
   */
  usingBy<T>(
    address: string,
    work: (held: PoolConnection, finish: (error: unknown, value?: T) => void) => void,
    done: (error: unknown, value?: T) => void,
  ): void {
    this.borrow(address, (error, held, backend) => {
      if (held === undefined || backend === undefined) {
        done(error);
        return;
      }
      backend.watchdog.watch(held);
      // mysql2 calls an execute's callback twice when the connection breaks while the statement
      // is being prepared (once for the prepare, once for the execute queued behind it): the
      // second call would retry the read again and answer the request twice.
      let finished = false;
      const finish = (failure: unknown, value?: T) => {
        if (finished) return;
        finished = true;
        this.giveBack(backend, held, failure);
        done(failure, value);
      };
      try {
        work(held, finish);
      } catch (thrown) {
        finish(thrown);
      }
    });
  }
}
