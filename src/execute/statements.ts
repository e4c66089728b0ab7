/**
 * The statements that are not a stream, a write job or a call: a small SELECT's rows as arrays
 * (every small read's path, by callback: no promise) and its count, and the gateway's own small
 * reads and one-statement runs (schema, users, DDL) through promises. Each on a connection lent
 * by lending.ts and retried where that is safe (retry.ts).
 */
import type { FieldPacket, PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2';
import type { PoolConnection as PromiseConnection } from 'mysql2/promise';
import type { CompiledQuery } from '../sql/compiled-query.js';
import { bind } from './bind.js';
import { type Caller, GATEWAY } from './caller.js';
import type { CallerLimits } from './caller-limits.js';
import type { Lending } from './lending.js';
import { readRetrying, readRetryingBy, writeRetrying } from './retry.js';

/**
 * Rows a read of the gateway's own (rowsOf) takes in before it pauses its connection until the
 * next turn of the event loop: the schema's 10,000 column rows, parsed and made into objects in
 * one go, held the loop too long (bench/README.md, the schema re-read in slices).
 */
const ROWS_PER_TURN = 200;

/**
 * The promise face of a pool connection, made once per connection rather than on every
 * statement (each one is an EventEmitter with two listeners). It holds no state of its
 * own besides the connection, so every checkout of the same connection may share it. Not a memo
 * of compiled things (pipeline/memo.ts): the driver's per-connection object, dropped with it.
 */
const promiseFaces = new WeakMap<PoolConnection, PromiseConnection>();

function promiseOf(connection: PoolConnection): PromiseConnection {
  let face = promiseFaces.get(connection);
  if (face === undefined) {
    face = connection.promise();
    promiseFaces.set(connection, face);
  }
  return face;
}

/** One SELECT's rows as arrays, by callback. */
function selectOnce(
  lent: Lending,
  query: CompiledQuery,
  address: string,
  done: (error: unknown, rows?: unknown[][]) => void,
) {
  lent.usingBy<unknown[][]>(
    address,
    (held, finish) => {
      held.execute<RowDataPacket[][]>(query.sql, bind(query.params), (failure, rows) =>
        finish(failure, rows),
      );
    },
    done,
  );
}

/** A SELECT's rows as arrays, all at once; once more when its connection broke (retry.ts). */
export function selectArrays(
  lent: Lending,
  limits: CallerLimits,
  query: CompiledQuery,
  done: (error: unknown, rows?: unknown[][]) => void,
  caller: Caller = GATEWAY,
): void {
  const limited = limits.timed(query, caller);
  readRetryingBy((attempt) => selectOnce(lent, limited, caller.client, attempt), done);
}

/** A `SELECT COUNT(*)`: its one number. */
export function countOf(
  lent: Lending,
  limits: CallerLimits,
  query: CompiledQuery,
  caller?: Caller,
): Promise<number> {
  return new Promise((resolve, reject) => {
    selectArrays(
      lent,
      limits,
      query,
      (error, rows) => (error ? reject(error) : resolve(Number(rows?.[0]?.[0] ?? 0))),
      caller,
    );
  });
}

/**
 * A SELECT of the gateway's own (schema, users): its rows as objects keyed by column name. The
 * rows are taken as they arrive, the connection paused for a turn of the loop every
 * ROWS_PER_TURN rows (what arrived meanwhile waits, parsed later), so that a large result does
 * not hold other requests; a result of fewer rows is taken in at once.
 */
export function rowsOf<T extends object>(lent: Lending, query: CompiledQuery): Promise<T[]> {
  return readRetrying(() =>
    lent.using(
      GATEWAY.client,
      (held) =>
        new Promise<T[]>((resolve, reject) => {
          const rows: T[] = [];
          let names: string[] = [];
          let ended = false;
          const command =
            query.params.length === 0
              ? held.query(query.sql)
              : held.execute(query.sql, bind(query.params));
          command.on('fields', (fields: FieldPacket[] | undefined) => {
            names = (fields ?? []).map((field) => field.name);
          });
          // The pool's rows are arrays in select order (db/pool.ts, rowsAsArray).
          command.on('result', (row: unknown[]) => {
            const object: Record<string, unknown> = {};
            for (let at = 0; at < names.length; at++) object[names[at] as string] = row[at];
            rows.push(object as T);
            if (rows.length % ROWS_PER_TURN === 0) {
              held.pause();
              setImmediate(() => {
                if (!ended) held.resume();
              });
            }
          });
          command.on('error', (error: unknown) => {
            ended = true;
            reject(error);
          });
          command.on('end', () => {
            ended = true;
            resolve(rows);
          });
        }),
    ),
  );
}

/** One statement under autocommit (users, DDL), retried as a write (retry.ts). */
export function runStatement(
  lent: Lending,
  query: CompiledQuery,
): Promise<{ affectedRows: number; insertId: number }> {
  return writeRetrying((progress) =>
    lent.using(GATEWAY.client, async (held) => {
      const c = promiseOf(held);
      // The statement commits itself: lost after this, its outcome is unknown (retry.ts).
      progress.committing = true;
      const [result] =
        query.params.length === 0
          ? await c.query<ResultSetHeader>(query.sql)
          : await c.execute<ResultSetHeader>(query.sql, bind(query.params));
      return { affectedRows: result.affectedRows, insertId: result.insertId };
    }),
  );
}
