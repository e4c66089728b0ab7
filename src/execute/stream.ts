/**
 * A SELECT whose rows are handed to a sink one by one as MySQL sends them. The consumer pauses
 * the flow when it cannot take more (back-pressure) and resumes it later; a flow paused for
 * longer than `stallMs` (time this process itself ran late not counted, up to `stallMs` more)
 * is cut — its statement killed, its connection freed, the sink failed with STREAM_STALLED — so
 * a client that stops reading cannot hold a connection for ever. While
 * the flow is paused it is listed with the lender as waiting for its client: while another
 * request waits for a connection, the lender takes it back once its client has taken nothing for
 * a while (acquire.ts), and it is cut the same way with STREAM_TAKEN_BACK (the body has begun, so
 * the client sees it cut short), its connection dropped from the pool at once. A
 * client that reads, but slowly, holds it for as long as its answer takes: so while the flow
 * waits for the client, the client must take `minRate` bytes a second, measured over waits of
 * `stallMs` in all (time the flow waits for MySQL never counts against the client); a slower
 * one is cut the same way with STREAM_TOO_SLOW. A consumer that leaves cancels: the statement
 * is killed on the server too. The connection goes back to the pool only once the server has
 * stopped the statement. A connection that breaks before the first row reached the consumer is
 * dropped and the statement runs once more on a fresh one (streamRetrying, retry.ts); after
 * that, the consumer hears the failure.
 */
import type { Socket } from 'node:net';
import type { PoolConnection } from 'mysql2';
import { mapDbError } from '../db/errors.js';
import { type ApiError, streamStalled, streamTakenBack, streamTooSlow } from '../errors.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import type { Stall } from './acquire.js';
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
  /**
   * The client's TCP socket the rows go to, if the sink has one: what its client takes is
   * measured there while the flow waits for it (acquire.ts).
   */
  socket?(): Socket | null;
}

export interface RowFlow {
  pause(): void;
  /**
   * `taken`: the bytes the consumer has passed on to the client so far, everything it was
   * given before this call (the client's pace, held against the minimum rate).
   */
  resume(taken: number): void;
  /** The consumer left: stop the statement; the sink hears nothing more. */
  cancel(): void;
}

/**
 * Where a connection goes back when the statement is over, and is told while the flow waits for
 * the client (acquire.ts).
 */
export interface Lender {
  giveBack(connection: PoolConnection, drop?: boolean): void;
  stalled(stall: Stall): void;
  flowing(stall: Stall): void;
}

export interface StreamOptions {
  /** Stops the statement running on a connection (by its thread id), from another connection. */
  readonly kill: (threadId: number) => Promise<void>;
  readonly stallMs: number;
  /** Bytes per second the client must take while the flow waits for it; 0: no minimum. */
  readonly minRate: number;
  /** Fails the statement if the server stops answering (watchdog.ts). */
  readonly watchdog: Watchdog;
  readonly lender: Lender;
}

/** A stall timer this late or later ran after a busy spell of this process, not on time. */
const LATE_SPELL_MS = 50;

