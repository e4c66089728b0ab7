import vm from 'node:vm';
import {
  type Failure,
  failureOf,
  mapDataWarnings,
  mapDbError,
  ServerSilent,
  withoutQualifiers,
} from '../../../src/db/errors.js';
import { ApiError } from '../../../src/errors.js';

describe('withoutQualifiers', () => {
  test.each([
    [
      "Incorrect integer value: 'x' for column `shop`.`items`.`qty` at row 1",
      "Incorrect integer value: 'x' for column `qty` at row 1",
    ],
    [
      'CONSTRAINT `items.qty_positive` failed for `shop`.`items`',
      'CONSTRAINT `items.qty_positive` failed for `items`',
    ],
    ['for column `we``ird`.`t`.`c` at row 1', 'for column `c` at row 1'],
    ["Column 'name' cannot be null", "Column 'name' cannot be null"],
  ])('%s', (message, expected) => {
    expect(withoutQualifiers(message)).toBe(expected);
  });

  test('is applied to the MySQL messages passed on', () => {
    const error = mapDbError({
      code: 'ER_TRUNCATED_WRONG_VALUE_FOR_FIELD',
      errno: 1366,
      sqlMessage: "Incorrect integer value: 'x' for column `secret_db`.`t`.`n` at row 1",
    });
    expect(error.message).toBe("Incorrect integer value: 'x' for column `n` at row 1");
  });
});

describe('a SIGNAL in a routine or trigger', () => {
  const answer = (error: object) => {
    const mapped = mapDbError(error);
    return { status: mapped.status, code: mapped.code, message: mapped.message };
  };

  test("SQLSTATE '45000' is 400 ROUTINE_ERROR with its MESSAGE_TEXT", () => {
    expect(
      answer({
        code: 'ER_SIGNAL_EXCEPTION',
        errno: 1644,
        sqlState: '45000',
        sqlMessage: 'Amount over the limit',
      }),
    ).toEqual({ status: 400, code: 'ROUTINE_ERROR', message: 'Amount over the limit' });
  });

  test('with an error number of its own, unknown to the driver', () => {
    expect(answer({ errno: 5001, sqlState: '45000', sqlMessage: 'late' })).toEqual({
      status: 400,
      code: 'ROUTINE_ERROR',
      message: 'late',
    });
  });

  test('another SQLSTATE with the default number is the routine refusing too', () => {
    expect(
      answer({ code: 'ER_SIGNAL_EXCEPTION', errno: 1644, sqlState: '22003', sqlMessage: 'range' }),
    ).toEqual({ status: 400, code: 'ROUTINE_ERROR', message: 'range' });
  });

  test("a SIGNAL that takes a server error's number maps as that error", () => {
    expect(
      answer({ code: 'ER_DUP_ENTRY', errno: 1062, sqlState: '23000', sqlMessage: 'taken' }),
    ).toEqual({ status: 409, code: 'ER_DUP_ENTRY', message: 'taken' });
  });

  test('a routine dropped or changed after the schema was read asks for a re-read', () => {
    const gone = mapDbError({ code: 'ER_SP_DOES_NOT_EXIST', errno: 1305, sqlState: '42000' });
    expect([gone.status, gone.code, gone.schemaMiss]).toEqual([404, 'ER_SP_DOES_NOT_EXIST', true]);
    const changed = mapDbError({ code: 'ER_SP_WRONG_NO_OF_ARGS', errno: 1318, sqlState: '42000' });
    expect([changed.status, changed.schemaMiss]).toEqual([400, true]);
  });
});

