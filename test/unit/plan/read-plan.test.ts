import { describe, expect, test } from '@jest/globals';
import type { ColumnInfo } from '../../../src/db/schema-types.js';
import { ApiError } from '../../../src/errors.js';
import {
  type PlannedFilter,
  planRead,
  type ReadPlan,
  type Source,
  selectedColumns,
} from '../../../src/plan/read-plan.js';
import { rootSource } from '../../../src/plan/scope.js';
import type { ColumnFn, ReadRequest } from '../../../src/query/ast.js';
import { parseFilter } from '../../../src/query/filter-parser.js';
import { parseReadOptions } from '../../../src/query/options.js';
import {
  at,
  backtick,
  clock,
  column,
  day,
  events,
  id,
  note,
  order,
  places,
  price,
  select,
  shipped,
  size,
  stamp,
  table,
} from '../fixtures/schema.js';

const request = (overrides: Partial<ReadRequest>): ReadRequest => ({
  select: '*',
  filter: null,
  orderBy: [],
  top: null,
  skip: null,
  count: false,
  continues: false,
  ...overrides,
});

/** A planned column of the read's own table (alias t0). */
const col = (column: ColumnInfo) => ({
  kind: 'column' as const,
  source: expect.objectContaining({ alias: 't0' }) as unknown as Source,
  column,
});
const call = (fn: ColumnFn, column: ColumnInfo) => ({
  kind: 'call' as const,
  fn,
  arg: col(column),
});

const planFilter = (text: string): PlannedFilter | null =>
  planRead(request({ filter: parseFilter(text) }), order).filter;

function failure(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('no error');
}

describe('planRead: columns, order, paging', () => {
  test('* expands to every column in ordinal order', () => {
    const plan = planRead(request({}), order);
    const source = rootSource(order);
    const expected: ReadPlan = {
      source,
      joins: [],
      selections: [id, select, price, note, size, backtick, shipped].map((column) => ({
        kind: 'column',
        name: column.name,
        expr: { kind: 'column', source, column },
      })),
      filter: null,
      orderBy: [],
      top: null,
      skip: null,
      count: false,
      page: null,
    };
    expect(plan).toEqual(expected);
    // The same selections every time: the select text and serializer are kept per list.
    expect(planRead(request({}), order).selections).toBe(plan.selections);
  });

  test('a list resolves to ColumnInfo objects in the order given', () => {
    const plan = planRead(request({ select: ['größe', 'select', 'we`ird', 'id'] }), order);
    expect(selectedColumns(plan)).toEqual([size, select, backtick, id]);
    expect(selectedColumns(plan)[0]).toBe(size);
  });

  test('order, top, skip and count pass through, order columns resolved', () => {
    const plan = planRead(
      parseReadOptions({ $orderby: 'price desc,id', $top: '5', $skip: '10', $count: 'true' }),
      order,
    );
    expect(plan.orderBy).toEqual([
      { expr: col(price), direction: 'desc' },
      { expr: col(id), direction: 'asc' },
    ]);
    expect([plan.top, plan.skip, plan.count]).toEqual([5, 10, true]);
  });

  // A name within two edits of a column the caller may see gets a "did you mean".
  test.each<[string, Partial<ReadRequest>, string, string]>([
    ['select', { select: ['id', 'nope'] }, 'nope', 'note'],
    ['select is case-sensitive', { select: ['ID'] }, 'ID', ''],
    ['* inside a list', { select: ['*'] }, '*', ''],
    ['orderby', { orderBy: [{ column: 'Price', direction: 'asc' }] }, 'Price', 'price'],
    ['filter', { filter: parseFilter("id eq 1 and missing eq 'x'") }, 'missing', ''],
    ['filter, right operand', { filter: parseFilter('id eq other') }, 'other', ''],
    ['filter, first unknown reported', { filter: parseFilter('a eq b') }, 'a', ''],
    ['in', { filter: parseFilter('nope in (1)') }, 'nope', 'note'],
    ['function', { filter: parseFilter("contains(nope, 'x')") }, 'nope', 'note'],
    [
      'inside not and parentheses',
      { filter: parseFilter('not (id eq 1 or (gone eq 2))') },
      'gone',
      'note',
    ],
  ])('unknown column in %s → 400 UNKNOWN_COLUMN', (_, overrides, name, meant) => {
    const error = failure(() => planRead(request(overrides), order));
    expect(error.status).toBe(400);
    expect(error.code).toBe('UNKNOWN_COLUMN');
    expect(error.message).toBe(
      `Column '${name}' does not exist in table 'order'${meant === '' ? '' : `: did you mean '${meant}'?`}`,
    );
  });

  // In $filter a double-quoted token names a column: one that is none was likely meant as a string.
  test.each<[string, string, string]>([
    ['note eq "apple"', 'apple', " (strings take single quotes: 'apple')"],
    ['"apple" eq note', 'apple', " (strings take single quotes: 'apple')"],
    ['note eq "O\'Brien"', "O'Brien", " (strings take single quotes: 'O''Brien')"],
    ['note eq "nte"', 'nte', ": did you mean 'note'? (strings take single quotes: 'nte')"],
    // Unquoted, or a column that exists: no hint.
    ['note eq apple', 'apple', ''],
  ])(
    '%s → UNKNOWN_COLUMN %s, hinting at single quotes only when double-quoted',
    (text, name, hint) => {
      const error = failure(() => planRead(request({ filter: parseFilter(text) }), order));
      expect([error.status, error.code, error.message]).toEqual([
        400,
        'UNKNOWN_COLUMN',
        `Column '${name}' does not exist in table 'order'${hint}`,
      ]);
    },
  );

  test('a double-quoted name that is a column is that column', () => {
    const plan = planRead(request({ filter: parseFilter('"note" eq \'x\'') }), order);
    expect(plan.filter).toMatchObject({ kind: 'compare', left: { column: { name: 'note' } } });
  });

  test('$select and $orderby name columns only: no hint there', () => {
    const error = failure(() => planRead(request({ select: ['apple'] }), order));
    expect(error.message).toBe("Column 'apple' does not exist in table 'order'");
  });
});

