import { describe, expect, test } from '@jest/globals';
import type { ColumnInfo } from '../../../src/db/schema-types.js';
import { ApiError } from '../../../src/errors.js';
import { MAX_INSERT_ROWS } from '../../../src/limits.js';
import { planDelete, planInsert, planKeyMatch, planUpdate } from '../../../src/plan/write-plan.js';
import { parseKeyValue } from '../../../src/query/key-value.js';
import { coerceValue } from '../../../src/types/value-codec.js';
import { column, id, note, order, price, select, shipped, table } from '../fixtures/schema.js';

function failure(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

const kinds = (overrides: Partial<ColumnInfo> & Pick<ColumnInfo, 'kind' | 'dataType'>) =>
  column(overrides.dataType, { nullable: true, hasDefault: true, ...overrides });

const big = kinds({
  kind: 'integer',
  dataType: 'bigint',
  columnType: 'bigint(20)',
  numericPrecision: 19,
});
const amount = kinds({
  kind: 'decimal',
  dataType: 'decimal',
  columnType: 'decimal(18,4)',
  numericPrecision: 18,
  numericScale: 4,
});
const ratio = kinds({ kind: 'float', dataType: 'double', columnType: 'double' });
const flags = kinds({ kind: 'bit', dataType: 'bit', columnType: 'bit(64)', numericPrecision: 64 });
const born = kinds({ kind: 'year', dataType: 'year', columnType: 'year(4)' });
const day = kinds({ kind: 'date', dataType: 'date', columnType: 'date' });
const at = kinds({ kind: 'datetime', dataType: 'datetime', columnType: 'datetime(6)' });
const doc = kinds({ kind: 'json', dataType: 'json', columnType: 'json' });
const blob = kinds({ kind: 'binary', dataType: 'blob', columnType: 'blob' });
const text = kinds({
  kind: 'string',
  dataType: 'varchar',
  columnType: 'varchar(50)',
  maxLength: 50,
});
const total = column('total', { generated: true, hasDefault: true });
const types = table('types', [big, amount, ratio, flags, born, day, at, doc, blob, text, total]);

describe('coerceValue', () => {
  test.each<[string, ColumnInfo, unknown, unknown]>([
    ['null anywhere', big, null, null],
    ['null into JSON is SQL NULL', doc, null, null],
    ['integer', big, 42, 42],
    ['negative integer', big, -7, -7],
    ['integer from 5.0 (JSON.parse gives 5)', big, 5.0, 5],
    ['integer as string', big, '42', 42],
    ['integer beyond 2^53 as string', big, '9007199254740993', '9007199254740993'],
    ['integer with exponent string', big, '1e3', 1000],
    ['integer written 5.00', big, '5.00', 5],
    ['integer -0', big, '-0', 0],
    ['exact large JSON number', big, 1e21, '1000000000000000000000'],
    ['boolean into integer', shipped, true, 1],
    ['false into integer', shipped, false, 0],
    ['decimal string kept exact', amount, '12345678901234.5678', '12345678901234.5678'],
    ['decimal number', amount, 12.5, '12.5'],
    ['decimal trailing zeros dropped', amount, '0012.5000', '12.5'],
    ['decimal exponent', amount, '1.5e3', '1500'],
    ['decimal small exponent', amount, '15e-4', '0.0015'],
    ['decimal negative', amount, '-0.0001', '-0.0001'],
    ['decimal boolean', amount, true, '1'],
    ['double number', ratio, 0.30000000000000004, 0.30000000000000004],
    ['double string', ratio, '2.5e-3', 0.0025],
    ['bit number', flags, 5, Buffer.from([5])],
    ['bit zero', flags, 0, Buffer.from([0])],
    ['bit 64 as string', flags, '18446744073709551615', Buffer.from('ffffffffffffffff', 'hex')],
    ['bit 256', flags, 256, Buffer.from([1, 0])],
    ['year', born, 2024, 2024],
    ['date string as is', day, '2024-02-29', '2024-02-29'],
    ['datetime string as is', at, '2024-02-29 13:45:59.123456', '2024-02-29 13:45:59.123456'],
    ['text', text, 'O\'Brien, "Jo" 日本 🎉', 'O\'Brien, "Jo" 日本 🎉'],
    ['number into text', text, 12.5, '12.5'],
    ['boolean into text', text, true, '1'],
    [
      'JSON object',
      doc,
      { a: [1, 'x', null], b: { c: true } },
      '{"a":[1,"x",null],"b":{"c":true}}',
    ],
    ['JSON array', doc, [1, 2], '[1,2]'],
    ['JSON string', doc, 'abc', '"abc"'],
    ['JSON number', doc, 1.5, '1.5'],
    ['JSON boolean', doc, false, 'false'],
    ['base64', blob, 'AAEC/w==', Buffer.from([0, 1, 2, 255])],
    ['empty base64', blob, '', Buffer.alloc(0)],
  ])('%s', (_label, target, value, expected) => {
    expect(coerceValue(target, value)).toEqual(expected);
  });

  test.each<[string, ColumnInfo, unknown, number | null, string]>([
    [
      'fraction into integer',
      big,
      1.5,
      null,
      "Column 'bigint' takes whole numbers; 1.5 is not one",
    ],
    [
      'fraction string into integer',
      big,
      '1.5',
      2,
      "Row 2, column 'bigint' takes whole numbers; '1.5' is not one",
    ],
    ['word into integer', big, 'abc', null, "Column 'bigint' takes a number; 'abc' is not one"],
    [
      'spaces around a number',
      big,
      ' 12 ',
      null,
      "Column 'bigint' takes a number; ' 12 ' is not one",
    ],
    ['hex', big, '0x10', null, "Column 'bigint' takes a number; '0x10' is not one"],
    [
      'rounded JSON integer',
      big,
      // What JSON.parse makes of 9007199254740993.
      Number('9007199254740993'),
      null,
      `Column 'bigint': the JSON number 9007199254740992 has more digits than a JSON number holds exactly; send the exact value as a string, e.g. "12345678901234567890"`,
    ],
    [
      'rounded JSON decimal',
      amount,
      Number('12345678901234.5678'),
      null,
      `Column 'decimal': the JSON number 12345678901234.568 has more digits than a JSON number holds exactly; send the exact value as a string, e.g. "12345678901234567890"`,
    ],
    [
      'digits past the scale',
      price,
      '1.005',
      null,
      "Column 'price' holds at most 2 digits after the decimal point; '1.005' would be rounded",
    ],
    ['huge exponent', amount, '1e999999', null, "Column 'decimal': 1e999999 is out of range"],
    ['float out of range', ratio, '1e400', null, "Column 'double': '1e400' is out of range"],
    [
      'negative bit',
      flags,
      -1,
      null,
      "Column 'bit' is a BIT column and takes numbers from 0; -1 is negative",
    ],
    [
      'object into text',
      text,
      { a: 1 },
      null,
      "Column 'varchar' takes a single value, not an object; objects and arrays go only into JSON columns",
    ],
    [
      'array into integer',
      big,
      [1],
      3,
      "Row 3, column 'bigint' takes a single value, not an array; objects and arrays go only into JSON columns",
    ],
    [
      'number into binary',
      blob,
      5,
      null,
      "Column 'blob' is binary and takes base64 text, not a number",
    ],
    [
      'bad base64',
      blob,
      'abc!',
      null,
      "Column 'blob' is binary and takes standard base64 text (A–Z, a–z, 0–9, +, /, = padding); 'abc!' is not valid base64",
    ],
    [
      'base64 without padding',
      blob,
      'AAE',
      null,
      "Column 'blob' is binary and takes standard base64 text (A–Z, a–z, 0–9, +, /, = padding); 'AAE' is not valid base64",
    ],
    [
      'base64url',
      blob,
      'AA-_',
      null,
      "Column 'blob' is binary and takes standard base64 text (A–Z, a–z, 0–9, +, /, = padding); 'AA-_' is not valid base64",
    ],
    [
      'lone surrogate',
      text,
      'a\ud800b',
      null,
      "Column 'varchar': the text contains an unpaired UTF-16 surrogate, which UTF-8 cannot store",
    ],
  ])('%s fails', (_label, target, value, row, message) => {
    const error = failure(() => coerceValue(target, value, row));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: 'INVALID_VALUE', message });
  });
});

