/**
 * The time limit a caller's statements run under (caller.ts): a request without a token has
 * --anonymous-query-timeout when it differs from the session's limit (db/pool.ts), which the
 * statements then carry themselves (time-limit.ts); everyone else runs under the session's.
 */
import type { ServerKind } from '../db/pool.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import type { Caller } from './caller.js';
import { withTimeLimit } from './time-limit.js';
import type { TransactionJob } from './write.js';

export interface CallerLimits {
  /** The limit of a request without a token, in ms. */
  readonly anonymousMs: number;
  /** Whether `caller`'s statements run under a limit of their own. */
  ownLimit(caller: Caller): boolean;
  /** The statement as it runs for `caller` (a new query object only under a limit of its own). */
  timed(query: CompiledQuery, caller: Caller): CompiledQuery;
  /** A transaction's statements, guards and read-back as they run for `caller`. */
  timedWrite(job: TransactionJob, caller: Caller): TransactionJob;
}

/** `flavour`: the server in use now (a move to another host of `-h` may change it). */
export function callerLimits(
  options: { readonly statementTimeoutMs: number; readonly anonymousTimeoutMs?: number },
  flavour: () => ServerKind['flavour'],
): CallerLimits {
  const anonymousMs = options.anonymousTimeoutMs ?? options.statementTimeoutMs;
  const ownLimit = (caller: Caller) =>
    caller.anonymous && anonymousMs !== options.statementTimeoutMs;
  const timed = (query: CompiledQuery, caller: Caller): CompiledQuery =>
    ownLimit(caller) ? withTimeLimit(flavour(), query, anonymousMs) : query;
  const timedWrite = (job: TransactionJob, caller: Caller): TransactionJob => {
    if (!ownLimit(caller)) return job;
    const timedAll = (queries: readonly CompiledQuery[] | null) =>
      queries?.map((query) => timed(query, caller)) ?? null;
    const { readBack, precondition } = job;
    return {
      ...job,
      ...(precondition && {
        precondition: { ...precondition, lock: timed(precondition.lock, caller) },
      }),
      statements: job.statements.map((statement) => timed(statement, caller)),
      guards: job.guards.map((guard) => ({
        ...guard,
        lookup: guard.lookup === null ? null : timed(guard.lookup, caller),
        queries: (outcome) => timedAll(guard.queries(outcome)),
      })),
      readBack:
        readBack === null
          ? null
          : {
              lookup: readBack.lookup === null ? null : timed(readBack.lookup, caller),
              queries: (outcome) => timedAll(readBack.queries(outcome)) ?? [],
            },
    };
  };
  return { anonymousMs, ownLimit, timed, timedWrite };
}
