/**
 * Driver error → ApiError. MySQL's own messages for data errors name a column or a value, never
 * the query, so those few are passed on; every other driver message stays in the log.
 * Error numbers differ between MySQL and MariaDB in places; both are listed.
 */
import {
  ApiError,
  databaseUnavailable,
  internalError,
  MYSQL_ERRORS,
  queryTimeout,
} from '../errors.js';

interface DriverError {
  code?: string;
  errno?: number;
  sqlState?: string;
  sqlMessage?: string;
  fatal?: boolean;
}

/** Network and handshake failures: the server is down, unreachable or refusing connections. */
const UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'POOL_CLOSED',
  // 1047: how Galera refuses every statement on a node that lost quorum ("WSREP has not yet
  // prepared node for application use"); MySQL's own 1047 (unknown command) the gateway never
  // sends.
  'ER_UNKNOWN_COM_ERROR',
]);

/** MariaDB max_statement_time (1969), MySQL MAX_EXECUTION_TIME (3024), and KILL QUERY. */
const TIMED_OUT = new Set(['ER_STATEMENT_TIMEOUT', 'ER_QUERY_TIMEOUT', 'ER_QUERY_INTERRUPTED']);

/**
 * mysql2 names only MySQL's error numbers. MariaDB's own 19xx arrive with `code` undefined; its
 * 4025 (a CHECK constraint failed, also MariaDB's JSON validity check; SQLSTATE 23000) arrives
 * under MySQL's name for 4025 (ER_INNODB_AUTOEXTEND_SIZE_OUT_OF_RANGE, HY000). A number MySQL
 * also uses is taken as MariaDB's only with MariaDB's SQLSTATE (from MariaDB's errmsg-utf8.txt).
 */
const MARIADB_ERROR_NAMES: Readonly<Record<number, { name: string; sqlState?: string }>> = {
  1906: { name: 'ER_WARNING_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN' },
  1927: { name: 'ER_CONNECTION_KILLED' },
  1969: { name: 'ER_STATEMENT_TIMEOUT' },
  1977: { name: 'ER_CANNOT_CONVERT_CHARACTER' },
  4025: { name: 'ER_CONSTRAINT_FAILED', sqlState: '23000' },
};

/** The error's name: MariaDB's for its own numbers, else mysql2's `code`. */
export function errorName(error: DriverError): string | undefined {
  const mariadb = error.errno === undefined ? undefined : MARIADB_ERROR_NAMES[error.errno];
  if (mariadb && (mariadb.sqlState === undefined || mariadb.sqlState === error.sqlState)) {
    return mariadb.name;
  }
  return error.code;
}

export function isDriverError(error: unknown): error is DriverError {
  return typeof error === 'object' && error !== null && ('code' in error || 'errno' in error);
}

function isFatal(error: unknown): boolean {
  return error instanceof Error && (error as DriverError).fatal === true;
}

/**
 * What a failed statement says about its connection and its transaction, for the retries of
 * execute/retry.ts:
 * - `rolled-back`: a deadlock, or on Galera a certification failure (which arrives as the same
 *   error, often at COMMIT): the server rolled back the whole transaction, nothing committed;
 * - `node-not-ready`: a Galera node without quorum refused the statement before running it
 *   (1047); the connection works but leads to that node;
 * - `lost`: the connection broke; what the server did with a statement in flight is unknown;
 * - `silent`: the watchdog cut the connection because the server stopped answering pings; as
 *   `lost`, but trying again would wait for the same silent server a second time;
 * - `other`: anything else (a data error, a timeout, an ApiError).
 */
export type Failure = 'rolled-back' | 'node-not-ready' | 'lost' | 'silent' | 'other';

export function failureOf(error: unknown): Failure {
  if (error instanceof ServerSilent) return 'silent';
  if (error instanceof ApiError) return 'other';
  if (!isDriverError(error)) return isFatal(error) ? 'lost' : 'other';
  if (error.errno === ER_LOCK_DEADLOCK) return 'rolled-back';
  if (error.errno === WSREP_NOT_READY) return 'node-not-ready';
  const code = errorName(error) ?? '';
  return UNAVAILABLE.has(code) || code.startsWith('PROTOCOL_') || error.fatal === true
    ? 'lost'
    : 'other';
}

