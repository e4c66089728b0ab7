import {
  databaseUnavailable,
  internalError,
  queryTimeout,
  unknownTable,
} from '../../../src/errors.js';
import { mysqlErrorCode } from '../../../src/metrics/metrics.js';

describe('mysqlErrorCode: what a MySQL error counts under', () => {
  test('a driver error the catalogue maps: its catalogue code', () => {
    expect(mysqlErrorCode({ code: 'ER_DUP_ENTRY', errno: 1062, sqlState: '23000' })).toBe(
      'ER_DUP_ENTRY',
    );
    expect(mysqlErrorCode({ code: 'ECONNREFUSED', errno: -111 })).toBe('DATABASE_UNAVAILABLE');
  });

  test("the gateway's own database errors", () => {
    expect(mysqlErrorCode(databaseUnavailable())).toBe('DATABASE_UNAVAILABLE');
    expect(mysqlErrorCode(queryTimeout())).toBe('QUERY_TIMEOUT');
  });

  test("a driver error answered 500: the driver's name, or its number", () => {
    expect(mysqlErrorCode({ code: 'ER_NO_SUCH_THING', errno: 9999, sqlState: 'HY000' })).toBe(
      'ER_NO_SUCH_THING',
    );
    expect(mysqlErrorCode({ errno: 4242, sqlState: 'HY000' })).toBe('ERRNO_4242');
  });

  test('errors MySQL had no part in are not counted', () => {
    expect(mysqlErrorCode(unknownTable('t'))).toBeUndefined();
    expect(
      mysqlErrorCode(
        Object.assign(new Error('bad json'), {
          code: 'FST_ERR_CTP_INVALID_JSON_BODY',
          statusCode: 400,
        }),
      ),
    ).toBeUndefined();
    expect(mysqlErrorCode(new Error('a bug'))).toBeUndefined();
    expect(mysqlErrorCode(internalError())).toBeUndefined();
  });
});