describe('planRead: filters', () => {
  test.each<[string, PlannedFilter]>([
    [
      'id eq 5',
      {
        kind: 'compare',
        op: 'eq',
        left: col(id),
        right: { kind: 'number', text: '5' },
      },
    ],
    [
      "'x' lt select",
      {
        kind: 'compare',
        op: 'lt',
        left: { kind: 'string', value: 'x' },
        right: col(select),
      },
    ],
    ['note eq null', { kind: 'isNull', operand: col(note), negated: false }],
    ['null eq note', { kind: 'isNull', operand: col(note), negated: false }],
    ['note ne null', { kind: 'isNull', operand: col(note), negated: true }],
    ['5 eq null', { kind: 'isNull', operand: { kind: 'number', text: '5' }, negated: false }],
    ['null eq null', { kind: 'isNull', operand: { kind: 'null' }, negated: false }],
    ['null ne null', { kind: 'isNull', operand: { kind: 'null' }, negated: true }],
    [
      "größe in (1, null, '-2.5e1', null)",
      {
        kind: 'in',
        column: col(size),
        values: [
          { kind: 'number', text: '1' },
          // A quoted number meeting a number column is that number.
          { kind: 'number', text: '-2.5e1' },
        ],
        orNull: true,
      },
    ],
    [
      'id in (1)',
      {
        kind: 'in',
        column: col(id),
        values: [{ kind: 'number', text: '1' }],
        orNull: false,
      },
    ],
    ['note in (null)', { kind: 'in', column: col(note), values: [], orNull: true }],
    [
      "startswith(select, 'a_')",
      { kind: 'match', fn: 'startswith', column: col(select), value: 'a_' },
    ],
    [
      'not (id eq 1 or shipped eq true) and note ne null',
      {
        kind: 'and',
        items: [
          {
            kind: 'not',
            expr: {
              kind: 'or',
              items: [
                {
                  kind: 'compare',
                  op: 'eq',
                  left: col(id),
                  right: { kind: 'number', text: '1' },
                },
                {
                  kind: 'compare',
                  op: 'eq',
                  left: col(shipped),
                  right: { kind: 'boolean', value: true },
                },
              ],
            },
          },
          { kind: 'isNull', operand: col(note), negated: true },
        ],
      },
    ],
  ])('%j', (text, expected) => {
    expect(planFilter(text)).toEqual(expected);
  });

  test.each<[string, string]>([
    [
      'note lt null',
      "at position 6: null cannot be compared with 'lt'; use 'eq null' or 'ne null'",
    ],
    [
      'note le null',
      "at position 6: null cannot be compared with 'le'; use 'eq null' or 'ne null'",
    ],
    ['null gt id', "at position 6: null cannot be compared with 'gt'; use 'eq null' or 'ne null'"],
    [
      'id eq 1 or null ge null',
      "at position 17: null cannot be compared with 'ge'; use 'eq null' or 'ne null'",
    ],
  ])('%j → 400', (text, message) => {
    const error = failure(() => planFilter(text));
    expect(error.status).toBe(400);
    expect(error.code).toBe('FILTER_SYNTAX');
    expect(error.message).toBe(`Invalid $filter ${message}`);
  });
});

