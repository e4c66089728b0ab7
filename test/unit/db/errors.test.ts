import { mapDataWarnings, mapDbError, withoutQualifiers } from '../../../src/db/errors.js';

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
