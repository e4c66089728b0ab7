/**
 * Writes as one transaction on one connection: all statements or none. A statement that left a
 * warning meaning a value was changed on its way in (strict mode lets DECIMAL rounding pass as a
 * Note) rolls everything back and is answered like the error. Each guard (an authorization
 * policy's row condition) may read rows first (its lookup, a SELECT … FOR UPDATE) and then, after
 * the statements, runs the SELECTs it makes of what they answered, in the same transaction: a row
 * back means the write broke the rule, and everything is rolled back with the guard's error.
 * A row limit (`Prefer: max-affected`) is checked after the statements the same way, and the
 * written rows may be read back (`Prefer: return=representation`) just before the COMMIT. A job
 * of one statement proven exact runs alone under autocommit instead (WriteJob's `mode`).
 */
import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2';
import { mapDataWarnings } from '../db/errors.js';
import { type ApiError, tooManyRows } from '../errors.js';
import type {
  CompiledGuard,
  CompiledReadBack,
  ReturnedRows,
  StatementResult,
} from '../sql/compile-write.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import { bind } from './bind.js';

/** A check of the written rows (sql/compile-write.ts) and the error that refuses the write. */
export interface WriteGuard extends CompiledGuard {
  readonly error: () => ApiError;
}

/**
 * If-Match (pipeline/precondition.ts): the row read with a lock (SELECT … FOR UPDATE) before
 * anything else in the transaction, and whether what it found lets the write go on; else
 * everything is rolled back with `error`.
 */
export interface WritePrecondition {
  readonly lock: CompiledQuery;
  readonly holds: (rows: readonly unknown[][]) => boolean;
  readonly error: () => ApiError;
}

/**
 * Everything a write runs, and how: decided once by the write pipeline (pipeline/write.ts), never
 * again here.
 * - `alone`: the one statement under autocommit, one round trip instead of BEGIN + statement +
 *   COMMIT. Only for a statement proven unable to leave a data warning (plan/exact-write.ts),
 *   without guards, a row limit or a read-back: a single statement is atomic by itself, and the
 *   transaction only served to take back a write MySQL changed silently, which the proof rules
 *   out.
 * - `transaction`: the guards' lookups, the statements, the row limit, the guards' checks and the
 *   read-back, then COMMIT; anything failing rolls everything back.
 */
export type WriteJob =
  | {
      readonly mode: 'alone';
      readonly statement: CompiledQuery;
      /** Drop the prepared statement after use (see the transaction's `unprepare`). */
      readonly unprepare: boolean;
      /** The statement returns the rows it wrote (`INSERT … RETURNING`), shaped so; else null. */
      readonly returning: ReturnedRows | null;
    }
  | {
      readonly mode: 'transaction';
      readonly statements: readonly CompiledQuery[];
      /**
       * Drop each prepared statement after use: multi-row INSERT texts rarely repeat, and each
       * cached one holds a server-side statement.
       */
      readonly unprepare: boolean;
      readonly guards: readonly WriteGuard[];
      /** `Prefer: max-affected`: more rows affected than this roll everything back (400). */
      readonly maxAffected: number | null;
      /** `Prefer: return=representation`: the written rows read back before the COMMIT. */
      readonly readBack: CompiledReadBack | null;
      /**
       * The written table's generated columns: MySQL's notes that it rounded their expressions
       * are no refusal (db/errors.ts mapDataWarnings).
       */
      readonly generated: readonly string[];
      /** If-Match: checked first, on the locked row; absent for a write without it. */
      readonly precondition?: WritePrecondition;
    };

export type TransactionJob = Extract<WriteJob, { mode: 'transaction' }>;

export interface WriteResult {
  readonly affectedRows: number;
  /** The first auto-increment id of the first statement; null when there is none. */
  readonly insertId: number | string | null;
  /** The rows the job's read-back found, as arrays in select order; null without one. */
  readonly rows: readonly (readonly unknown[])[] | null;
}

/**
 * Where a write is, for execute/retry.ts: a connection lost before `committing` left nothing
 * behind (the server rolls back a transaction whose connection goes away); lost after it, the
 * write may or may not be stored. Set just before the COMMIT (or the one autocommit statement)
 * is handed to the driver, never after: an early mark only turns a safe retry into an honest
 * "unknown", a late one could double a write.
 */
export interface WriteProgress {
  committing: boolean;
}

/** `SHOW WARNINGS` as the pool's array rows (db/pool.ts): Level, Code, Message. */
type WarningRow = RowDataPacket & [string, number, string];

/**
 * The driver's callback API as promises. Not mysql2/promise: it makes an Error on every call to
 * keep the caller's stack, on every statement; the driver's own error is rejected as
 * it is, and the error handler maps it the same.
 */