describe('planRead: functions and date/time literals are type-checked (docs/filters.md)', () => {
  const planEvents = (text: string): PlannedFilter | null =>
    planRead(request({ filter: parseFilter(text) }), events).filter;
  const datetime = (text: string, value: string) => ({ kind: 'datetime' as const, text, value });

  test.each<[string, PlannedFilter]>([
    [
      'at gt 2024-01-03T00:00:00Z',
      {
        kind: 'compare',
        op: 'gt',
        left: col(at),
        right: datetime('2024-01-03T00:00:00Z', '2024-01-03 00:00:00.000000'),
      },
    ],
    [
      // a datetime meets a DATE column: the DATE is that day at 00:00:00
      '2024-01-03T01:00:00+01:00 eq day',
      {
        kind: 'compare',
        op: 'eq',
        left: datetime('2024-01-03T01:00:00+01:00', '2024-01-03 00:00:00.000000'),
        right: col(day),
      },
    ],
    [
      'stamp ge 2024-01-03',
      {
        kind: 'compare',
        op: 'ge',
        left: col(stamp),
        right: { kind: 'date', text: '2024-01-03', value: '2024-01-03' },
      },
    ],
    [
      'clock lt 12:00:00',
      {
        kind: 'compare',
        op: 'lt',
        left: col(clock),
        right: { kind: 'timeofday', text: '12:00:00', value: '12:00:00.000000' },
      },
    ],
    [
      'date(stamp) eq 2024-01-03',
      {
        kind: 'compare',
        op: 'eq',
        left: call('date', stamp),
        right: { kind: 'date', text: '2024-01-03', value: '2024-01-03' },
      },
    ],
    [
      "contains(tolower(select),'a')",
      {
        kind: 'match',
        fn: 'contains',
        column: call('tolower', select),
        value: 'a',
      },
    ],
    [
      'hour(clock) in (1, null)',
      {
        kind: 'in',
        column: call('hour', clock),
        values: [{ kind: 'number', text: '1' }],
        orNull: true,
      },
    ],
    ['year(at) eq null', { kind: 'isNull', operand: call('year', at), negated: false }],
    [
      'length(select) gt price',
      {
        kind: 'compare',
        op: 'gt',
        left: call('length', select),
        right: col(price),
      },
    ],
    [
      // two literals of matching kinds need no column
      '2024-01-03 lt 2024-01-03T10:00:00Z',
      {
        kind: 'compare',
        op: 'lt',
        left: { kind: 'date', text: '2024-01-03', value: '2024-01-03' },
        right: datetime('2024-01-03T10:00:00Z', '2024-01-03 10:00:00.000000'),
      },
    ],
  ])('%j', (text, expected) => {
    expect(planEvents(text)).toEqual(expected);
  });

  test('every function takes the column types it should, and no others', () => {
    const takes: Record<string, string[]> = {
      tolower: ['select'],
      toupper: ['select'],
      trim: ['select'],
      length: ['select'],
      year: ['day', 'at', 'stamp'],
      month: ['day', 'at', 'stamp'],
      day: ['day', 'at', 'stamp'],
      hour: ['at', 'stamp', 'clock'],
      minute: ['at', 'stamp', 'clock'],
      second: ['at', 'stamp', 'clock'],
      date: ['day', 'at', 'stamp'],
    };
    for (const [fn, accepted] of Object.entries(takes)) {
      const taken = events.columns
        .map((c) => c.name)
        .filter((name) => {
          try {
            planEvents(`${fn}(${name}) eq null`);
            return true;
          } catch (error) {
            expect(error).toMatchObject({ status: 400, code: 'FILTER_TYPE' });
            return false;
          }
        });
      expect({ fn, taken }).toEqual({ fn, taken: accepted });
    }
  });

  test.each<[string, string]>([
    [
      'select eq 2024-01-03',
      "at position 8: the date 2024-01-03 cannot be compared with column 'select' (varchar), which is text; a date is compared with a DATE, DATETIME or TIMESTAMP column or date()",
    ],
    [
      'price gt 2024-01-03T00:00:00Z',
      "at position 7: the datetime 2024-01-03T00:00:00Z cannot be compared with column 'price' (decimal), which is a number; a datetime is compared with a DATE, DATETIME or TIMESTAMP column or date()",
    ],
    [
      'clock eq 2024-01-03',
      "at position 7: the date 2024-01-03 cannot be compared with column 'clock' (time), which is a time; a date is compared with a DATE, DATETIME or TIMESTAMP column or date()",
    ],
    [
      'at eq 12:00:00',
      "at position 4: the time of day 12:00:00 cannot be compared with column 'at' (datetime), which is a datetime; a time of day is compared with a TIME column",
    ],
    [
      'doc eq 2024-01-03',
      "at position 5: the date 2024-01-03 cannot be compared with column 'doc' (longtext), which is neither text, a number nor a date or time; a date is compared with a DATE, DATETIME or TIMESTAMP column or date()",
    ],
    [
      "2024-01-03 eq '2024-01-03'",
      "at position 12: the date 2024-01-03 cannot be compared with the string '2024-01-03', which is text; a date is compared with a DATE, DATETIME or TIMESTAMP column or date()",
    ],
    [
      'year(at) eq 2024-01-03',
      "at position 10: the date 2024-01-03 cannot be compared with year(at) on column 'at' (datetime), which is a number; a date is compared with a DATE, DATETIME or TIMESTAMP column or date()",
    ],
    [
      'select in (1, 2024-01-03)',
      "at position 1: the date 2024-01-03 cannot be compared with column 'select' (varchar), which is text; a date is compared with a DATE, DATETIME or TIMESTAMP column or date()",
    ],
    [
      'year(select) eq 2024',
      "at position 1: year() takes a DATE, DATETIME or TIMESTAMP column, and column 'select' (varchar) is not one",
    ],
    [
      "tolower(at) eq 'x'",
      "at position 1: tolower() takes a text column, and column 'at' (datetime) is not one",
    ],
    [
      'hour(day) eq 1',
      "at position 1: hour() takes a DATETIME, TIMESTAMP or TIME column, and column 'day' (date) is not one",
    ],
    [
      'length(doc) eq 1',
      "at position 1: length() takes a text column, and column 'doc' (longtext) is not one",
    ],
    [
      "contains(year(at), '2')",
      "at position 10: contains() needs text, and year(at) on column 'at' (datetime) gives a number",
    ],
    [
      "startswith(date(at), '2024')",
      "at position 12: startswith() needs text, and date(at) on column 'at' (datetime) gives a date",
    ],
    // A quoted string meets a number, date or time only when it spells one (no silent 0).
    [
      "price gt 'abc'",
      "at position 7: the string 'abc' cannot be compared with column 'price' (decimal), which is a number: it is not a number",
    ],
    [
      "'' eq id",
      "at position 4: the string '' cannot be compared with column 'id' (int), which is a number: it is not a number",
    ],
    [
      "price in (1, ' 2')",
      "at position 1: the string ' 2' cannot be compared with column 'price' (decimal), which is a number: it is not a number",
    ],
    [
      "at gt 'yesterday'",
      "at position 4: the string 'yesterday' cannot be compared with column 'at' (datetime), which is a datetime: it is not a date or datetime: write YYYY-MM-DD, YYYY-MM-DD hh:mm:ss[.ffffff], or ISO 8601 with a zone (YYYY-MM-DDThh:mm:ss[.ffffff]Z or ±hh:mm)",
    ],
    [
      "day eq '2024-02-30'",
      "at position 5: the string '2024-02-30' cannot be compared with column 'day' (date), which is a date: it is an invalid date (day 30; 2024-02 has 29 days)",
    ],
    [
      "clock lt '25:61'",
      "at position 7: the string '25:61' cannot be compared with column 'clock' (time), which is a time: it is an invalid time (minute 61; minutes are 00 to 59)",
    ],
    [
      "clock lt 'noon'",
      "at position 7: the string 'noon' cannot be compared with column 'clock' (time), which is a time: it is not a time: write hh:mm:ss[.ffffff]",
    ],
    [
      "year(at) eq 'x'",
      "at position 10: the string 'x' cannot be compared with year(at) on column 'at' (datetime), which is a number: it is not a number",
    ],
  ])('%j → FILTER_TYPE', (text, message) => {
    const error = failure(() => planEvents(text));
    expect(error.status).toBe(400);
    expect(error.code).toBe('FILTER_TYPE');
    expect(error.message).toBe(`Invalid $filter ${message}`);
  });

  test('an unknown column inside a function is UNKNOWN_COLUMN', () => {
    const error = failure(() => planEvents('year(nope) eq 1'));
    expect(error.code).toBe('UNKNOWN_COLUMN');
    expect(error.message).toBe("Column 'nope' does not exist in table 'events'");
  });
});