describe('fractional seconds', () => {
  const at3 = kinds({ kind: 'datetime', dataType: 'timestamp', columnType: 'timestamp(3)' });
  const at0 = kinds({ kind: 'datetime', dataType: 'datetime', columnType: 'datetime' });

  test.each<[ColumnInfo, string]>([
    [at, '2024-02-29 13:45:59.123456'],
    [at3, '2024-02-29 13:45:59.123'],
    [at3, '2024-02-29 13:45:59.123000'],
    [at3, '2024-02-29T13:45:59.1'],
    [at0, '2024-02-29 13:45:59'],
    [at0, '2024-02-29 13:45:59.000'],
  ])('%#: %s fits', (target, value) => {
    expect(coerceValue(target, value)).toBe(value);
  });

  test.each<[ColumnInfo, string, string]>([
    [
      at,
      '2024-02-29 13:45:59.1234567',
      "Column 'datetime' keeps 6 digits of fractional seconds; '2024-02-29 13:45:59.1234567' would be cut",
    ],
    [
      at3,
      '2024-02-29 13:45:59.1234',
      "Column 'timestamp' keeps 3 digits of fractional seconds; '2024-02-29 13:45:59.1234' would be cut",
    ],
    [
      at0,
      '2024-02-29 13:45:59.5',
      "Column 'datetime' keeps 0 digits of fractional seconds; '2024-02-29 13:45:59.5' would be cut to whole seconds",
    ],
  ])('%#: %s does not fit', (target, value, message) => {
    expect(failure(() => coerceValue(target, value))).toMatchObject({
      status: 400,
      code: 'INVALID_VALUE',
      message,
    });
  });
});

