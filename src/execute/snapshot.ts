/**
 * One connection inside one consistent, read-only snapshot (`START TRANSACTION WITH CONSISTENT
 * SNAPSHOT, READ ONLY`): every pass of a SELECT over InnoDB tables sees the same rows, whatever
 * is written meanwhile (http/tagged-rows.ts reads an answer once to hash it, then streams it).
 */
import type { PoolConnection } from 'mysql2';
import type { CompiledQuery } from '../sql/compiled-query.js';
import type { Backend, DatabaseOptions } from './backend.js';
import type { Caller } from './caller.js';
import type { CallerLimits } from './caller-limits.js';
import type { Lending } from './lending.js';
import { type Lender, type RowFlow, type RowSink, streamRows } from './stream.js';

export interface Snapshot {
  /** One pass of `query`'s rows, as stream() gives them; one pass at a time. */
  stream(query: CompiledQuery, sink: RowSink): RowFlow;
  /** Ends the snapshot and gives the connection back once the pass in flight is over. */
  close(): void;
}

const SNAPSHOT = 'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY';

/** A snapshot on a connection of the caller's fair turn, `rows` its weight (acquire.ts). */
export function snapshotOf(
  lent: Lending,
  limits: CallerLimits,
  options: DatabaseOptions,
  caller: Caller,
  rows: number,
): Promise<Snapshot> {
  return new Promise<Snapshot>((resolve, reject) => {
    lent.borrow(
      caller.client,
      (error, held, backend) => {
        if (held === undefined || backend === undefined) {
          reject(error);
          return;
        }
        held.query(SNAPSHOT, (failure: unknown) => {
          if (failure) {
            lent.giveBack(backend, held, failure);
            reject(failure);
            return;
          }
          resolve(snapshotOn(lent, limits, options, backend, held, caller));
        });
      },
      rows,
    );
  });
}

/**
 * The passes of a snapshot on `held`: each streamed as stream() streams (stall, pace, take-back,
 * kill), but a pass that ends hands the connection back to the snapshot, not the pool; close
 * commits and gives it back, or it was dropped already when a pass broke it.
 */
function snapshotOn(
  lent: Lending,
  limits: CallerLimits,
  options: DatabaseOptions,
  backend: Backend,
  held: PoolConnection,
  caller: Caller,
): Snapshot {
  let dropped = false;
  let passing = false;
  let closing = false;
  const finish = () => {
    if (dropped) return;
    held.query('COMMIT', (failure: unknown) => lent.giveBack(backend, held, failure ?? null));
  };
  const lender: Lender = {
    giveBack: (_connection, drop) => {
      passing = false;
      if (drop) {
        dropped = true;
        backend.acquirer.giveBack(held, true);
      } else if (closing) finish();
    },
    stalled: (stall) => backend.acquirer.stalled(stall),
    flowing: (stall) => backend.acquirer.flowing(stall),
  };
  const streamOptions = {
    kill: backend.kill,
    stallMs: options.stallTimeoutMs,
    minRate: options.minReadRate ?? 0,
    watchdog: backend.watchdog,
    lender,
  };
  return {
    stream: (query, sink) => {
      passing = true;
      return streamRows(held, limits.timed(query, caller), sink, streamOptions);
    },
    close: () => {
      if (closing) return;
      closing = true;
      if (!passing) finish();
    },
  };
}
