/**
 * The execute stage: every statement the gateway runs goes through this object. It owns the
 * pool (handed out within a bound, acquire.ts), a control connection of its own for KILL QUERY
 * and health pings (so neither waits behind the pool it is checking or freeing), and the
 * server's flavour (MariaDB and MySQL differ in statement time limits and JSON). With several
 * hosts (`-h db1,db2`) all of that is for the one host in use, and is rebuilt on the next host
 * when it stops answering (hosts.ts). Nothing else sees a mysql2 handle.
 *
 * Its parts: one host's pool, control connections and ping (backend.ts), the connections lent
 * and given back (lending.ts), each caller's time limit (caller-limits.ts), the small reads and
 * one-statement runs (statements.ts), and here a stream, a write job and a routine's call.
 */

import type { DbConfig, ServerKind } from '../db/pool.js';
import { MAX_ROUTINE_RESULT_CHARS } from '../limits.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import type { Flavour } from '../types/column-kind.js';
import type { PoolStats } from './acquire.js';
import { type Backend, type DatabaseOptions, openHosts } from './backend.js';
import { type CallJob, type CallResult, callRetrying, runCall } from './call.js';
import { type Caller, GATEWAY } from './caller.js';
import { type CallerLimits, callerLimits } from './caller-limits.js';
import type { HostEvents, HostSwitch } from './hosts.js';
import { Lending } from './lending.js';
import { writeRetrying, writeRetryingBy } from './retry.js';
import { countOf, rowsOf, runStatement, selectArrays } from './statements.js';
import { type RowFlow, type RowSink, streamRetrying } from './stream.js';
import { withTimeLimit } from './time-limit.js';
import {
  type ChainStep,
  runAlone,
  runChain,
  runTransaction,
  type WriteJob,
  type WriteResult,
} from './write.js';

export type { DatabaseOptions } from './backend.js';
export type { Caller, Flavour, PoolStats };

export interface Database {
  /** What the server in use is (with `-h db1,db2,…`, the host in use: hosts.ts). */
  readonly flavour: Flavour;
  /** Whether it is a Galera node, a Group Replication member or a single server. */
  readonly cluster: ServerKind['cluster'];
  /** Told when the gateway moves to another host of `-h` (main.ts logs it). */
  events: HostEvents;
  /**
   * A SELECT whose rows go to the sink as they arrive (stream.ts). Every method tries again
   * where that is safe (retry.ts). `caller`: whose request it is (caller.ts); the gateway's own
   * when absent. `rows`: the rows its answer is estimated to hold (0: unknown), its weight in
   * the pool's turns (acquire.ts).
   */
  stream(query: CompiledQuery, sink: RowSink, caller?: Caller, rows?: number): Promise<RowFlow>;
  /** A `SELECT COUNT(*)`: its one number. */
  count(query: CompiledQuery, caller?: Caller): Promise<number>;
  /**
   * A SELECT whose result the plan bounds (plan/small-read.ts): its rows as arrays in select
   * order, all at once, by callback (every small read's path: no promise); retried
   * like a stream whose connection broke before its first row.
   */
  arrays(
    query: CompiledQuery,
    done: (error: unknown, rows?: unknown[][]) => void,
    caller?: Caller,
  ): void;
  /** A small SELECT (schema, users): its rows as objects. */
  rows<T extends object = Record<string, unknown>>(query: CompiledQuery): Promise<T[]>;
  /** One statement under autocommit (users, DDL), retried as a write (retry.ts). */
  run(query: CompiledQuery): Promise<{ affectedRows: number; insertId: number }>;
  /**
   * A write job (write.ts): one autocommit statement or one transaction, as the job says; all or
   * none, retried where safe (retry.ts).
   */
  write(job: WriteJob, caller?: Caller): Promise<WriteResult>;
  /**
   * Several write jobs in one transaction on one connection, all or none (write.ts runChain),
   * each job's result in order; retried as one write. `failed.step` is the step a failure came
   * from.
   */
  writeChain(
    steps: readonly ChainStep[],
    caller?: Caller,
    failed?: { step: number },
  ): Promise<WriteResult[]>;
  /**
   * A stored routine's call (call.ts): on a connection of the caller's fair share, under the
   * caller's time limit, never inside a transaction of ours; a connection the routine left
   * changed, or whose call failed, is dropped rather than given back.
   */
  call(job: CallJob, caller?: Caller): Promise<CallResult>;
  /**
   * True when the server answers within `HEALTH_TIMEOUT_MS`; never waits behind the pool.
   * `fresh`: the answer comes from a ping sent after the call (not one already in flight).
   */
  ping(fresh?: boolean): Promise<boolean>;
  /** The pool right now, read-only (for metrics). */
  stats(): PoolStats;
  /** Streamed reads the pool took back for other requests (acquire.ts), for metrics. */
  takenBack(): number;
  close(): Promise<void>;
}

/** What a statement of a Database runs on: the hosts, their lent connections, the limits. */
interface Parts {
  readonly switcher: HostSwitch<Backend>;
  readonly lent: Lending;
  readonly limits: CallerLimits;
  readonly options: DatabaseOptions;
  readonly several: boolean;
}