describe('data warnings about generated columns', () => {
  const note = (column: string) => ({
    Level: 'Note',
    Code: 1265,
    Message: `Data truncated for column '${column}' at row 1`,
  });

  test("MySQL rounding a generated column's expression is no refusal", () => {
    expect(mapDataWarnings([note('price_with_tax')], ['price_with_tax'])).toBeNull();
    expect(mapDataWarnings([note("it's")], ["it's"])).toBeNull();
  });

  test('a value the client sent that did not fit still is', () => {
    expect(
      mapDataWarnings([note('price_with_tax'), note('price')], ['price_with_tax']),
    ).toMatchObject({
      status: 400,
      code: 'WARN_DATA_TRUNCATED',
      message: "Data truncated for column 'price' at row 1",
    });
    expect(mapDataWarnings([note('price_with_tax')])).toMatchObject({
      code: 'WARN_DATA_TRUNCATED',
    });
    const outOfRange = {
      Level: 'Warning',
      Code: 1264,
      Message: "Out of range value for column 'price_with_tax' at row 1",
    };
    expect(mapDataWarnings([outOfRange], ['price_with_tax'])).toMatchObject({
      code: 'ER_WARN_DATA_OUT_OF_RANGE',
    });
  });
});

/**
 * Every shape in which mysql2 3.x reports a server that died, froze or refused the gateway's
 * connection — mid-handshake, mid-query, mid-stream, on a pooled connection — each as mysql2
 * builds it (lib/base/connection.js, lib/commands/*.js, lib/packets/packet.js asError), the
 * server refusals as MariaDB 10.11 sent them to a private server. Each answers 503
 * DATABASE_UNAVAILABLE, and a read whose connection it broke is tried once more.
 */
