/**
 * A SELECT whose rows are handed to a sink one by one as MySQL sends them. The consumer pauses
 * the flow when it cannot take more (back-pressure) and resumes it later; a flow paused for
 * longer than `stallMs` is cut — its statement killed, its connection freed, the sink failed
 * with STREAM_STALLED — so a client that stops reading cannot hold a connection for ever. A
 * consumer that leaves cancels: the statement is killed on the server too. The connection goes
 * back to the pool only once the server has stopped the statement. A connection that breaks
 * before the first row reached the consumer is dropped and the statement runs once more on a
 * fresh one (streamRetrying, retry.ts); after that, the consumer hears the failure.
 */
import type { PoolConnection } from 'mysql2';
import { mapDbError } from '../db/errors.js';
import { type ApiError, streamStalled } from '../errors.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import { bind } from './bind.js';
import { dropsConnection, rereadable } from './retry.js';
import type { Watchdog } from './watchdog.js';

export interface RowSink {
  /** One row, its values in select order. */
  row(values: unknown[]): void;
  end(): void;
  /**
   * The statement failed, or the flow was cut; no call follows. `cause`: the driver's error
   * when the statement failed.
   */
  fail(error: ApiError, cause?: unknown): void;
}

export interface RowFlow {
  pause(): void;
  resume(): void;
  /** The consumer left: stop the statement; the sink hears nothing more. */
  cancel(): void;
}

export interface StreamOptions {
  /** Stops the statement running on a connection (by its thread id), from another connection. */
  readonly kill: (threadId: number) => Promise<void>;
  readonly stallMs: number;
  /** Fails the statement if the server stops answering (watchdog.ts). */
  readonly watchdog: Watchdog;
}

export function streamRows(
  connection: PoolConnection,
  query: CompiledQuery,
  sink: RowSink,
  { kill, stallMs, watchdog }: StreamOptions,
): RowFlow {
  let finished = false;
  /** Set once the statement is being killed: rows are dropped, the sink hears nothing more. */
  let killing: Promise<void> | null = null;
  let stallTimer: NodeJS.Timeout | undefined;

  /**
   * The statement is over (mysql2 emits 'end' after 'error' too: only the first counts). A
   * connection that broke (or leads to a node without quorum) is dropped, not given back.
   */
  const finish = (broken = false): boolean => {
    if (finished) return false;
    finished = true;
    clearTimeout(stallTimer);
    watchdog.release(connection);
    connection.removeListener('error', onError);
    if (broken) connection.destroy();
    // Never hand the connection to someone else while our KILL QUERY may still be on its way.
    else if (killing) killing.finally(() => connection.release());
    else connection.release();
    return true;
  };

  const stop = () => {
    if (finished || killing) return;
    clearTimeout(stallTimer);
    killing = kill(connection.threadId).catch(() => {
      // The kill failed (server gone?): the connection cannot be trusted again.
      connection.destroy();
    });
    connection.resume();
  };

  function onError(error: unknown): void {
    if (finish(dropsConnection(error)) && !killing) sink.fail(mapDbError(error), error);
  }

  // When the server dies mid-read, mysql2 reports it on the connection, not on a streaming
  // command without a callback: without this listener such a read would hang for ever.
  connection.once('error', onError);
  watchdog.watch(connection);
  // The pool gives rows as arrays (db/pool.ts): no options object per statement.
  const command = connection.execute(query.sql, bind(query.params));
  command.on('result', (row: unknown) => {
    if (!killing) sink.row(row as unknown[]);
  });
  command.on('end', () => {
    if (finish() && !killing) sink.end();
  });
  command.on('error', onError);

  return {
    pause: () => {
      connection.pause();
      clearTimeout(stallTimer);
      stallTimer = setTimeout(() => {
        if (finished || killing) return;
        stop();
        sink.fail(streamStalled(stallMs));
      }, stallMs);
    },
    resume: () => {
      clearTimeout(stallTimer);
      connection.resume();
    },
    cancel: stop,
  };
}

/** One attempt's connection, with the stream options of the host it belongs to. */
export interface StreamStart {
  readonly connection: PoolConnection;
  readonly options: StreamOptions;
}

/**
 * streamRows on a connection from `start`; when that connection breaks (or leads to a Galera
 * node without quorum) before any row reached the sink, once more on a fresh one. The flow it
 * gives back steers whichever attempt is running.
 */
export async function streamRetrying(
  start: () => Promise<StreamStart>,
  query: CompiledQuery,
  sink: RowSink,
): Promise<RowFlow> {
  let current: RowFlow | undefined;
  let rowSeen = false;
  let cancelled = false;
  const attempt = ({ connection, options }: StreamStart, last: boolean): RowFlow =>
    streamRows(
      connection,
      query,
      {
        row: (values) => {
          rowSeen = true;
          sink.row(values);
        },
        end: () => sink.end(),
        fail: (error, cause) => {
          if (last || rowSeen || cancelled || !rereadable(cause)) return sink.fail(error, cause);
          start().then(
            (fresh) => {
              current = attempt(fresh, true);
              // The consumer left while the fresh connection was on its way.
              if (cancelled) current.cancel();
            },
            (refused: unknown) => sink.fail(mapDbError(refused), refused),
          );
        },
      },
      options,
    );
  current = attempt(await start(), false);
  return {
    pause: () => current?.pause(),
    resume: () => current?.resume(),
    cancel: () => {
      cancelled = true;
      current?.cancel();
    },
  };
}
