/**
 * Writes as one transaction on one connection: all statements or none. A statement that left a
 * warning meaning a value was changed on its way in (strict mode lets DECIMAL rounding pass as a
 * Note) rolls everything back and is answered like the error. Each guard (an authorization
 * policy's row condition) may read rows first (its lookup, a SELECT … FOR UPDATE) and then, after
 * the statements, runs the SELECTs it makes of what they answered, in the same transaction: a row
 * back means the write broke the rule, and everything is rolled back with the guard's error.
 */
import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2';
import { mapDataWarnings } from '../db/errors.js';
import type { ApiError } from '../errors.js';
import type { CompiledGuard, StatementResult } from '../sql/compile-write.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import { bind } from './bind.js';

/** A check of the written rows (sql/compile-write.ts) and the error that refuses the write. */
export interface WriteGuard extends CompiledGuard {
  readonly error: () => ApiError;
}

export interface WriteOptions {
  /**
   * Drop each prepared statement after use: multi-row INSERT texts rarely repeat, and each
   * cached one holds a server-side statement.
   */
  readonly unprepare?: boolean;
  readonly guards?: readonly WriteGuard[];
  /**
   * The caller proved (plan/exact-write.ts) that the statement cannot leave a data warning: one
   * statement without guards then runs under autocommit, one round trip instead of BEGIN +
   * statement, COMMIT. A single statement is atomic by itself; the transaction only served to
   * take back a write MySQL changed silently, which the proof rules out.
   */
  readonly autocommit?: boolean;
  /**
   * The written table's generated columns: MySQL's notes that it rounded their expressions are
   * no refusal (db/errors.ts mapDataWarnings).
   */
  readonly generated?: readonly string[];
}

export interface WriteResult {
  readonly affectedRows: number;
  /** The first auto-increment id of the first statement; null when there is none. */
  readonly insertId: number | string | null;
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
 * keep the caller's stack, ~1 µs per statement (issue 17); the driver's own error is rejected as
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

/** The one statement that runs under autocommit (see WriteOptions.autocommit), or null. */
export function aloneStatement(
  statements: readonly CompiledQuery[],
  { autocommit = false, guards = [] }: WriteOptions,
): CompiledQuery | null {
  const only = statements[0];
  return autocommit && only !== undefined && statements.length === 1 && guards.length === 0
    ? only
    : null;
}

/**
 * The guards' lookups, the statements and then the guards' checks, in one transaction; the write
 * that aloneStatement() refused.
 */
export async function runTransaction(
  connection: PoolConnection,
  statements: readonly CompiledQuery[],
  { unprepare = false, guards = [], generated = [] }: WriteOptions,
  progress: WriteProgress,
): Promise<WriteResult> {
  let committed = false;
  try {
    // BEGIN and the first statement go out together (mysql2 queues both on the connection):
    // one round trip fewer than awaiting BEGIN first.
    let begun: Promise<void> | null = control(connection, 'beginTransaction');
    const run = async <T extends ResultSetHeader | RowDataPacket[]>(statement: CompiledQuery) => {
      const executing = execute<T>(connection, statement);
      if (begun === null) return executing;
      const first = begun;
      begun = null;
      return (await Promise.all([first, executing]))[1];
    };
    // Rows come as arrays: the pool sets rowsAsArray (db/pool.ts).
    const found: unknown[][][] = [];
    for (const guard of guards) {
      found.push(guard.lookup ? ((await run<RowDataPacket[]>(guard.lookup)) as unknown[][]) : []);
    }
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
    progress.committing = true;
    await control(connection, 'commit');
    committed = true;
    return { affectedRows, insertId: results[0]?.insertId ?? null };
  } finally {
    // A broken connection cannot roll back; the server rolls back when it goes away.
    if (!committed) await control(connection, 'rollback').catch(() => {});
  }
}

/**
 * One statement under autocommit (see WriteOptions.autocommit), by callback: most writes take
 * this path, and the execute stage runs their first attempt without a promise (issue 17).
 * `done` gets null and the result, or the error.
 */
export function runAlone(
  connection: PoolConnection,
  statement: CompiledQuery,
  unprepare: boolean,
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
    const written = {
      affectedRows: result.affectedRows,
      insertId: publicInsertId(result.insertId),
    };
    // Cannot happen when the caller's proof holds; if it ever did, the client still hears the
    // error rather than a success for a changed value.
    if (result.warningStatus === 0) done(null, written);
    else refuseDataWarnings(connection, []).then(() => done(null, written), done);
  });
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
