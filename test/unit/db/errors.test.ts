import { mapDbError, withoutQualifiers } from '../../../src/db/errors.js';

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