export function streamRows(
  connection: PoolConnection,
  query: CompiledQuery,
  sink: RowSink,
  { kill, stallMs, minRate, watchdog, lender }: StreamOptions,
): RowFlow {
  let finished = false;
  /** Set once the statement is being killed: rows are dropped, the sink hears nothing more. */
  let killing: Promise<void> | null = null;
  let stallTimer: NodeJS.Timeout | undefined;
  /** When the flow paused for the client; 0 while it flows. */
  let pausedAt = 0;
  /**
   * The client's pace: milliseconds the flow has waited for it, and the bytes it had taken, since
   * the measure began (-1: not yet, it begins when the flow first resumes, once the socket's
   * buffers are full).
   */
  let waited = 0;
  let takenBefore = -1;
  /** Listed with the lender while the flow waits for the client (made once per statement). */
  const stall: Stall = {
    since: 0,
    connection,
    takeBack: (quietMs) => takeBack(quietMs),
    socket: () => sink.socket?.() ?? null,
    taken: -1,
    quietMs: 0,
    patience: 0,
    earlier: null,
    later: null,
    listed: false,
  };

  /**
   * The statement is over (mysql2 emits 'end' after 'error' too: only the first counts). A
   * connection that broke (or leads to a node without quorum) is dropped, not given back.
   */
  const finish = (broken = false): boolean => {
    if (finished) return false;
    finished = true;
    clearTimeout(stallTimer);
    lender.flowing(stall);
    watchdog.release(connection);
    connection.removeListener('error', onError);
    if (broken) lender.giveBack(connection, true);
    // Never hand the connection to someone else while our KILL QUERY may still be on its way.
    else if (killing) killing.finally(() => lender.giveBack(connection));
    else lender.giveBack(connection);
    return true;
  };

  const stop = () => {
    if (finished || killing) return;
    clearTimeout(stallTimer);
    lender.flowing(stall);
    killing = kill(connection.threadId).catch(() => {
      // The kill failed (server gone?): the connection cannot be trusted again.
      lender.giveBack(connection, true);
    });
    connection.resume();
  };

  /**
   * Taken back for a request that waits (acquire.ts): cut as a stalled one is, but the
   * connection leaves the pool at once, so the waiting request gets a fresh one without waiting
   * for the kill and the rows already on their way; the dropped one is killed and read to its
   * end meanwhile (its late errors matter to nobody).
   */
  const takeBack = (quietMs: number) => {
    if (finished || killing) return;
    const threadId = connection.threadId;
    finish(true);
    connection.on('error', () => {});
    kill(threadId).catch(() => {});
    connection.resume();
    sink.fail(streamTakenBack(quietMs));
  };

  /** The client is too slow to hold a connection: cut as a stalled one is. */
  const cut = (error: ApiError) => {
    if (finished || killing) return;
    stop();
    sink.fail(error);
  };

  /**
   * Whether the client, now that it took more, still keeps the minimum pace: checked each time
   * the flow has waited `stallMs` for it in all, then measured afresh.
   */
  const keepsPace = (taken: number): boolean => {
    if (takenBefore < 0) {
      takenBefore = taken;
      waited = 0;
      return true;
    }
    if (waited < stallMs) return true;
    if ((taken - takenBefore) * 1000 < minRate * waited) {
      cut(streamTooSlow(taken - takenBefore, waited, minRate));
      return false;
    }
    takenBefore = taken;
    waited = 0;
    return true;
  };

  /**
   * Cuts the flow once it has waited `ms` more for its client. After a busy spell of this
   * process, timers run before the socket events that came in meanwhile: the time it ran late is
   * given back (`credit`, at most `stallMs` in all, so a client that never reads is still cut),
   * and the cut waits for the I/O already in, so a client that did read on (its 'drain' still
   * queued) is not judged by a pause it did not make.
   */
  const armStall = (ms: number, credit: number) => {
    const due = Date.now() + ms;
    const timer = setTimeout(() => {
      const late = Date.now() - due;
      if (late >= LATE_SPELL_MS && credit > 0) {
        const given = Math.min(late, credit);
        armStall(given, credit - given);
        return;
      }
      setImmediate(() => {
        if (stallTimer === timer) cut(streamStalled(stallMs));
      });
    }, ms);
    stallTimer = timer;
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
    if (!killing && !finished) sink.row(row as unknown[]);
  });
  command.on('end', () => {
    if (finish() && !killing) sink.end();
  });
  command.on('error', onError);

  return {
    pause: () => {
      connection.pause();
      if (minRate > 0) pausedAt = Date.now();
      // Paused again while paused (rows the driver had already read): it waits since the first.
      if (!stall.listed && !finished && !killing) {
        stall.since = Date.now();
        lender.stalled(stall);
      }
      clearTimeout(stallTimer);
      armStall(stallMs, stallMs);
    },
    resume: (taken) => {
      clearTimeout(stallTimer);
      stallTimer = undefined;
      lender.flowing(stall);
      if (pausedAt !== 0) {
        waited += Date.now() - pausedAt;
        pausedAt = 0;
        if (!keepsPace(taken)) return;
      }
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
        socket: () => sink.socket?.() ?? null,
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
    resume: (taken) => current?.resume(taken),
    cancel: () => {
      cancelled = true;
      current?.cancel();
    },
  };
}
