/**
 * A stored routine's call on one connection (docs/routines.md): the INOUT values put into
 * session variables, the CALL (or a function's SELECT) with every result set's rows serialized
 * as they arrive, the OUT values read back, the variables emptied again.
 *
 * No transaction is wrapped around the call: a procedure may start its own and COMMIT inside,
 * and otherwise each of its statements commits by itself, as for any client under autocommit.
 * What the routine leaves on its connection decides whether the connection serves again:
 * - a failure: whatever transaction it left open is rolled back, and the connection dropped (a
 *   routine that failed half-way may have changed its session in ways no status reports);
 * - a transaction still open when it returns: rolled back, the connection dropped, and the call
 *   answered ROUTINE_TRANSACTION_OPEN — nothing of it may be committed later by someone else's
 *   statement on that connection;
 * - autocommit switched off, or a session variable changed (time zone, character set, the
 *   statement time limit, … — session tracking of every system variable reports it): the
 *   connection is dropped after the answer, so no later statement runs in that session.
 * Past the caller's time limit the connection itself is killed: KILL QUERY stops only the
 * statement running inside the routine (an interrupted SLEEP just returns, and the routine goes
 * on), while a killed connection stops the routine and rolls back its open transaction.
 */
import type { FieldPacket, PoolConnection, ResultSetHeader } from 'mysql2';
import { failureOf } from '../db/errors.js';
import {
  queryTimeout,
  routineResultTooLarge,
  routineTransactionOpen,
  writeOutcomeUnknown,
} from '../errors.js';
import type { CompiledCall, CompiledQuery } from '../sql/compiled-query.js';
import type { RowSerializer } from '../types/rows.js';
import { bind } from './bind.js';
import type { WriteProgress } from './write.js';

export interface CallJob {
  readonly statements: CompiledCall;
  /** The serializer of a result set's rows, made from its columns as MySQL describes them. */
  readonly resultSet: (fields: readonly FieldPacket[]) => RowSerializer;
  /** The serializer of the one row of OUT values; null when there are none. */
  readonly outRow: RowSerializer | null;
}

export interface CallResult {
  /** Every result set in order, each its rows as JSON objects' text. */
  readonly sets: readonly (readonly string[])[];
  /** The OUT and INOUT values as one JSON object's text; null when there are none. */
  readonly out: string | null;
}

export interface CallOptions {
  /** The caller's statement time limit. */
  readonly limitMs: number;
  /** The most characters of JSON the result sets may take together. */
  readonly maxChars: number;
  /** Ends the connection from another one (KILL CONNECTION). */
  readonly kill: () => Promise<void>;
  /** Marked just before the CALL is sent: from then on it may have changed data. */
  readonly progress: WriteProgress;
}

/** A call's result, and whether its connection must not serve again. */
export interface CallOutcome {
  readonly result: CallResult;
  readonly drop: boolean;
}

// Server status flags of an OK packet (MySQL's include/mysql_com.h).
const SERVER_STATUS_IN_TRANS = 0x0001;
const SERVER_STATUS_AUTOCOMMIT = 0x0002;
const SERVER_SESSION_STATE_CHANGED = 0x4000;

/**
 * System variables a call's statement sets and puts back itself: on MariaDB the call runs under
 * `SET STATEMENT max_statement_time = 0 FOR …` (execute/database.ts), which restores the
 * variable when the statement ends — even after the routine set it — yet is reported as a
 * change. (MySQL has no such variable.)
 */
const RESTORED: ReadonlySet<string> = new Set(['max_statement_time']);

/** What the routine left on its session, by its final OK packet. */
export type Aftermath = 'clean' | 'changed' | 'transaction-open';

/** The final OK packet of a call: its status flags, and the system variables it reports changed. */
export interface CallStatus {
  readonly flags: number;
  /** Names, when the packet lists them (session tracking). */
  readonly changed?: readonly string[];
}

/**
 * `status` undefined: no OK packet (a function's SELECT), whose statement could neither open a
 * transaction nor switch autocommit (MySQL refuses both in a function). `tracked`: the
 * connection reports changed system variables (see trackSession).
 */
export function aftermath(status: CallStatus | undefined, tracked: boolean): Aftermath {
  if (status === undefined) return 'clean';
  const { flags, changed } = status;
  if ((flags & SERVER_STATUS_IN_TRANS) !== 0) return 'transaction-open';
  if ((flags & SERVER_STATUS_AUTOCOMMIT) === 0 || !tracked) return 'changed';
  if ((flags & SERVER_SESSION_STATE_CHANGED) === 0) return 'clean';
  const lasting = changed?.filter((name) => !RESTORED.has(name.toLowerCase()));
  return lasting === undefined || lasting.length > 0 ? 'changed' : 'clean';
}

/** The OK packet as mysql2 reads it, with session tracking's report when there is one. */
type OkPacket = ResultSetHeader & { stateChanges?: { systemVariables?: object } };

function statusOf(packet: OkPacket): CallStatus {
  const variables = packet.stateChanges?.systemVariables;
  return variables === undefined
    ? { flags: packet.serverStatus }
    : { flags: packet.serverStatus, changed: Object.keys(variables) };
}

/** Connections whose session reports every system variable a statement changes. */
const tracking = new WeakSet<PoolConnection>();
/** Connections whose server would not track them: every call ends them (see aftermath). */
const untracked = new WeakSet<PoolConnection>();

