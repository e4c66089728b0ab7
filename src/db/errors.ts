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
  routineError,
} from '../errors.js';

interface DriverError {
  code?: string;
  errno?: number;
  sqlState?: string;
  sqlMessage?: string;
  fatal?: boolean;
}

/**
 * Network and handshake failures: the server is down, unreachable, or refuses the gateway's
 * connections. mysql2 marks every socket error `fatal` whatever its code, which is enough to
 * answer 503; the codes a dying server causes are listed as well, so that the answer does not
 * hang on that flag alone.
 */
const UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_NORMAL_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'POOL_CLOSED',
  // The server refuses a new connection of the gateway (during the handshake, on whichever
  // request needed one): a limit reached, the host blocked after connection errors, the login
  // no longer valid, the database gone, the server short of memory or taken offline. Nothing
  // the client of that request did; the operator's to fix.
  'ER_TOO_MANY_USER_CONNECTIONS',
  'ER_USER_LIMIT_REACHED',
  'ER_HOST_IS_BLOCKED',
  'ER_HOST_NOT_PRIVILEGED',
  'ER_HANDSHAKE_ERROR',
  'ER_ACCESS_DENIED_ERROR',
  'ER_MUST_CHANGE_PASSWORD_LOGIN',
  // An expired password: MariaDB logs in, then refuses every statement.
  'ER_MUST_CHANGE_PASSWORD',
  'ER_ACCOUNT_HAS_BEEN_LOCKED',
  'ER_BAD_DB_ERROR',
  'ER_OUT_OF_RESOURCES',
  'ER_SERVER_OFFLINE_MODE',
  // The server's word for a connection it lost on its side.
  'ER_NET_READ_ERROR',
  'ER_NET_READ_INTERRUPTED',
  'ER_NET_ERROR_ON_WRITE',
  'ER_NET_WRITE_INTERRUPTED',
  'ER_NET_PACKETS_OUT_OF_ORDER',
  // 1047: how Galera refuses every statement on a node that lost quorum ("WSREP has not yet
  // prepared node for application use"); MySQL's own 1047 (unknown command) the gateway never
  // sends.
  'ER_UNKNOWN_COM_ERROR',
]);

/** The messages of mysql2's errors without a code that say the pool or the connection is closed. */
const CLOSED = new Set(['Pool is closed.', "Can't write in closed state"]);

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
  // A locked account's login; MySQL's 4151 (HY000 too) is an error of LOAD DATA's bulk parser,
  // which the gateway never runs.
  4151: { name: 'ER_ACCOUNT_HAS_BEEN_LOCKED', sqlState: 'HY000' },
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

/**
 * mysql2 marks an error after which the connection is unusable `fatal`. Read as a property, not
 * by `instanceof Error`: Node's socket errors are made in Node's own realm, which is not the
 * code's under a VM context (jest's test environment), where every one of them would otherwise
 * be taken for a bug.
 */
function isFatal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as DriverError).fatal === true;
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
 * the database's name is nobody's business: only the last part of a name stays.
 */
export function withoutQualifiers(message: string): string {
  return message.replace(QUALIFIER, '');
}

/** A user SIGNAL's default error number (ER_SIGNAL_EXCEPTION), whatever its SQLSTATE. */
const ER_SIGNAL_EXCEPTION = 1644;

/**
 * A stored routine's or trigger's own refusal: `SIGNAL SQLSTATE '45000'` (the SQLSTATE for an
 * unhandled user-defined exception, which no server error uses), or a SIGNAL of another SQLSTATE
 * that kept the default error number. Its MESSAGE_TEXT is the routine author's sentence for the
 * client (docs/routines.md).
 */
function isUserSignal(error: DriverError): boolean {
  return error.sqlState === '45000' || error.errno === ER_SIGNAL_EXCEPTION;
}

/** The ApiError for a driver error, or a generic 500 (the caller logs the original). */
export function mapDbError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  // mysql2's own errors for a closed pool (shutdown) and for a write to a connection that broke
  // have no code.
  if (CLOSED.has(String((error as { message?: unknown } | null)?.message))) {
    return databaseUnavailable();
  }
  // mysql2's "Can't add new command when connection is in closed state" has no code, only fatal.
  if (isFatal(error)) return databaseUnavailable();
  // Before the name: a SIGNAL may carry an error number of its own that no server error has.
  if (isDriverError(error) && isUserSignal(error)) {
    return routineError(error.sqlMessage ?? 'Unhandled user-defined exception condition');
  }
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