describe('planInsert', () => {
  test('one object: its keys in body order', () => {
    expect(planInsert(order, { select: 'x', price: '9.99', id: 7 })).toEqual({
      table: order,
      columns: [select, price, id],
      rows: [
        [
          { kind: 'value', value: 'x' },
          { kind: 'value', value: '9.99' },
          { kind: 'value', value: 7 },
        ],
      ],
    });
  });

  test('array: the union of keys, DEFAULT where a row leaves one out', () => {
    expect(
      planInsert(order, [{ select: 'a' }, { price: 1, note: null }, { note: 'n', select: 'c' }]),
    ).toEqual({
      table: order,
      columns: [select, price, note],
      rows: [
        [{ kind: 'value', value: 'a' }, { kind: 'default' }, { kind: 'default' }],
        [{ kind: 'default' }, { kind: 'value', value: '1' }, { kind: 'value', value: null }],
        [{ kind: 'value', value: 'c' }, { kind: 'default' }, { kind: 'value', value: 'n' }],
      ],
    });
  });

  test(`${MAX_INSERT_ROWS} rows are allowed`, () => {
    const rows = Array.from({ length: MAX_INSERT_ROWS }, (_, i) => ({ select: String(i) }));
    expect(planInsert(order, rows).rows).toHaveLength(MAX_INSERT_ROWS);
  });

  test.each<[string, unknown, string, string]>([
    [
      'a string',
      'abc',
      'INVALID_BODY',
      'The body must be a JSON object (one row) or a non-empty array of objects, not a string',
    ],
    [
      'a number',
      5,
      'INVALID_BODY',
      'The body must be a JSON object (one row) or a non-empty array of objects, not a number',
    ],
    [
      'null',
      null,
      'INVALID_BODY',
      'The body must be a JSON object (one row) or a non-empty array of objects, not null',
    ],
    [
      'no body',
      undefined,
      'INVALID_BODY',
      'The body must be a JSON object (one row) or a non-empty array of objects, not missing',
    ],
    [
      'an empty object',
      {},
      'INVALID_BODY',
      'The row is empty: give at least one column and its value',
    ],
    ['an empty array', [], 'INVALID_BODY', 'The array is empty: send at least one row'],
    [
      'an array with a non-object',
      [{ select: 'a' }, 5],
      'INVALID_BODY',
      'Row 2 is a number, not a JSON object',
    ],
    ['an array with null', [null], 'INVALID_BODY', 'Row 1 is null, not a JSON object'],
    [
      'an array with an array',
      [[{ select: 'a' }]],
      'INVALID_BODY',
      'Row 1 is an array, not a JSON object',
    ],
    [
      'an array with an empty object',
      [{ select: 'a' }, {}],
      'INVALID_BODY',
      'Row 2 is empty: give at least one column and its value',
    ],
    [
      'an unknown column',
      { select: 'a', nope: 1 },
      'UNKNOWN_COLUMN',
      "Column 'nope' does not exist in table 'order': did you mean 'note'?",
    ],
    [
      'a hostile key',
      { 'id` = 1; DROP TABLE x; --': 1 },
      'UNKNOWN_COLUMN',
      "Column 'id` = 1; DROP TABLE x; --' does not exist in table 'order'",
    ],
    [
      'a key that differs in case',
      { SELECT: 'a' },
      'UNKNOWN_COLUMN',
      "Column 'SELECT' does not exist in table 'order'",
    ],
    [
      'a generated column',
      { total: 5 },
      'GENERATED_COLUMN',
      "Column 'total' of table 'types' is generated by MySQL and cannot be written",
    ],
    [
      'a bad value in row 2',
      [{ 'we`ird': 'a' }, { shipped: 'yes' }],
      'INVALID_VALUE',
      "Row 2, column 'shipped' takes a number; 'yes' is not one",
    ],
  ])('%s → 400', (_label, body, code, message) => {
    const target = _label === 'a generated column' ? types : order;
    const error = failure(() => planInsert(target, body));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code, message });
  });

  test('more rows than the limit → 400 LIMIT_EXCEEDED', () => {
    const rows = Array.from({ length: MAX_INSERT_ROWS + 1 }, () => ({ select: 'x' }));
    expect(failure(() => planInsert(order, rows))).toMatchObject({
      status: 400,
      code: 'LIMIT_EXCEEDED',
      message: `At most ${MAX_INSERT_ROWS} rows can be inserted in one request; the body has ${MAX_INSERT_ROWS + 1}`,
    });
  });
});

