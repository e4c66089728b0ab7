/**
 * Driver error → ApiError. MySQL's own messages for data errors name a column or a value, never
 * the query, so those few are passed on; every other driver message stays in the log.
 * Error numbers differ between MySQL and MariaDB in places; both are listed.
 */
import { ApiError, databaseUnavailable, internalError, queryTimeout } from '../errors.js';

interface DriverError {
  code?: string;
  errno?: number;
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
  ER_TABLEACCESS_DENIED_ERROR: 403,
  ER_COLUMNACCESS_DENIED_ERROR: 403,
  ER_DBACCESS_DENIED_ERROR: 403,
  ER_SPECIFIC_ACCESS_DENIED_ERROR: 403,
  ER_PROCACCESS_DENIED_ERROR: 403,
};

/** Foreign-key messages quote the whole constraint definition; say it plainly instead. */
const PLAIN_MESSAGES: Readonly<Record<string, string>> = {
  ER_NO_REFERENCED_ROW: 'A referenced row does not exist (foreign key constraint)',
  ER_NO_REFERENCED_ROW_2: 'A referenced row does not exist (foreign key constraint)',
  ER_ROW_IS_REFERENCED: 'The row is referenced by another table (foreign key constraint)',
  ER_ROW_IS_REFERENCED_2: 'The row is referenced by another table (foreign key constraint)',
};

export function isDriverError(error: unknown): error is DriverError {
  return typeof error === 'object' && error !== null && 'code' in error;
}

/** The ApiError for a driver error, or a generic 500 (the caller logs the original). */
export function mapDbError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (!isDriverError(error) || !error.code) return internalError();
  const { code } = error;
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