describe('a lost, refused or silent connection is DATABASE_UNAVAILABLE', () => {
  /** mysql2 marks every socket error fatal (_handleNetworkError → _handleFatalError). */
  const socketError = (code: string, message = `read ${code}`) =>
    Object.assign(new Error(message), { code, errno: -104, syscall: 'read', fatal: true });
  /** A server's error packet (asError): never fatal, named by mysql2's table of MySQL numbers. */
  const serverError = (code: string | undefined, errno: number, sqlState: string) =>
    Object.assign(new Error('(the server’s message)'), {
      code,
      errno,
      sqlState,
      sqlMessage: '(the server’s message)',
    });
  const shapes: [string, unknown, Failure][] = [
    // The socket, at any moment.
    ['refused connect', socketError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:3306'), 'lost'],
    ['reset (killed mid-query)', socketError('ECONNRESET'), 'lost'],
    ['broken pipe (write after the peer left)', socketError('EPIPE', 'write EPIPE'), 'lost'],
    ['connection aborted', socketError('ECONNABORTED'), 'lost'],
    ['host unreachable', socketError('EHOSTUNREACH', 'connect EHOSTUNREACH'), 'lost'],
    ['network unreachable', socketError('ENETUNREACH', 'connect ENETUNREACH'), 'lost'],
    ['no local address left (not listed: fatal)', socketError('EADDRNOTAVAIL'), 'lost'],
    ['write to a destroyed socket', socketError('ERR_STREAM_DESTROYED'), 'lost'],
    ['write after the socket ended', socketError('ERR_STREAM_WRITE_AFTER_END'), 'lost'],
    [
      'connectTimeout (mid-handshake)',
      Object.assign(new Error('connect ETIMEDOUT'), {
        errorno: 'ETIMEDOUT',
        code: 'ETIMEDOUT',
        syscall: 'connect',
        fatal: true,
      }),
      'lost',
    ],
    // mysql2's own, on a connection that closed.
    [
      'closed by the server (FIN) mid-query or idle in the pool',
      Object.assign(new Error('Connection lost: The server closed the connection.'), {
        code: 'PROTOCOL_CONNECTION_LOST',
        fatal: true,
      }),
      'lost',
    ],
    [
      'a command on a closed connection',
      Object.assign(new Error("Can't add new command when connection is in closed state"), {
        fatal: true,
      }),
      'lost',
    ],
    [
      'a write on a closed connection (no code, not fatal)',
      new Error("Can't write in closed state"),
      'other',
    ],
    [
      'a query inactivity timeout',
      Object.assign(new Error('Query inactivity timeout'), {
        code: 'PROTOCOL_SEQUENCE_TIMEOUT',
        fatal: true,
      }),
      'lost',
    ],
    [
      'garbage during the handshake',
      Object.assign(new Error('Unexpected packet during handshake phase'), {
        code: 'HANDSHAKE_UNKNOWN_ERROR',
        fatal: true,
      }),
      'lost',
    ],
    [
      'a packet after the connection died',
      Object.assign(new Error('Unexpected packet while no commands in the queue'), {
        code: 'PROTOCOL_UNEXPECTED_PACKET',
        fatal: true,
      }),
      'lost',
    ],
    ['the pool closed (shutdown)', new Error('Pool is closed.'), 'other'],
    // The server refusing a new connection during its handshake, or its statements.
    ['too many connections', serverError('ER_CON_COUNT_ERROR', 1040, '08004'), 'lost'],
    ['max_user_connections (MariaDB)', serverError('ER_USER_LIMIT_REACHED', 1226, '42000'), 'lost'],
    [
      'max_user_connections (MySQL)',
      serverError('ER_TOO_MANY_USER_CONNECTIONS', 1203, '42000'),
      'lost',
    ],
    [
      'login refused (password changed)',
      serverError('ER_ACCESS_DENIED_ERROR', 1045, '28000'),
      'lost',
    ],
    [
      'host blocked after connection errors',
      serverError('ER_HOST_IS_BLOCKED', 1129, 'HY000'),
      'lost',
    ],
    ['host not allowed', serverError('ER_HOST_NOT_PRIVILEGED', 1130, 'HY000'), 'lost'],
    ['bad handshake', serverError('ER_HANDSHAKE_ERROR', 1043, '08S01'), 'lost'],
    ['the database dropped', serverError('ER_BAD_DB_ERROR', 1049, '42000'), 'lost'],
    ['an expired password', serverError('ER_MUST_CHANGE_PASSWORD', 1820, 'HY000'), 'lost'],
    [
      'a locked account (MariaDB 4151, which mysql2 names after MySQL’s 4151)',
      serverError('ER_BULK_PARSER_INCOMPLETE_ESCAPE_SEQUENCE', 4151, 'HY000'),
      'lost',
    ],
    ['a locked account (MySQL)', serverError('ER_ACCOUNT_HAS_BEEN_LOCKED', 3118, 'HY000'), 'lost'],
    ['out of memory', serverError('ER_OUT_OF_RESOURCES', 1041, 'HY000'), 'lost'],
    ['offline mode (MySQL)', serverError('ER_SERVER_OFFLINE_MODE', 3032, 'HY000'), 'lost'],
    ['shutdown in progress', serverError('ER_SERVER_SHUTDOWN', 1053, '08S01'), 'lost'],
    ['KILL CONNECTION (MariaDB 1927)', serverError(undefined, 1927, '70100'), 'lost'],
    ['the server lost the packet', serverError('ER_NET_READ_ERROR', 1158, '08S01'), 'lost'],
    // The gateway's own.
    ["the watchdog's cut", new ServerSilent(), 'silent'],
    [
      'the host was left for another',
      Object.assign(new Error('The gateway left this MySQL host'), { code: 'ETIMEDOUT' }),
      'lost',
    ],
  ];

  test.each(shapes)('%s', (_name, error, failure) => {
    expect(mapDbError(error)).toEqual(
      new ApiError(503, 'DATABASE_UNAVAILABLE', 'Database unavailable'),
    );
    expect(failureOf(error)).toBe(failure);
  });

  /**
   * Node's socket errors are made in Node's realm; code running in a VM context (jest's test
   * environment) has another `Error`, so `instanceof Error` is false for them there.
   */
  test.each(
    shapes.filter(([, error]) => error instanceof Error && !(error instanceof ServerSilent)),
  )('%s, made in another realm', (_name, error, failure) => {
    const foreign = vm.runInNewContext('new Error(message)', {
      message: (error as Error).message,
    }) as Error;
    Object.assign(foreign, error);
    expect(foreign instanceof Error).toBe(false);
    expect(mapDbError(foreign).code).toBe('DATABASE_UNAVAILABLE');
    expect(failureOf(foreign)).toBe(failure);
  });

  test('an error that names nothing known stays a 500 (a bug, logged)', () => {
    expect(mapDbError(new TypeError('x is undefined')).code).toBe('INTERNAL_ERROR');
    expect(mapDbError(serverError(undefined, 1999, 'HY000')).code).toBe('INTERNAL_ERROR');
    expect(mapDbError('a string').code).toBe('INTERNAL_ERROR');
  });
});
