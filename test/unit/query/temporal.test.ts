/**
 * The unquoted date/time literals of docs/filters.md, through parseFilter: what each
 * spelling is normalised to (a datetime in UTC, six fractional digits), the range checks with
 * the literal's position, and that nothing depends on the process's time zone.
 */
import { describe, expect, test } from '@jest/globals';
import { ApiError } from '../../../src/errors.js';
import type { FilterExpr, TemporalLiteral } from '../../../src/query/ast.js';
import { parseFilter } from '../../../src/query/filter-parser.js';
import { tokenize } from '../../../src/query/lexer.js';

/** The right-hand literal of `x eq <text>`. */
function literal(text: string): TemporalLiteral {
  const expr = parseFilter(`x eq ${text}`) as Extract<FilterExpr, { kind: 'compare' }>;
  return expr.right as TemporalLiteral;
}

function failure(text: string): ApiError {
  try {
    parseFilter(text);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error(`parsed without error: ${text}`);
}

describe('date/time literals: accepted and normalised', () => {
  test.each<[string, TemporalLiteral['kind'], string]>([
    ['2024-01-03', 'date', '2024-01-03'],
    ['2024-02-29', 'date', '2024-02-29'],
    ['2000-02-29', 'date', '2000-02-29'],
    ['0000-01-01', 'date', '0000-01-01'],
    ['9999-12-31', 'date', '9999-12-31'],
    // what odata-query sends for a Date: toISOString()
    ['2024-01-03T00:00:00.000Z', 'datetime', '2024-01-03 00:00:00.000000'],
    ['2024-01-03T00:00:00Z', 'datetime', '2024-01-03 00:00:00.000000'],
    ['2024-01-03T10:15Z', 'datetime', '2024-01-03 10:15:00.000000'],
    ['2024-01-03t10:15:30z', 'datetime', '2024-01-03 10:15:30.000000'],
    // offsets are applied: the value is UTC wall time
    ['2024-01-03T01:00:00+01:00', 'datetime', '2024-01-03 00:00:00.000000'],
    ['2024-01-03T02:00:00+02:00', 'datetime', '2024-01-03 00:00:00.000000'],
    ['2024-01-02T19:00:00-05:00', 'datetime', '2024-01-03 00:00:00.000000'],
    ['2024-01-03T00:00:00+00:00', 'datetime', '2024-01-03 00:00:00.000000'],
    ['2024-01-03T00:00:00-00:00', 'datetime', '2024-01-03 00:00:00.000000'],
    ['2024-01-03T05:30:00+05:30', 'datetime', '2024-01-03 00:00:00.000000'],
    // across a day, a month end, a leap day and a year end
    ['2024-01-01T00:30:00+01:00', 'datetime', '2023-12-31 23:30:00.000000'],
    ['2024-03-01T00:30:00+01:00', 'datetime', '2024-02-29 23:30:00.000000'],
    ['2023-03-01T00:30:00+01:00', 'datetime', '2023-02-28 23:30:00.000000'],
    ['2024-02-28T23:30:00-01:00', 'datetime', '2024-02-29 00:30:00.000000'],
    ['2023-12-31T23:30:00-01:00', 'datetime', '2024-01-01 00:30:00.000000'],
    ['2024-04-30T22:00:00-14:00', 'datetime', '2024-05-01 12:00:00.000000'],
    // fractional seconds kept exactly, padded to microseconds; zeros past the sixth dropped
    ['2024-01-03T00:00:00.1Z', 'datetime', '2024-01-03 00:00:00.100000'],
    ['2024-01-03T00:00:00.123Z', 'datetime', '2024-01-03 00:00:00.123000'],
    ['2024-01-03T00:00:00.999999+01:00', 'datetime', '2024-01-02 23:00:00.999999'],
    ['2024-01-03T00:00:00.1234560Z', 'datetime', '2024-01-03 00:00:00.123456'],
    ['12:30:00', 'timeofday', '12:30:00.000000'],
    ['00:00:00', 'timeofday', '00:00:00.000000'],
    ['23:59:59.999999', 'timeofday', '23:59:59.999999'],
    ['08:05:01.5', 'timeofday', '08:05:01.500000'],
  ])('%s', (text, kind, value) => {
    expect(literal(text)).toEqual({ kind, text, value });
  });

  test('the lexer reads a literal as one token and stops at the characters around it', () => {
    const kinds = tokenize('(at ge 2024-01-03T00:00:00Z,12:00:00)').map((t) =>
      t.kind === 'temporal' ? `${t.literal.kind}@${t.position}` : t.kind,
    );
    expect(kinds).toEqual([
      'lparen',
      'word',
      'word',
      'datetime@8',
      'comma',
      'timeofday@29',
      'rparen',
      'end',
    ]);
  });

  test("an unencoded '+' of an offset that arrived as a space is read as '+'", () => {
    expect(parseFilter('at eq 2024-01-03T02:00:00 02:00 and id eq 1')).toEqual({
      kind: 'and',
      items: [
        {
          kind: 'compare',
          op: 'eq',
          left: { kind: 'column', name: 'at', position: 1 },
          right: {
            kind: 'datetime',
            text: '2024-01-03T02:00:00+02:00',
            value: '2024-01-03 00:00:00.000000',
          },
          position: 4,
        },
        {
          kind: 'compare',
          op: 'eq',
          left: { kind: 'column', name: 'id', position: 37 },
          right: { kind: 'number', text: '1' },
          position: 40,
        },
      ],
    });
    // only exactly ` hh:mm` after a datetime without a zone
    expect(failure('at eq 2024-01-03T02:00:00 02:00:00').message).toContain(
      "found a datetime without a time zone '2024-01-03T02:00:00'",
    );
    expect(failure('at eq 2024-01-03T02:00:00Z 02:00').message).toBe(
      "Invalid $filter at position 28: expected 'and', 'or' or end of filter, found a malformed time of day '02:00' (write hh:mm:ss)",
    );
  });

  test('ordinary numbers are still numbers', () => {
    for (const text of ['2024', '-2024', '12', '1.5', '20240103', '1e5']) {
      expect(parseFilter(`x eq ${text}`)).toMatchObject({ right: { kind: 'number', text } });
    }
  });

  test('no time zone of the process matters: the conversion is arithmetic on the text', () => {
    const before = process.env.TZ;
    try {
      for (const zone of ['UTC', 'Pacific/Kiritimati', 'America/St_Johns', 'Asia/Kathmandu']) {
        process.env.TZ = zone;
        expect(literal('2024-03-31T01:30:00+02:00').value).toBe('2024-03-30 23:30:00.000000');
        expect(literal('2024-01-03').value).toBe('2024-01-03');
      }
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });
});

describe('date/time literals: out of range or malformed → FILTER_SYNTAX with the position', () => {
  test.each<[string, string]>([
    [
      'x eq 2024-13-01',
      "at position 6: expected a column or a value, found an invalid date '2024-13-01' (month 13; months are 01 to 12)",
    ],
    [
      'x eq 2024-00-10',
      "at position 6: expected a column or a value, found an invalid date '2024-00-10' (month 00; months are 01 to 12)",
    ],
    [
      'x eq 2024-01-32',
      "at position 6: expected a column or a value, found an invalid date '2024-01-32' (day 32; 2024-01 has 31 days)",
    ],
    [
      'x eq 2023-02-29',
      "at position 6: expected a column or a value, found an invalid date '2023-02-29' (day 29; 2023-02 has 28 days)",
    ],
    [
      'x eq 1900-02-29',
      "at position 6: expected a column or a value, found an invalid date '1900-02-29' (day 29; 1900-02 has 28 days)",
    ],
    [
      'x eq 2024-04-31T00:00:00Z',
      "at position 6: expected a column or a value, found an invalid datetime '2024-04-31T00:00:00Z' (day 31; 2024-04 has 30 days)",
    ],
    [
      'x eq 2024-01-03T24:00:00Z',
      "at position 6: expected a column or a value, found an invalid datetime '2024-01-03T24:00:00Z' (hour 24; hours are 00 to 23)",
    ],
    [
      'x eq 2024-01-03T10:60:00Z',
      "at position 6: expected a column or a value, found an invalid datetime '2024-01-03T10:60:00Z' (minute 60; minutes are 00 to 59)",
    ],
    [
      'x eq 2024-01-03T10:00:60Z',
      "at position 6: expected a column or a value, found an invalid datetime '2024-01-03T10:00:60Z' (second 60; seconds are 00 to 59)",
    ],
    [
      'x eq 2024-01-03T10:00:00+24:00',
      "at position 6: expected a column or a value, found an invalid datetime '2024-01-03T10:00:00+24:00' (offset hour 24; offsets are -23:59 to +23:59)",
    ],
    [
      'x eq 2024-01-03T10:00:00.1234567Z',
      "at position 6: expected a column or a value, found an invalid datetime '2024-01-03T10:00:00.1234567Z' (more than 6 fractional digits; MySQL keeps microseconds)",
    ],
    [
      'x eq 9999-12-31T23:30:00-01:00',
      "at position 6: expected a column or a value, found an invalid datetime '9999-12-31T23:30:00-01:00' (outside the years 0000 to 9999 in UTC)",
    ],
    [
      'x eq 2024-01-03T10:00:00',
      "at position 6: expected a column or a value, found a datetime without a time zone '2024-01-03T10:00:00' (end it with 'Z' or an offset like +01:00)",
    ],
    [
      'x eq 2024-1-3',
      "at position 6: expected a column or a value, found a malformed date '2024-1-3' (write YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ)",
    ],
    [
      'x eq 2024-01-03Tnoon',
      "at position 6: expected a column or a value, found a malformed date '2024-01-03Tnoon' (write YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ)",
    ],
    [
      'x eq 24:00:00',
      "at position 6: expected a column or a value, found an invalid time of day '24:00:00' (hour 24; hours are 00 to 23)",
    ],
    [
      'x eq 9:00:00',
      "at position 6: expected a column or a value, found a malformed time of day '9:00:00' (write hh:mm:ss)",
    ],
    [
      'x eq 12:30',
      "at position 6: expected a column or a value, found a malformed time of day '12:30' (write hh:mm:ss)",
    ],
    [
      'x in (1, 2024-02-30)',
      "at position 10: expected a value (a string, a number, a date or time, true, false or null), found an invalid date '2024-02-30' (day 30; 2024-02 has 29 days)",
    ],
  ])('%j', (text, message) => {
    const error = failure(text);
    expect(error.status).toBe(400);
    expect(error.code).toBe('FILTER_SYNTAX');
    expect(error.message).toBe(`Invalid $filter ${message}`);
  });
});
