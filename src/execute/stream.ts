/**
 * A SELECT whose rows are handed to a sink one by one as MySQL sends them. The consumer pauses
 * the flow when it cannot take more (back-pressure) and resumes it later; a flow paused for
 * longer than `stallMs` is cut — its statement killed, its connection freed, the sink failed
 * with STREAM_STALLED — so a client that stops reading cannot hold a connection for ever. A
 * consumer that leaves cancels: the statement is killed on the server too. The connection goes
 * back to the pool only once the server has stopped the statement.
 */
import type { PoolConnection } from 'mysql2';
import { mapDbError } from '../db/errors.js';
import { type ApiError, streamStalled } from '../errors.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import { bind } from './bind.js';
import type { Watchdog } from './watchdog.js';

export interface RowSink {
  /** One row, its values in select order. */
  row(values: unknown[]): void;
  end(): void;
  /** The statement failed, or the flow was cut; no call follows. */
  fail(error: ApiError): void;
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

  /** The statement is over (mysql2 emits 'end' after 'error' too: only the first counts). */
  const finish = (): boolean => {
    if (finished) return false;
    finished = true;
    clearTimeout(stallTimer);
    watchdog.release(connection);
    connection.removeListener('error', onError);
    // Never hand the connection to someone else while our KILL QUERY may still be on its way.
    if (killing) killing.finally(() => connection.release());
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
    if (finish() && !killing) sink.fail(mapDbError(error));
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