/** A streamed SELECT; each attempt on the host in use at its start (a retry may go to the next host of -h). */
function streamRead(
  { switcher, lent, limits, options, several }: Parts,
  query: CompiledQuery,
  sink: RowSink,
  caller: Caller,
  rows: number,
): Promise<RowFlow> {
  let used = switcher.backend;
  // With several hosts, a failure tells the switch which host it came from.
  const told: RowSink = several
    ? {
        row: (values) => sink.row(values),
        end: () => sink.end(),
        socket: () => sink.socket?.() ?? null,
        fail: (error, cause) => {
          lent.report(used, cause);
          sink.fail(error, cause);
        },
      }
    : sink;
  return streamRetrying(
    () =>
      new Promise((resolve, reject) => {
        lent.borrow(
          caller.client,
          (error, held, backend) => {
            if (held === undefined || backend === undefined) {
              reject(error);
              return;
            }
            used = backend;
            resolve({
              connection: held,
              options: {
                kill: backend.kill,
                stallMs: options.stallTimeoutMs,
                minRate: options.minReadRate ?? 0,
                watchdog: backend.watchdog,
                lender: backend.acquirer,
              },
            });
          },
          rows,
        );
      }),
    limits.timed(query, caller),
    told,
  );
}

/** A write job: one transaction, or (most writes) one autocommit statement by callback. */
function writeJob({ lent, limits }: Parts, job: WriteJob, caller: Caller): Promise<WriteResult> {
  const address = caller.client;
  if (job.mode === 'transaction') {
    const run = limits.timedWrite(job, caller);
    return writeRetrying((progress) =>
      lent.using(address, (held) => runTransaction(held, run, progress)),
    );
  }
  // Most writes: one autocommit statement, run by callback (hot path).
  const alone = limits.ownLimit(caller)
    ? { ...job, statement: limits.timed(job.statement, caller) }
    : job;
  return writeRetryingBy<WriteResult>((progress, done) =>
    lent.usingBy(address, (held, finish) => runAlone(held, alone, progress, finish), done),
  );
}

/**
 * Several write jobs as one transaction on one connection (write.ts runChain), each under the
 * caller's time limit as alone; `failed.step` tells whose failure it was.
 */
function writeChainOf(
  { lent, limits }: Parts,
  steps: readonly ChainStep[],
  caller: Caller,
  failed: { step: number },
): Promise<WriteResult[]> {
  const timedSteps = steps.map(
    (step): ChainStep => ({
      ...step,
      job: async (earlier) => {
        const job = await step.job(earlier);
        if (job.mode === 'transaction') return limits.timedWrite(job, caller);
        return limits.ownLimit(caller)
          ? { ...job, statement: limits.timed(job.statement, caller) }
          : job;
      },
    }),
  );
  return writeRetrying((progress) =>
    lent.using(caller.client, (held) => runChain(held, timedSteps, progress, failed)),
  );
}

/** A stored routine's call, on a connection dropped after it unless the routine left it clean. */
function callRoutine(
  { switcher, lent, limits, options }: Parts,
  job: CallJob,
  caller: Caller,
): Promise<CallResult> {
  const limitMs = limits.ownLimit(caller) ? limits.anonymousMs : options.statementTimeoutMs;
  // The server's own limit is lifted for the call (0: none): MariaDB's would interrupt only
  // the statement running inside the routine, which then goes on. call.ts's timer kills the
  // connection at the caller's limit instead.
  const flavour = switcher.backend.server.flavour;
  const unlimited = withTimeLimit(flavour, job.statements.call, 0);
  const run: CallJob = { ...job, statements: { ...job.statements, call: unlimited } };
  return callRetrying(
    (progress) =>
      new Promise<CallResult>((resolve, reject) => {
        lent.borrow(caller.client, (error, held, backend) => {
          if (held === undefined || backend === undefined) {
            reject(error);
            return;
          }
          backend.watchdog.watch(held);
          const callOptions = {
            limitMs,
            maxChars: MAX_ROUTINE_RESULT_CHARS,
            kill: () => backend.end(held.threadId),
            progress,
          };
          runCall(held, run, callOptions).then(
            ({ result, drop }) => {
              backend.watchdog.release(held);
              backend.acquirer.giveBack(held, drop);
              resolve(result);
            },
            (failure: unknown) => {
              backend.watchdog.release(held);
              lent.report(backend, failure);
              backend.acquirer.giveBack(held, true);
              reject(failure);
            },
          );
        });
      }),
  );
}

/**
 * Connects (rejecting with the driver's error when it cannot; with several hosts, when none
 * answers: NoHostAnswered) and opens the pool on the first host of `-h` that answers.
 */
export async function openDatabase(config: DbConfig, options: DatabaseOptions): Promise<Database> {
  const switcher = await openHosts(config, options);
  const several = config.otherHosts !== undefined && config.otherHosts.length > 0;
  const lent = new Lending(switcher, several);
  const limits = callerLimits(options, () => switcher.backend.server.flavour);
  const parts: Parts = { switcher, lent, limits, options, several };
  return {
    get flavour() {
      return switcher.backend.server.flavour;
    },
    get cluster() {
      return switcher.backend.server.cluster;
    },
    get events() {
      return switcher.events;
    },
    set events(events: HostEvents) {
      switcher.events = events;
    },
    stream: (query, sink, caller = GATEWAY, rows = 0) =>
      streamRead(parts, query, sink, caller, rows),
    count: (query, caller) => countOf(lent, limits, query, caller),
    arrays: (query, done, caller) => selectArrays(lent, limits, query, done, caller),
    rows: <T extends object>(query: CompiledQuery) => rowsOf<T>(lent, query),
    run: (query) => runStatement(lent, query),
    write: (job, caller = GATEWAY) => writeJob(parts, job, caller),
    writeChain: (steps, caller = GATEWAY, failed = { step: 0 }) =>
      writeChainOf(parts, steps, caller, failed),
    call: (job, caller = GATEWAY) => callRoutine(parts, job, caller),
    ping: (fresh) => switcher.backend.ping(fresh),
    stats: () => switcher.backend.acquirer.stats(),
    takenBack: () => switcher.backend.acquirer.takenBackCount(),
    close: () => switcher.close(),
  };
}