describe('quoted strings meeting numbers, dates and times become literals of that type', () => {
  const planEvents = (text: string) =>
    planRead(request({ filter: parseFilter(text) }), events).filter;
  test.each<[string, unknown]>([
    ["price eq '12.50'", { kind: 'number', text: '12.50' }],
    ["price eq '-1e3'", { kind: 'number', text: '-1e3' }],
    ["day eq '2024-05-01'", { kind: 'date', text: '2024-05-01', value: '2024-05-01' }],
    [
      "at ge '2024-05-01 10:00:00.25'",
      { kind: 'datetime', text: '2024-05-01 10:00:00.25', value: '2024-05-01 10:00:00.250000' },
    ],
    [
      "stamp ge '2024-05-01T10:00:00.250+02:00'",
      {
        kind: 'datetime',
        text: '2024-05-01T10:00:00.250+02:00',
        value: '2024-05-01 08:00:00.250000',
      },
    ],
    ["clock eq '-100:00'", { kind: 'timeofday', text: '-100:00', value: '-100:00:00.000000' }],
    ["clock eq '838:59:59'", { kind: 'timeofday', text: '838:59:59', value: '838:59:59.000000' }],
    // Text columns keep the string.
    ["select eq '5'", { kind: 'string', value: '5' }],
  ])('%j', (text, literal) => {
    expect(planEvents(text)).toMatchObject({ kind: 'compare', right: literal });
  });

  test("'839:00:00' is past a TIME's range", () => {
    expect(failure(() => planEvents("clock eq '839:00:00'")).message).toContain(
      'a TIME holds -838:59:59 to 838:59:59',
    );
  });
});

