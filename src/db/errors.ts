/**
 * Driver error → ApiError. MySQL's own messages for data errors name a column or a value, never
 * the query, so those few are passed on; every other driver message stays in the log.
 * Error numbers differ between MySQL and MariaDB in places; both are listed.
 */
import { ApiError, databaseUnavailable, internalError, queryTimeout } from '../errors.js';

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
]);

/** MariaDB max_statement_time (1969), MySQL MAX_EXECUTION_TIME (3024), and KILL QUERY. */
const TIMED_OUT = new Set(['ER_STATEMENT_TIMEOUT', 'ER_QUERY_TIMEOUT', 'ER_QUERY_INTERRUPTED']);

/** Data errors a client causes: status, and whether MySQL's sentence may be shown. */
const CLIENT_ERRORS: Readonly<Record<string, number>> = {
  ER_BAD_NULL_ERROR: 400,
  ER_NO_DEFAULT_FOR_FIELD: 400,
  ER_NO_DEFAULT_FOR_VIEW_FIELD: 400,
  ER_DATA_TOO_LONG: 400,
  ER_WARN_DATA_OUT_OF_RANGE: 400,
  ER_TRUNCATED_WRONG_VALUE: 400,
  ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: 400,
  WARN_DATA_TRUNCATED: 400,
  ER_WRONG_VALUE_FOR_TYPE: 400,
  ER_INVALID_JSON_TEXT: 400,
  ER_INVALID_JSON_TEXT_IN_PARAM: 400,
  ER_INVALID_CHARACTER_STRING: 400,
  ER_DIVISION_BY_ZERO: 400,
  ER_CHECK_CONSTRAINT_VIOLATED: 400,
  ER_CONSTRAINT_FAILED: 400,
  ER_NON_UPDATABLE_TABLE: 400,
  ER_VIEW_CHECK_FAILED: 400,
  ER_VIEW_NO_INSERT_FIELD_LIST: 400,
  ER_VIEW_MULTIUPDATE: 400,
  ER_VIEW_DELETE_MERGE_VIEW: 400,
  ER_NON_INSERTABLE_TABLE: 400,
  ER_WRONG_VALUE: 400,
  ER_DUP_ENTRY: 409,
  ER_DUP_ENTRY_WITH_KEY_NAME: 409,
  ER_NO_REFERENCED_ROW: 409,
  ER_NO_REFERENCED_ROW_2: 409,
  ER_ROW_IS_REFERENCED: 409,
  ER_ROW_IS_REFERENCED_2: 409,
  ER_BAD_FIELD_ERROR: 400,
  ER_TABLEACCESS_DENIED_ERROR: 403,
  ER_COLUMNACCESS_DENIED_ERROR: 403,
  ER_DBACCESS_DENIED_ERROR: 403,
  ER_SPECIFIC_ACCESS_DENIED_ERROR: 403,
  ER_PROCACCESS_DENIED_ERROR: 403,
  // Writes: values, generated columns, views, locks (MySQL and MariaDB names).
  ER_WARN_NULL_TO_NOTNULL: 400,
  ER_CANNOT_CONVERT_CHARACTER: 400,
  ER_DATETIME_FUNCTION_OVERFLOW: 400,
  ER_INVALID_TYPE_FOR_JSON: 400,
  ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN: 400,
  ER_WARNING_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN: 400,
  ER_NONUPDATEABLE_COLUMN: 400,
  ER_VIEW_PREVENT_UPDATE: 400,
  ER_LOCK_DEADLOCK: 409,
  ER_LOCK_WAIT_TIMEOUT: 409,
  // A value with characters the column's character set cannot hold (a latin1 column filtered or
  // matched with 'Ā' or an emoji): MySQL refuses to compare them (issue 9, filter fuzzing).
  ER_CANT_AGGREGATE_2COLLATIONS: 400,
  ER_CANT_AGGREGATE_3COLLATIONS: 400,
  ER_CANT_AGGREGATE_NCOLLATIONS: 400,
  // A table dropped after the schema was read.
  ER_NO_SUCH_TABLE: 404,
};