function execute<T extends ResultSetHeader | RowDataPacket[]>(
  connection: PoolConnection,
  statement: CompiledQuery,
): Promise<T> {
  return new Promise((resolve, reject) => {
    connection.execute<T>(statement.sql, bind(statement.params), (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

function control(
  connection: PoolConnection,
  step: 'beginTransaction' | 'commit' | 'rollback',
): Promise<void> {
  return new Promise((resolve, reject) => {
    connection[step]((error: unknown) => (error ? reject(error) : resolve()));
  });
}

/**
 * The guards' lookups, the statements, the row limit, then the guards' checks and the read-back,
 * in one transaction (a job the pipeline made a `transaction`).
 */
export async function runTransaction(
  connection: PoolConnection,
  job: TransactionJob,
  progress: WriteProgress,
): Promise<WriteResult> {
  let committed = false;
  try {
    // BEGIN and the first statement go out together (mysql2 queues both on the connection):
    // one round trip fewer than awaiting BEGIN first.
    const result = await runSteps(connection, job, control(connection, 'beginTransaction'));
    progress.committing = true;
    await control(connection, 'commit');
    committed = true;
    return result;
  } finally {
    // A broken connection cannot roll back; the server rolls back when it goes away.
    if (!committed) await control(connection, 'rollback').catch(() => {});
  }
}

/**
 * A job's own work inside a transaction someone else begins and ends: `begun`, when not null,
 * is the BEGIN still on its way, awaited with the first statement.
 */
async function runSteps(
  connection: PoolConnection,
  { statements, unprepare, guards, maxAffected, readBack, generated, precondition }: TransactionJob,
  begin: Promise<void> | null,
): Promise<WriteResult> {
  let begun = begin;
  const run = async <T extends ResultSetHeader | RowDataPacket[]>(statement: CompiledQuery) => {
    const executing = execute<T>(connection, statement);
    if (begun === null) return executing;
    const first = begun;
    begun = null;
    return (await Promise.all([first, executing]))[1];
  };
  // The row is locked until the COMMIT: no other write can change it between check and write.
  if (precondition !== undefined) {
    const locked = (await run<RowDataPacket[]>(precondition.lock)) as unknown[][];
    if (!precondition.holds(locked)) throw precondition.error();
  }
  // Rows come as arrays: the pool sets rowsAsArray (db/pool.ts).
  const found: unknown[][][] = [];
  for (const guard of guards) {
    found.push(guard.lookup ? ((await run<RowDataPacket[]>(guard.lookup)) as unknown[][]) : []);
  }
  const lookedUp = readBack?.lookup
    ? ((await run<RowDataPacket[]>(readBack.lookup)) as unknown[][])
    : [];
  const results: StatementResult[] = [];
  let affectedRows = 0;
  for (const statement of statements) {
    const result = await run<ResultSetHeader>(statement);
    if (unprepare) connection.unprepare(statement.sql);
    if (result.warningStatus !== 0) await refuseDataWarnings(connection, generated);
    affectedRows += result.affectedRows;
    results.push({
      affectedRows: result.affectedRows,
      insertId: publicInsertId(result.insertId),
    });
  }
  if (maxAffected !== null && affectedRows > maxAffected) {
    throw tooManyRows(affectedRows, maxAffected);
  }
  for (const [index, guard] of guards.entries()) {
    const queries = guard.queries({ found: found[index] ?? [], results });
    if (queries === null) throw guard.error();
    for (const query of queries) {
      const rows = await run<RowDataPacket[]>(query);
      // A check's text varies with the number of rows it looks up.
      connection.unprepare(query.sql);
      if (rows.length > 0) throw guard.error();
    }
  }
  let rows: unknown[][] | null = null;
  if (readBack !== null) {
    rows = [];
    for (const query of readBack.queries({ found: lookedUp, results })) {
      for (const row of (await run<RowDataPacket[]>(query)) as unknown[][]) rows.push(row);
      if (unprepare) connection.unprepare(query.sql);
    }
  }
  if (begun !== null) await begun;
  return { affectedRows, insertId: results[0]?.insertId ?? null, rows };
}

/**
 * One step of a chain (runChain): the job it runs, made from the results of the steps before
 * it (a deep insert's children take their parent's key from its result: pipeline/deep-insert.ts).
 * Throwing refuses the whole chain; so does `check` throwing on the job's result (a `$batch`
 * update by key that found no row is its 404, inside the transaction).
 */
export interface ChainStep {
  /** A promise when the job is planned only now (a `$batch` write naming an earlier one). */
  readonly job: (earlier: readonly WriteResult[]) => WriteJob | Promise<WriteJob>;
  readonly check?: (result: WriteResult) => void;
}

/**
 * Several write jobs in one transaction on one connection, in order, all or none: a deep insert
 * (a row and its children) or a `$batch` change set. Each job runs as it would alone (its guards,
 * row limit and read-back, its data warnings refused), but inside the one transaction: an
 * `alone` job's statement is simply one more statement in it. The first failure rolls
 * everything back and is thrown as it is; `at.step` says whose it was (the caller tells its
 * client which request broke).
 */
export async function runChain(
  connection: PoolConnection,
  steps: readonly ChainStep[],
  progress: WriteProgress,
  at: { step: number },
): Promise<WriteResult[]> {
  let committed = false;
  try {
    let begin: Promise<void> | null = control(connection, 'beginTransaction');
    const results: WriteResult[] = [];
    for (const [index, step] of steps.entries()) {
      at.step = index;
      const job = await step.job(results);
      const transaction = job.mode === 'transaction' ? job : asTransaction(job);
      results.push(
        job.mode === 'alone' && job.returning !== null
          ? returned(
              (await withBegin(
                begin,
                execute<RowDataPacket[]>(connection, job.statement),
              )) as unknown as unknown[][],
              job.returning,
            )
          : await runSteps(connection, transaction, begin),
      );
      begin = null;
      step.check?.(results[index] as WriteResult);
    }
    if (begin !== null) await begin;
    progress.committing = true;
    await control(connection, 'commit');
    committed = true;
    return results;
  } finally {
    if (!committed) await control(connection, 'rollback').catch(() => {});
  }
}

async function withBegin<T>(begin: Promise<void> | null, executing: Promise<T>): Promise<T> {
  if (begin === null) return executing;
  return (await Promise.all([begin, executing]))[1];
}

/**
 * An `alone` job's statement as a transaction's only statement (no guard, limit or read-back);
 * `generated` names the table's generated columns where the transaction needs them.
 */
export function asTransaction(
  job: Extract<WriteJob, { mode: 'alone' }>,
  generated: readonly string[] = [],
): TransactionJob {
  return {
    mode: 'transaction',
    statements: [job.statement],
    unprepare: job.unprepare,
    guards: [],
    maxAffected: null,
    readBack: null,
    generated,
  };
}

/**
 * One statement under autocommit (a job the pipeline made `alone`), by callback: most writes
 * take this path, and the execute stage runs their first attempt without a promise.
 * `done` gets null and the result, or the error.
 */
export function runAlone(
  connection: PoolConnection,
  { statement, unprepare, returning }: Extract<WriteJob, { mode: 'alone' }>,
  progress: WriteProgress,
  done: (error: unknown, result?: WriteResult) => void,
): void {
  // The statement commits itself.
  progress.committing = true;
  connection.execute<ResultSetHeader>(statement.sql, bind(statement.params), (error, result) => {
    if (error) {
      done(error);
      return;
    }
    if (unprepare) connection.unprepare(statement.sql);
    if (returning !== null) {
      done(null, returned(result as unknown as unknown[][], returning));
      return;
    }
    const written = {
      affectedRows: result.affectedRows,
      insertId: publicInsertId(result.insertId),
      rows: null,
    };
    // Cannot happen when the pipeline's proof holds; if it ever did, the client still hears the
    // error rather than a success for a changed value.
    if (result.warningStatus === 0) done(null, written);
    else refuseDataWarnings(connection, []).then(() => done(null, written), done);
  });
}

/**
 * The result of an `INSERT … RETURNING`: a row per row inserted (a result set has no OK packet
 * to count them or carry the insert id, so the rows do). Its statement was proven exact like
 * any alone (no data warning to look for).
 */
function returned(rows: readonly unknown[][], shape: ReturnedRows): WriteResult {
  const { width, visibleAt, insertIdAt } = shape;
  const first = rows[0];
  const id = insertIdAt === null || first === undefined ? null : first[insertIdAt];
  const visible = visibleAt === null ? rows : rows.filter((row) => Number(row[visibleAt]) === 1);
  return {
    affectedRows: rows.length,
    insertId: typeof id === 'number' || typeof id === 'string' ? publicInsertId(id) : null,
    rows: visible.map((row) => (row.length === width ? row : row.slice(0, width))),
  };
}

/** A statement MySQL let through with a data warning is answered like the error. */
async function refuseDataWarnings(
  connection: PoolConnection,
  generated: readonly string[],
): Promise<void> {
  const warnings = await new Promise<WarningRow[]>((resolve, reject) => {
    connection.query<WarningRow[]>('SHOW WARNINGS', (error, rows) =>
      error ? reject(error) : resolve(rows),
    );
  });
  const error = mapDataWarnings(
    warnings.map(([Level, Code, Message]) => ({ Level, Code, Message })),
    generated,
  );
  if (error) throw error;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The OK packet's last insert id as JSON: null for 0 (no auto-increment column), a number while
 * exact, else a string. mysql2 reads it as signed, so ids of BIGINT UNSIGNED past 2^63 arrive
 * negative; insert ids never are.
 */
export function publicInsertId(value: number | string): number | string | null {
  const id = BigInt.asUintN(64, BigInt(value));
  if (id === 0n) return null;
  return id <= MAX_SAFE ? Number(id) : id.toString();
}