const ER_LOCK_DEADLOCK = 1213;
const WSREP_NOT_READY = 1047;

/**
 * The error a connection's socket is destroyed with when the server stopped answering pings
 * (execute/watchdog.ts); its code is a network timeout's, so it maps to DATABASE_UNAVAILABLE.
 */
export class ServerSilent extends Error {
  readonly code = 'ETIMEDOUT';
  constructor() {
    super('MySQL did not answer a ping');
  }
}

/** A backquoted name followed by a dot and another one: a qualifier (database or table). */
const QUALIFIER = /`(?:[^`]|``)*`\.(?=`)/g;

/**
 * MariaDB names columns and tables with their database (`` `db`.`t`.`c` ``, `` `db`.`t` ``);
 * the database's name is nobody's business (issue 13): only the last part of a name stays.
 */
export function withoutQualifiers(message: string): string {
  return message.replace(QUALIFIER, '');
}

/** The ApiError for a driver error, or a generic 500 (the caller logs the original). */
export function mapDbError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  // mysql2's own error for a pool that was closed (shutdown) has no code.
  if (error instanceof Error && error.message === 'Pool is closed.') return databaseUnavailable();
  // mysql2's "Can't add new command when connection is in closed state" has no code, only fatal.
  if (isFatal(error)) return databaseUnavailable();
  const code = isDriverError(error) ? errorName(error) : undefined;
  if (!isDriverError(error) || !code) return internalError();
  if (UNAVAILABLE.has(code) || code.startsWith('PROTOCOL_') || error.fatal) {
    return databaseUnavailable();
  }
  if (TIMED_OUT.has(code)) return queryTimeout();
  const known = MYSQL_ERRORS[code];
  if (known !== undefined) {
    const message = known.message ?? withoutQualifiers(error.sqlMessage ?? code);
    return new ApiError(known.status, code, message);
  }
  return internalError();
}

/**
 * Warnings that mean a value was changed on its way in. Strict mode turns most of them into
 * errors, but not all: DECIMAL rounding (Note 1265), a date cut from a datetime, … A write that
 * left one of these is rolled back and answered like the error (null when none is among them).
 */
const DATA_WARNINGS: Readonly<Record<number, string>> = {
  1048: 'ER_BAD_NULL_ERROR',
  1263: 'ER_WARN_NULL_TO_NOTNULL',
  1264: 'ER_WARN_DATA_OUT_OF_RANGE',
  1265: 'WARN_DATA_TRUNCATED',
  1292: 'ER_TRUNCATED_WRONG_VALUE',
  1366: 'ER_TRUNCATED_WRONG_VALUE_FOR_FIELD',
  1406: 'ER_DATA_TOO_LONG',
};

/** The column a data warning names (`… for column 'x' at row 1`, quotes inside as they are), or null. */
function warnedColumn(message: string): string | null {
  return /for column '(.*)' at row \d+$/s.exec(message)?.[1] ?? null;
}

/**
 * `SHOW WARNINGS` rows (Level, Code, Message) → the error for the first data warning, or null.
 * A truncation note about a generated column (`price_with_tax DECIMAL(12,2) AS (price * 1.2)`
 * STORED rounding its expression) is MySQL computing the column, as it always does, not a
 * value of the client's cut: `generated` names those columns, and such notes are let pass.
 */
export function mapDataWarnings(
  warnings: readonly { Level?: unknown; Code?: unknown; Message?: unknown }[],
  generated: readonly string[] = [],
): ApiError | null {
  for (const warning of warnings) {
    const code = DATA_WARNINGS[Number(warning.Code)];
    if (
      code === 'WARN_DATA_TRUNCATED' &&
      generated.length > 0 &&
      generated.includes(warnedColumn(String(warning.Message)) ?? '')
    ) {
      continue;
    }
    if (code !== undefined) {
      return mapDbError({ code, errno: Number(warning.Code), sqlMessage: String(warning.Message) });
    }
  }
  return null;
}

/**
 * What went wrong, in one line for an operator (start-up and CLI messages, never a client):
 * MySQL's own sentence when there is one, else the error's message or code.
 */
export function reasonOf(error: unknown): string {
  const driver = error as { sqlMessage?: string; code?: string; message?: string };
  return driver.sqlMessage ?? driver.message ?? driver.code ?? String(error);
}