const COLLATION_MESSAGE =
  "A value holds characters that the column's character set cannot store, so it cannot be compared with the column";

/** Foreign-key messages quote the whole constraint definition; say it plainly instead. */
const PLAIN_MESSAGES: Readonly<Record<string, string>> = {
  ER_NO_REFERENCED_ROW: 'A referenced row does not exist (foreign key constraint)',
  ER_NO_REFERENCED_ROW_2: 'A referenced row does not exist (foreign key constraint)',
  ER_ROW_IS_REFERENCED: 'The row is referenced by another table (foreign key constraint)',
  ER_ROW_IS_REFERENCED_2: 'The row is referenced by another table (foreign key constraint)',
  // MySQL's privilege sentences name the database user and host; say what happened instead.
  ER_TABLEACCESS_DENIED_ERROR:
    "The gateway's database user is not allowed to do this on this table",
  ER_COLUMNACCESS_DENIED_ERROR:
    "The gateway's database user is not allowed to do this on this column",
  ER_DBACCESS_DENIED_ERROR: "The gateway's database user is not allowed to use this database",
  ER_SPECIFIC_ACCESS_DENIED_ERROR: "The gateway's database user lacks the privilege for this",
  ER_PROCACCESS_DENIED_ERROR: "The gateway's database user is not allowed to run this routine",
  ER_BAD_FIELD_ERROR:
    'A column of the request no longer exists: the table changed after the gateway read it',
  // MySQL's sentences for these name the statement ("The target table v of the INSERT is not insertable-into").
  ER_NON_INSERTABLE_TABLE:
    'Rows cannot be inserted through this view: MySQL writes only through simple views (no GROUP BY, DISTINCT, aggregate functions, UNION or computed columns)',
  ER_NON_UPDATABLE_TABLE:
    'Rows cannot be updated or deleted through this view: MySQL writes only through simple views (no GROUP BY, DISTINCT, aggregate functions, UNION or subqueries)',
  ER_VIEW_CHECK_FAILED:
    'The row would not be visible through the view afterwards, and the view has WITH CHECK OPTION',
  ER_LOCK_DEADLOCK:
    'The write collided with another transaction (deadlock) and was rolled back; try again',
  ER_LOCK_WAIT_TIMEOUT:
    'The rows are locked by another transaction and the wait timed out; nothing was written, try again',
  // MySQL's sentence names collations and the operation ("Illegal mix of collations … for operation 'like'").
  ER_CANT_AGGREGATE_2COLLATIONS: COLLATION_MESSAGE,
  ER_CANT_AGGREGATE_3COLLATIONS: COLLATION_MESSAGE,
  ER_CANT_AGGREGATE_NCOLLATIONS: COLLATION_MESSAGE,
};

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

/** The ApiError for a driver error, or a generic 500 (the caller logs the original). */
export function mapDbError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  // mysql2's own error for a pool that was closed (shutdown) has no code.
  if (error instanceof Error && error.message === 'Pool is closed.') return databaseUnavailable();
  const code = isDriverError(error) ? errorName(error) : undefined;
  if (!isDriverError(error) || !code) return internalError();
  if (UNAVAILABLE.has(code) || code.startsWith('PROTOCOL_') || error.fatal) {
    return databaseUnavailable();
  }
  if (TIMED_OUT.has(code)) return queryTimeout();
  const status = CLIENT_ERRORS[code];
  if (status !== undefined) {
    const message = PLAIN_MESSAGES[code] ?? error.sqlMessage ?? code;
    return new ApiError(status, code, message);
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

/** `SHOW WARNINGS` rows (Level, Code, Message) → the error for the first data warning, or null. */
export function mapDataWarnings(
  warnings: readonly { Level?: unknown; Code?: unknown; Message?: unknown }[],
): ApiError | null {
  for (const warning of warnings) {
    const code = DATA_WARNINGS[Number(warning.Code)];
    if (code !== undefined) {
      return mapDbError({ code, errno: Number(warning.Code), sqlMessage: String(warning.Message) });
    }
  }
  return null;
}