describe('spatial columns cannot be filtered', () => {
  const planPlaces = (text: string) =>
    planRead(request({ filter: parseFilter(text) }), places).filter;
  test.each([
    ["spot eq 'POINT(1 2)'", 1],
    ["'x' eq spot", 8],
    ["spot in ('a')", 1],
    ["contains(spot, '1')", 10],
    ['spot gt id', 1],
  ])('%j → FILTER_TYPE at %d', (text, position) => {
    const error = failure(() => planPlaces(text));
    expect(error.code).toBe('FILTER_TYPE');
    expect(error.message).toBe(
      `Invalid $filter at position ${position}: column 'spot' (point) is spatial and cannot be filtered (only 'eq null' and 'ne null' test it)`,
    );
  });

  test('eq null and ne null test it', () => {
    expect(planPlaces('spot eq null')).toMatchObject({ kind: 'isNull', negated: false });
    expect(planPlaces('spot ne null')).toMatchObject({ kind: 'isNull', negated: true });
  });
});

describe('planRead: a binary column meets a quoted string as its base64 (docs/types.md)', () => {
  const bin = column('bin', {
    dataType: 'varbinary',
    columnType: 'varbinary(8)',
    kind: 'binary',
    nullable: true,
    maxLength: 8,
    numericPrecision: null,
    numericScale: null,
  });
  const blobs = table('blobs', [id, bin], ['id']);
  const planBlobs = (text: string): PlannedFilter | null =>
    planRead(request({ filter: parseFilter(text) }), blobs).filter;
  const binCol = col(bin);
  const bytes = (text: string, value: number[]) => ({
    kind: 'binary' as const,
    text,
    value: Buffer.from(value),
  });

  test.each<[string, PlannedFilter]>([
    ["bin eq 'AAEC'", { kind: 'compare', op: 'eq', left: binCol, right: bytes('AAEC', [0, 1, 2]) }],
    ["'/w==' ne bin", { kind: 'compare', op: 'ne', left: bytes('/w==', [255]), right: binCol }],
    ["bin gt ''", { kind: 'compare', op: 'gt', left: binCol, right: bytes('', []) }],
    [
      "bin in ('AAEC', null, '3q2+7w==')",
      {
        kind: 'in',
        column: binCol,
        values: [bytes('AAEC', [0, 1, 2]), bytes('3q2+7w==', [0xde, 0xad, 0xbe, 0xef])],
        orNull: true,
      },
    ],
  ])('%j', (text, expected) => {
    expect(planBlobs(text)).toEqual(expected);
  });

  test.each([
    [
      "bin eq 'AAE'",
      "at position 5: the string 'AAE' cannot be compared with column 'bin' (varbinary), which is binary: it is not standard base64 (A–Z, a–z, 0–9, +, /, = padding), the form reads show binary values in",
    ],
    [
      "bin in ('AAEC', 'not base64!')",
      "at position 1: the string 'not base64!' cannot be compared with column 'bin' (varbinary), which is binary: it is not standard base64 (A–Z, a–z, 0–9, +, /, = padding), the form reads show binary values in",
    ],
    [
      "bin eq 'AAEC '",
      "at position 5: the string 'AAEC ' cannot be compared with column 'bin' (varbinary), which is binary: it is not standard base64 (A–Z, a–z, 0–9, +, /, = padding), the form reads show binary values in",
    ],
    [
      "contains(bin, 'AA')",
      "at position 10: contains() needs text, and column 'bin' (varbinary) is binary: compare it whole, by its base64 text, with eq, ne or in",
    ],
    [
      "startswith(bin, 'AA')",
      "at position 12: startswith() needs text, and column 'bin' (varbinary) is binary: compare it whole, by its base64 text, with eq, ne or in",
    ],
    [
      'bin eq 2024-01-03',
      "at position 5: the date 2024-01-03 cannot be compared with column 'bin' (varbinary), which is binary; a date is compared with a DATE, DATETIME or TIMESTAMP column or date()",
    ],
  ])('%j → FILTER_TYPE', (text, message) => {
    const error = failure(() => planBlobs(text));
    expect(error.status).toBe(400);
    expect(error.code).toBe('FILTER_TYPE');
    expect(error.message).toBe(`Invalid $filter ${message}`);
  });

  test('a number or another column is compared as before', () => {
    expect(planBlobs('bin eq 5')).toEqual({
      kind: 'compare',
      op: 'eq',
      left: binCol,
      right: { kind: 'number', text: '5' },
    });
  });
});