describe('planUpdate and planDelete', () => {
  test('update: assignments in body order and the key', () => {
    expect(planUpdate(order, parseKeyValue('id,5'), { price: '1.50', note: null })).toEqual({
      table: order,
      set: [
        { column: price, value: '1.5' },
        { column: note, value: null },
      ],
      where: { kind: 'equals', column: id, value: { kind: 'number', text: '5' } },
    });
  });

  test('delete: the key only', () => {
    expect(planDelete(order, parseKeyValue("select,'O''Brien, Jo'"))).toEqual({
      table: order,
      where: { kind: 'equals', column: select, value: { kind: 'value', value: "O'Brien, Jo" } },
    });
  });

  test.each<[string, unknown, string]>([
    [
      'an array',
      [{ price: 1 }],
      'The body must be a JSON object of the columns to change, not an array',
    ],
    ['a string', 'x', 'The body must be a JSON object of the columns to change, not a string'],
    ['null', null, 'The body must be a JSON object of the columns to change, not null'],
    ['an empty object', {}, 'The body has no columns: give at least one column and its new value'],
  ])('update body that is %s → 400', (_label, body, message) => {
    expect(failure(() => planUpdate(order, parseKeyValue('id,5'), body))).toMatchObject({
      status: 400,
      code: 'INVALID_BODY',
      message,
    });
  });

  test('update with an unknown column → 400', () => {
    expect(failure(() => planUpdate(order, parseKeyValue('id,5'), { nope: 1 }))).toMatchObject({
      status: 400,
      code: 'UNKNOWN_COLUMN',
    });
  });

  test('unknown key column → 400', () => {
    expect(failure(() => planDelete(order, parseKeyValue('nope,5')))).toMatchObject({
      status: 400,
      code: 'UNKNOWN_COLUMN',
      message: "Column 'nope' does not exist in table 'order': did you mean 'note'?",
    });
  });
});