function run(connection: PoolConnection, sql: string, params: readonly unknown[] = []) {
  return new Promise<unknown>((resolve, reject) => {
    const done = (error: unknown, result?: unknown) => (error ? reject(error) : resolve(result));
    if (params.length === 0) connection.query(sql, done);
    else connection.execute(sql, bind(params), done);
  });
}

/**
 * Asks the server, once per connection, to report a change of any system variable in the OK
 * packet of the statement that made it (session_track_system_variables, MySQL 5.7+, MariaDB
 * 10.2+; the default tracks only a few).
 */
async function trackSession(connection: PoolConnection): Promise<void> {
  if (tracking.has(connection) || untracked.has(connection)) return;
  try {
    await run(connection, "SET SESSION session_track_system_variables = '*'");
    tracking.add(connection);
  } catch (error) {
    if (failureOf(error) !== 'other') throw error;
    untracked.add(connection);
  }
}

/** The rows of a query, all at once (the OUT values: one row). */
async function rowsOf(connection: PoolConnection, query: CompiledQuery): Promise<unknown[][]> {
  return (await run(connection, query.sql, query.params)) as unknown[][];
}

/**
 * The CALL, its result sets serialized row by row as they arrive; the status of its final OK
 * packet. Stops (by `stop`) once the rows pass `maxChars`.
 */
function runStatement(
  connection: PoolConnection,
  query: CompiledQuery,
  job: CallJob,
  maxChars: number,
  stop: () => void,
): Promise<{ sets: string[][]; status: CallStatus | undefined }> {
  return new Promise((resolve, reject) => {
    const sets: string[][] = [];
    let rows: string[] = [];
    let serialize: RowSerializer | null = null;
    let chars = 0;
    let status: CallStatus | undefined;
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      connection.removeListener('error', fail);
      reject(error);
    };
    // A server that dies mid-call is reported on the connection, not on a command without a
    // callback (execute/stream.ts): without this the call would wait for ever.
    connection.once('error', fail);
    const command = connection.execute(query.sql, bind(query.params));
    command.on('fields', (fields?: FieldPacket[]) => {
      if (fields === undefined) return; // an OK packet follows
      serialize = job.resultSet(fields);
      rows = [];
      sets.push(rows);
    });
    command.on('result', (row: unknown) => {
      if (settled) return;
      if (!Array.isArray(row)) {
        status = statusOf(row as OkPacket);
        return;
      }
      if (serialize === null) return;
      const text = serialize(row);
      chars += text.length + 1;
      rows.push(text);
      if (chars > maxChars) {
        fail(routineResultTooLarge(maxChars));
        stop();
      }
    });
    command.on('error', fail);
    command.on('end', () => {
      if (settled) return;
      settled = true;
      connection.removeListener('error', fail);
      resolve({ sets, status });
    });
  });
}

/**
 * Runs the call on `connection` (see the module's header). Rejects with the error to answer;
 * the connection must then be dropped.
 */
export async function runCall(
  connection: PoolConnection,
  job: CallJob,
  { limitMs, maxChars, kill, progress }: CallOptions,
): Promise<CallOutcome> {
  const { seed, call, outs, clear } = job.statements;
  let timedOut = false;
  let killing: Promise<void> | null = null;
  const end = () => {
    killing ??= kill().catch(() => {});
  };
  const timer = setTimeout(() => {
    timedOut = true;
    end();
  }, limitMs);
  try {
    await trackSession(connection);
    if (seed !== null) await run(connection, seed.sql, seed.params);
    progress.committing = true;
    const { sets, status } = await runStatement(connection, call, job, maxChars, end);
    clearTimeout(timer);
    if (timedOut) throw queryTimeout();
    const left = aftermath(status, tracking.has(connection));
    if (left === 'transaction-open') throw routineTransactionOpen();
    let out: string | null = null;
    if (outs !== null && job.outRow !== null) {
      const [row] = await rowsOf(connection, outs);
      out = job.outRow(row ?? []);
    }
    if (clear !== null) await run(connection, clear.sql, clear.params);
    return { result: { sets, out }, drop: left === 'changed' };
  } catch (error) {
    clearTimeout(timer);
    // Killed for its time, or cut short: the routine's own error is not the answer.
    const answer = timedOut ? queryTimeout() : error;
    if (killing === null) await run(connection, 'ROLLBACK').catch(() => {});
    else await killing;
    throw answer;
  }
}

/**
 * Runs a call, once more when the connection broke (or led to a Galera node without quorum)
 * before the CALL was sent; broken after it, the routine may have written: 503
 * WRITE_OUTCOME_UNKNOWN. Never again after any other failure: a routine that failed half-way
 * may have committed its first statements (execute/retry.ts retries only whole writes).
 */
export async function callRetrying<T>(
  attempt: (progress: WriteProgress) => Promise<T>,
): Promise<T> {
  const progress: WriteProgress = { committing: false };
  try {
    return await attempt(progress);
  } catch (error) {
    const failure = failureOf(error);
    if (progress.committing) {
      if (failure === 'lost' || failure === 'silent') throw writeOutcomeUnknown();
      throw error;
    }
    if (failure !== 'lost' && failure !== 'node-not-ready') throw error;
    return attempt({ committing: false });
  }
}
