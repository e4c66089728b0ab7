/**
 * Trying a statement again when that is safe (docs/operations.md). Behind a proxy in front of a
 * cluster a fresh connection may reach another, healthy node; on one server it replaces a
 * connection that broke. What is safe follows from where the failure left the server
 * (db/errors.ts failureOf):
 *
 * - A read that failed on a lost connection or a node without quorum is run once more: it
 *   changed nothing. A stream only while no row has reached its consumer (stream.ts).
 * - A write the server rolled back whole (deadlock, Galera certification failure) or refused
 *   before running it (node without quorum) is run again, WRITE_ATTEMPTS times in all: nothing of
 *   it was committed. Past the bound the last error is answered (409 ER_LOCK_DEADLOCK, 503).
 * - A write whose connection broke before its COMMIT was sent is run again once: the server
 *   rolls back a transaction whose connection goes away. Broken after the COMMIT (or the one
 *   autocommit statement) was sent, the write may or may not be stored: trying again could
 *   store it twice, so the answer is 503 WRITE_OUTCOME_UNKNOWN.
 * - Never a lock wait timeout (it would wait as long again) nor a server that stopped answering
 *   pings (the watchdog's cut: the same silence again).
 */
import { type Failure, failureOf } from '../db/errors.js';
import { writeOutcomeUnknown } from '../errors.js';
import { RETRY_PAUSE_MAX_MS, RETRY_PAUSE_MIN_MS, WRITE_ATTEMPTS } from '../limits.js';
import type { WriteProgress } from './write.js';

/** A read may run once more after this failure (the connection it failed on is dropped). */
export function rereadable(error: unknown): boolean {
  const failure = failureOf(error);
  return failure === 'lost' || failure === 'node-not-ready';
}

/**
 * The connection a statement failed on must not serve again: it is broken, or it leads to a
 * node without quorum (the next one opened may reach a healthy node).
 */
export function dropsConnection(error: unknown): boolean {
  const failure: Failure = failureOf(error);
  return failure === 'lost' || failure === 'silent' || failure === 'node-not-ready';
}

/** Runs a read; once more when it failed on a connection that broke. */
export function readRetrying<T>(attempt: () => Promise<T>): Promise<T> {
  // A promise chain, not an async function: every read passes here.
  let first: Promise<T>;
  try {
    first = attempt();
  } catch (error) {
    first = Promise.reject(error);
  }
  return first.catch((error: unknown) => {
    if (!rereadable(error)) throw error;
    return attempt();
  });
}

/** readRetrying by callback, for the small reads (hot path: no promise). */
export function readRetryingBy<T>(
  attempt: (done: (error: unknown, value?: T) => void) => void,
  done: (error: unknown, value?: T) => void,
): void {
  attempt((error, value) => {
    if (error === null || error === undefined || !rereadable(error)) done(error, value);
    else attempt(done);
  });
}

/**
 * Runs a write, again while the failure left nothing committed (see above). `attempt` runs the
 * whole write on a connection of its own and marks `progress` before it commits.
 */
export function writeRetrying<T>(attempt: (progress: WriteProgress) => Promise<T>): Promise<T> {
  // The first attempt without an async function's promise and turns: nearly every write
  // succeeds at once. A failure goes to the loop below, which counts it as attempt 1.
  const progress: WriteProgress = { committing: false };
  let first: Promise<T>;
  try {
    first = attempt(progress);
  } catch (error) {
    first = Promise.reject(error);
  }
  return first.catch((error: unknown) => retryWrite(attempt, error, progress));
}

/**
 * writeRetrying for an attempt by callback (the execute stage's one-statement writes, hot path:
 * no promise but this one when the first attempt succeeds); after a failure the same loop.
 */
export function writeRetryingBy<T>(
  attempt: (progress: WriteProgress, done: (error: unknown, value?: T) => void) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const progress: WriteProgress = { committing: false };
    settleBy(attempt, progress, (error, value) => {
      if (error === null || error === undefined) resolve(value as T);
      else retryWrite((again) => promised(attempt, again), error, progress).then(resolve, reject);
    });
  });
}

/** Runs a callback attempt; one that throws has failed with what it threw. */
function settleBy<T>(
  attempt: (progress: WriteProgress, done: (error: unknown, value?: T) => void) => void,
  progress: WriteProgress,
  done: (error: unknown, value?: T) => void,
): void {
  try {
    attempt(progress, done);
  } catch (thrown) {
    done(thrown);
  }
}

function promised<T>(
  attempt: (progress: WriteProgress, done: (error: unknown, value?: T) => void) => void,
  progress: WriteProgress,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    settleBy(attempt, progress, (error, value) =>
      error === null || error === undefined ? resolve(value as T) : reject(error),
    );
  });
}

/** After attempt 1 failed with `error`: again while that is safe and attempts are left. */
async function retryWrite<T>(
  attempt: (progress: WriteProgress) => Promise<T>,
  error: unknown,
  progress: WriteProgress,
): Promise<T> {
  let lostOnce = false;
  let failed = error;
  let failedProgress = progress;
  for (let attempts = 1; ; attempts++) {
    const failure = failureOf(failed);
    const broken = failure === 'lost' || failure === 'silent';
    if (broken && failedProgress.committing) throw writeOutcomeUnknown();
    const again =
      attempts < WRITE_ATTEMPTS &&
      (failure === 'rolled-back' ||
        failure === 'node-not-ready' ||
        (failure === 'lost' && !lostOnce));
    if (!again) throw failed;
    if (failure === 'lost') lostOnce = true;
    await pause();
    failedProgress = { committing: false };
    try {
      return await attempt(failedProgress);
    } catch (next) {
      failed = next;
    }
  }
}

/** A random pause within the bounds: writers that collided do not meet again in step. */
function pause(): Promise<void> {
  const ms = RETRY_PAUSE_MIN_MS + Math.random() * (RETRY_PAUSE_MAX_MS - RETRY_PAUSE_MIN_MS);
  return new Promise((resolve) => setTimeout(resolve, ms));
}
