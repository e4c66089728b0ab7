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
