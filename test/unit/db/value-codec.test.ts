import { describe, expect, test } from '@jest/globals';
import { coerceValue } from '../../../src/types/value-codec.js';
import { column, text } from '../fixtures/schema.js';

const wide = column('amount', {
  dataType: 'decimal',
  columnType: 'decimal(65,30)',
  kind: 'decimal',
  numericPrecision: 65,
  numericScale: 30,
});
const count = column('count', { dataType: 'bigint', columnType: 'bigint(20)' });
const label = text('label');

// Safe integers take a shortcut past the number-text parser (hot path); these are its edges.
const SAFE_INTEGERS = [
  0,
  -0,
  1,
  -1,
  7,
  10,
  100,
  -100,
  123_456_789,
  2 ** 31,
  -(2 ** 31),
  2 ** 32 + 1,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
];
const OTHER_NUMBERS = [0.5, -0.5, 123.45, 1e-7, 1.5e-7, 1e20, 1e21, 2 ** 53, 0.1 + 0.2];

describe('a JSON number into a column', () => {
  test('a safe integer gives the same value as its decimal text would', () => {
    for (const n of SAFE_INTEGERS) {
      const text = String(n);
      expect(coerceValue(wide, n)).toBe(coerceValue(wide, text));
      expect(coerceValue(count, n)).toBe(coerceValue(count, text));
      expect(coerceValue(label, n)).toBe(text);
    }
    expect(coerceValue(wide, -0)).toBe('0');
    expect(coerceValue(count, Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
  });

  test('other numbers keep their exact plain text, or are refused', () => {
    const plain = OTHER_NUMBERS.map((n) => {
      try {
        return coerceValue(wide, n);
      } catch (error) {
        return `refused: ${(error as Error).message}`;
      }
    });
    expect(plain).toEqual([
      '0.5',
      '-0.5',
      '123.45',
      '0.0000001',
      '0.00000015',
      '100000000000000000000',
      '1000000000000000000000',
      'refused: Column \'amount\': the JSON number 9007199254740992 has more digits than a JSON number holds exactly; send the exact value as a string, e.g. "12345678901234567890"',
      'refused: Column \'amount\': the JSON number 0.30000000000000004 has more digits than a JSON number holds exactly; send the exact value as a string, e.g. "12345678901234567890"',
    ]);
    expect(() => coerceValue(count, 0.5)).toThrow('takes whole numbers');
  });

  // Fractions that print without an exponent take a shortcut that only counts their digits.
  test('a fraction keeps its printed text, its scale is checked, and past 15 digits it is refused', () => {
    const cents = column('cents', {
      dataType: 'decimal',
      columnType: 'decimal(10,2)',
      kind: 'decimal',
      numericPrecision: 10,
      numericScale: 2,
    });
    expect(coerceValue(wide, 0.000001)).toBe('0.000001');
    expect(coerceValue(wide, -0.000123)).toBe('-0.000123');
    expect(coerceValue(wide, 123456789.012345)).toBe('123456789.012345');
    expect(coerceValue(wide, 0.123456789012345)).toBe('0.123456789012345');
    expect(coerceValue(cents, 12.5)).toBe('12.5');
    expect(coerceValue(cents, -99999999.99)).toBe('-99999999.99');
    expect(() => coerceValue(cents, 0.125)).toThrow(
      'holds at most 2 digits after the decimal point',
    );
    expect(() => coerceValue(wide, 1234567890.123456)).toThrow(
      'has more digits than a JSON number',
    );
    expect(() => coerceValue(wide, 0.1234567890123456)).toThrow(
      'has more digits than a JSON number',
    );
    expect(() => coerceValue(count, -2.5)).toThrow('takes whole numbers');
  });
});

describe('numeric text of digits only', () => {
  // Digits without a leading zero take a shortcut (hot path); with `e0` after them (the same
  // number) they go through the whole parser.
  const outcome = (column: Parameters<typeof coerceValue>[0], value: string) => {
    try {
      return coerceValue(column, value);
    } catch (error) {
      return (error as Error).message.replaceAll(value, '<value>');
    }
  };

  test.each([
    '0',
    '7',
    '10',
    '4242',
    '9007199254740991',
    '9007199254740993',
    '18446744073709551615',
    '18446744073709551616',
    '9'.repeat(70),
  ])('%s is what %se0 is', (digits) => {
    for (const target of [wide, count]) {
      expect(outcome(target, digits)).toEqual(outcome(target, `${digits}e0`));
    }
  });

  test('leading zeros still go through the parser', () => {
    expect(coerceValue(count, '007')).toBe(coerceValue(count, '7'));
    expect(coerceValue(wide, '000')).toBe('0');
  });
});

describe('ENUM and SET: a number that names no member is refused, never read as a position', () => {
  const status = text('status', {
    dataType: 'enum',
    columnType: "enum('open','paid','7','it''s','a\\\\b','cancelled')",
    maxLength: 9,
  });
  const tags = text('tags', { dataType: 'set', columnType: "set('a','b','3')", maxLength: 5 });
  const members = "'open', 'paid', '7', 'it's', 'a\\b', 'cancelled'";

  test.each<[unknown, string]>([
    ['4', "'4'"],
    [4, "'4'"],
    [true, "'1'"],
    [' 4', "' 4'"],
    ['+4', "'+4'"],
    ['04', "'04'"],
    ['4.0', "'4.0'"],
    ['07', "'07'"],
  ])('ENUM ← %j', (value, shown) => {
    expect(() => coerceValue(status, value)).toThrow(
      `Column 'status' must be one of ${members}; MySQL would read ${shown} as the position of a member`,
    );
    expect(() => coerceValue(status, value)).toThrow(
      expect.objectContaining({ status: 400, code: 'INVALID_VALUE' }),
    );
  });

  test('member names pass as they are, a numeric one too, and what MySQL takes for one', () => {
    // MySQL's *_ci collations match OPEN and 'open ' to 'open', and store the member.
    for (const value of ['open', 'cancelled', '7', "it's", 'a\\b', 'OPEN', 'open ']) {
      expect(coerceValue(status, value)).toBe(value);
    }
    expect(coerceValue(status, 7)).toBe('7');
  });

  test('a text that names no member is refused, naming the members', () => {
    expect(() => coerceValue(status, 'nope')).toThrow(
      "Column 'status' must be one of 'open', 'paid', '7', 'it's', 'a\\b', 'cancelled'; 'nope' is not",
    );
    expect(() => coerceValue(status, '')).toThrow('must be one of');
    expect(() => coerceValue(tags, 'a,zzz', 3)).toThrow(
      "Row 3, column 'tags' takes members of 'a', 'b', '3', separated by commas; 'a,zzz' names another",
    );
    expect(coerceValue(tags, '')).toBe('');
    expect(coerceValue(tags, 'A,b')).toBe('A,b');
  });

  test('SET: a bit mask is refused; member lists, a numeric member among them, pass', () => {
    expect(() => coerceValue(tags, 5, 2)).toThrow(
      "Row 2, column 'tags' takes members of 'a', 'b', '3', separated by commas; MySQL would read '5' as a set of positions",
    );
    for (const value of ['a', 'a,b', '3', 'a,3', '']) expect(coerceValue(tags, value)).toBe(value);
  });
});

describe('DATETIME and TIMESTAMP take ISO 8601 with a zone as UTC wall time', () => {
  const at = (precision: number, dataType = 'datetime') =>
    column('at', {
      dataType,
      columnType: precision === 0 ? dataType : `${dataType}(${precision})`,
      kind: 'datetime',
    });

  test.each<[number, string, string]>([
    // What Date.toISOString() writes.
    [3, '2024-05-01T10:00:00.250Z', '2024-05-01 10:00:00.250'],
    [6, '2024-05-01T10:00:00.250Z', '2024-05-01 10:00:00.250000'],
    [0, '2024-05-01T10:00:00.000Z', '2024-05-01 10:00:00'],
    [0, '2024-05-01T10:00:00Z', '2024-05-01 10:00:00'],
    [0, '2024-05-01t10:00z', '2024-05-01 10:00:00'],
    // Offsets, across a day, a month and a year.
    [3, '2024-05-01T10:00:00.250+02:00', '2024-05-01 08:00:00.250'],
    [0, '2024-03-01T01:30:00+05:30', '2024-02-29 20:00:00'],
    [0, '2023-12-31T23:00:00-01:00', '2024-01-01 00:00:00'],
    [2, '2024-05-01 10:00:00.5-00:30', '2024-05-01 10:30:00.50'],
  ])('DATETIME(%d) %s → %s', (precision, given, stored) => {
    expect(coerceValue(at(precision), given)).toBe(stored);
    expect(coerceValue(at(precision, 'timestamp'), given)).toBe(stored);
  });

  test('without a zone the text is the wall time, as MySQL reads it', () => {
    expect(coerceValue(at(3), '2024-05-01T10:00:00.250')).toBe('2024-05-01T10:00:00.250');
    expect(coerceValue(at(0), '2024-05-01 10:00:00')).toBe('2024-05-01 10:00:00');
  });

  test.each<[number, string, string]>([
    [
      0,
      '2024-05-01T10:00:00.250Z',
      "keeps 0 digits of fractional seconds; '2024-05-01T10:00:00.250Z' would be cut to whole seconds",
    ],
    [2, '2024-05-01T10:00:00.255+01:00', 'keeps 2 digits of fractional seconds'],
    [3, '2024-05-01T10:00:00.250Z', ''],
    [3, '2024-13-01T10:00:00Z', 'is an invalid datetime (month 13; months are 01 to 12)'],
    [3, '2024-02-30T10:00:00Z', 'is an invalid datetime (day 30; 2024-02 has 29 days)'],
    [3, '2024-05-01T24:00:00Z', 'is an invalid datetime (hour 24; hours are 00 to 23)'],
    [3, '2024-05-01T10:00:00+24:00', 'is an invalid datetime (offset hour 24'],
    [3, '0000-01-01T00:30:00+01:00', 'outside the years 0000 to 9999 in UTC'],
    [3, '2024-05-01T10:00:00.1234567Z', 'more than 6 fractional digits'],
  ])('DATETIME(%d) %s: %s', (precision, given, message) => {
    if (message === '') {
      expect(() => coerceValue(at(precision), given)).not.toThrow();
      return;
    }
    expect(() => coerceValue(at(precision), given)).toThrow(message);
  });
});