describe('planKeyMatch', () => {
  const key = (target: ColumnInfo, value: string) =>
    planKeyMatch(
      order.columns.includes(target) ? order : types,
      parseKeyValue(`${target.name},${value}`),
    );

  test.each<[string, ColumnInfo, string, unknown]>([
    ['null matches NULL', text, 'null', { kind: 'isNull', column: text }],
    ['NULL in any case', big, 'NULL', { kind: 'isNull', column: big }],
    [
      "'null' is text",
      text,
      "'null'",
      { kind: 'equals', column: text, value: { kind: 'value', value: 'null' } },
    ],
    ['integer', big, '5', { kind: 'equals', column: big, value: { kind: 'number', text: '5' } }],
    [
      'integer in quotes',
      big,
      "'5'",
      { kind: 'equals', column: big, value: { kind: 'number', text: '5' } },
    ],
    [
      'big integer stays text',
      big,
      '9007199254740993',
      { kind: 'equals', column: big, value: { kind: 'number', text: '9007199254740993' } },
    ],
    [
      'boolean key of an integer',
      shipped,
      'true',
      { kind: 'equals', column: shipped, value: { kind: 'number', text: '1' } },
    ],
    [
      'decimal, no scale check',
      amount,
      '1.00005',
      { kind: 'equals', column: amount, value: { kind: 'number', text: '1.00005' } },
    ],
    [
      'double',
      ratio,
      '2.5',
      { kind: 'equals', column: ratio, value: { kind: 'value', value: 2.5 } },
    ],
    [
      'bit',
      flags,
      '18446744073709551615',
      { kind: 'equals', column: flags, value: { kind: 'number', text: '18446744073709551615' } },
    ],
    [
      'a bare number of a text column is its text',
      text,
      '007',
      { kind: 'equals', column: text, value: { kind: 'value', value: '007' } },
    ],
    [
      'a bare keyword of a text column is its text',
      text,
      'TRUE',
      { kind: 'equals', column: text, value: { kind: 'value', value: 'TRUE' } },
    ],
    [
      'bare text with spaces',
      text,
      ' a b ',
      { kind: 'equals', column: text, value: { kind: 'value', value: 'a b' } },
    ],
    [
      'date',
      day,
      '2024-02-29',
      { kind: 'equals', column: day, value: { kind: 'value', value: '2024-02-29' } },
    ],
    [
      'datetime',
      at,
      "'2024-02-29 13:45:59.5'",
      { kind: 'equals', column: at, value: { kind: 'value', value: '2024-02-29 13:45:59.5' } },
    ],
    [
      'binary is base64',
      blob,
      "'AAEC'",
      { kind: 'equals', column: blob, value: { kind: 'value', value: Buffer.from([0, 1, 2]) } },
    ],
  ])('%s', (_label, target, value, expected) => {
    expect(key(target, value)).toEqual(expected);
  });

  test.each<[string, ColumnInfo, string, string, string]>([
    [
      'text into an integer key',
      big,
      'abc',
      'INVALID_VALUE',
      "The key value for column 'bigint' takes a number; 'abc' is not one",
    ],
    [
      'fraction into an integer key',
      big,
      '1.5',
      'INVALID_VALUE',
      "The key value for column 'bigint' takes whole numbers; '1.5' is not one",
    ],
    [
      'bad base64 key',
      blob,
      'a!',
      'INVALID_VALUE',
      "The key value for column 'blob' is binary and takes standard base64 text (A–Z, a–z, 0–9, +, /, = padding); 'a!' is not valid base64",
    ],
    [
      'JSON key',
      doc,
      '5',
      'INVALID_QUERY',
      "Column 'json' holds JSON and cannot be the key of update(…) or delete(…); use another column",
    ],
  ])('%s → 400', (_label, target, value, code, message) => {
    expect(failure(() => key(target, value))).toMatchObject({ status: 400, code, message });
  });
});
