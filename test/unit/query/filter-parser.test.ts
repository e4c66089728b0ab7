import { describe, expect, test } from '@jest/globals';
import { ApiError } from '../../../src/errors.js';
import type {
  ColumnFn,
  ColumnRef,
  FilterExpr,
  FunctionCall,
  Literal,
  Operand,
  TemporalLiteral,
} from '../../../src/query/ast.js';
import { parseFilter } from '../../../src/query/filter-parser.js';

// Small AST builders so expected trees read like the filters they come from.
const col = (name: string, position: number): ColumnRef => ({ kind: 'column', name, position });
const num = (text: string): Literal => ({ kind: 'number', text });
const str = (value: string): Literal => ({ kind: 'string', value });
const bool = (value: boolean): Literal => ({ kind: 'boolean', value });
const NULL: Literal = { kind: 'null' };
const call = (fn: ColumnFn, column: ColumnRef, position: number): FunctionCall => ({
  kind: 'call',
  fn,
  column,
  position,
});
const date = (text: string): TemporalLiteral => ({ kind: 'date', text, value: text });
const cmp = (
  left: Operand,
  op: 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge',
  right: Operand,
  position: number,
): FilterExpr => ({ kind: 'compare', op, left, right, position });
const and = (...items: FilterExpr[]): FilterExpr => ({ kind: 'and', items });
const or = (...items: FilterExpr[]): FilterExpr => ({ kind: 'or', items });
const not = (expr: FilterExpr): FilterExpr => ({ kind: 'not', expr });

function failure(text: string): ApiError {
  try {
    parseFilter(text);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error(`parsed without error: ${text}`);
}

describe('parseFilter: accepted filters', () => {
  test.each<[string, FilterExpr]>([
    // comparisons, every operator, every operand kind
    ['id eq 5', cmp(col('id', 1), 'eq', num('5'), 4)],
    ['id ne 5', cmp(col('id', 1), 'ne', num('5'), 4)],
    ['id lt -5', cmp(col('id', 1), 'lt', num('-5'), 4)],
    ['id le 1.25', cmp(col('id', 1), 'le', num('1.25'), 4)],
    ['id gt 1e-3', cmp(col('id', 1), 'gt', num('1e-3'), 4)],
    ['id ge 00.10', cmp(col('id', 1), 'ge', num('00.10'), 4)],
    ["name eq 'Ann'", cmp(col('name', 1), 'eq', str('Ann'), 6)],
    ['flag eq true', cmp(col('flag', 1), 'eq', bool(true), 6)],
    ['flag eq FALSE', cmp(col('flag', 1), 'eq', bool(false), 6)],
    ['note eq null', cmp(col('note', 1), 'eq', NULL, 6)],
    ['note ne NULL', cmp(col('note', 1), 'ne', NULL, 6)],
    ['5 lt id', cmp(num('5'), 'lt', col('id', 6), 3)],
    ['a eq b', cmp(col('a', 1), 'eq', col('b', 6), 3)],
    ["'x' eq 'x'", cmp(str('x'), 'eq', str('x'), 5)],
    ['null eq null', cmp(NULL, 'eq', NULL, 6)],
    // case-insensitive keywords, exact column names
    ['ID EQ 5', cmp(col('ID', 1), 'eq', num('5'), 4)],
    [
      'Id Eq 5 AnD x Ne 1',
      and(cmp(col('Id', 1), 'eq', num('5'), 4), cmp(col('x', 13), 'ne', num('1'), 15)),
    ],
    [
      'a Gt 1 oR NoT b lE 2',
      or(cmp(col('a', 1), 'gt', num('1'), 3), not(cmp(col('b', 15), 'le', num('2'), 17))),
    ],
    // strings: '' for a quote, spaces, commas, parentheses, non-ASCII, % and _
    ["name eq 'O''Brien, Jo'", cmp(col('name', 1), 'eq', str("O'Brien, Jo"), 6)],
    ["name eq ''", cmp(col('name', 1), 'eq', str(''), 6)],
    ["name eq ' a (b) or c eq d '", cmp(col('name', 1), 'eq', str(' a (b) or c eq d '), 6)],
    ["name eq '100% _sure_'", cmp(col('name', 1), 'eq', str('100% _sure_'), 6)],
    ["größe eq 'Grüße, 日本 🎉'", cmp(col('größe', 1), 'eq', str('Grüße, 日本 🎉'), 7)],
    ["名前 eq 'x'", cmp(col('名前', 1), 'eq', str('x'), 4)],
    ['$x_1 eq 1', cmp(col('$x_1', 1), 'eq', num('1'), 6)],
    ['2fa eq 1', cmp(col('2fa', 1), 'eq', num('1'), 5)],
    // reserved words only where the grammar needs them: these are columns
    ["select eq 'x'", cmp(col('select', 1), 'eq', str('x'), 8)],
    ["contains eq 'x'", cmp(col('contains', 1), 'eq', str('x'), 10)],
    ['order eq 1', cmp(col('order', 1), 'eq', num('1'), 7)],
    // whitespace tolerance
    ['  id   eq\t5\n', cmp(col('id', 3), 'eq', num('5'), 8)],
    // precedence: and binds tighter than or
    [
      'a eq 1 or b eq 2 and c eq 3',
      or(
        cmp(col('a', 1), 'eq', num('1'), 3),
        and(cmp(col('b', 11), 'eq', num('2'), 13), cmp(col('c', 22), 'eq', num('3'), 24)),
      ),
    ],
    [
      'a eq 1 and b eq 2 or c eq 3',
      or(
        and(cmp(col('a', 1), 'eq', num('1'), 3), cmp(col('b', 12), 'eq', num('2'), 14)),
        cmp(col('c', 22), 'eq', num('3'), 24),
      ),
    ],
    // n-ary chains
    [
      'a eq 1 or b eq 2 or c eq 3',
      or(
        cmp(col('a', 1), 'eq', num('1'), 3),
        cmp(col('b', 11), 'eq', num('2'), 13),
        cmp(col('c', 21), 'eq', num('3'), 23),
      ),
    ],
    // parentheses group
    [
      '(a eq 1 or b eq 2) and c eq 3',
      and(
        or(cmp(col('a', 2), 'eq', num('1'), 4), cmp(col('b', 12), 'eq', num('2'), 14)),
        cmp(col('c', 24), 'eq', num('3'), 26),
      ),
    ],
    ['((a eq 1))', cmp(col('a', 3), 'eq', num('1'), 5)],
    [
      '(a eq 1)and(b eq 2)',
      and(cmp(col('a', 2), 'eq', num('1'), 4), cmp(col('b', 13), 'eq', num('2'), 15)),
    ],
    // not binds tighter than and/or, and nests
    [
      'not a eq 1 and b eq 2',
      and(not(cmp(col('a', 5), 'eq', num('1'), 7)), cmp(col('b', 16), 'eq', num('2'), 18)),
    ],
    [
      'not (a eq 1 and b eq 2)',
      not(and(cmp(col('a', 6), 'eq', num('1'), 8), cmp(col('b', 17), 'eq', num('2'), 19))),
    ],
    ['not not a eq 1', not(not(cmp(col('a', 9), 'eq', num('1'), 11)))],
    // membership
    ['id in (1)', { kind: 'in', column: col('id', 1), values: [num('1')] }],
    [
      "id IN ( 1 , 'two', true, null, -2.5 )",
      {
        kind: 'in',
        column: col('id', 1),
        values: [num('1'), str('two'), bool(true), NULL, num('-2.5')],
      },
    ],
    [
      "not id in (1,2) or x eq 'a'",
      or(
        not({ kind: 'in', column: col('id', 5), values: [num('1'), num('2')] }),
        cmp(col('x', 20), 'eq', str('a'), 22),
      ),
    ],
    // functions
    [
      "contains(name, 'a%b_c')",
      { kind: 'match', fn: 'contains', column: col('name', 10), value: 'a%b_c' },
    ],
    [
      "StartsWith( name ,'x''y')",
      { kind: 'match', fn: 'startswith', column: col('name', 13), value: "x'y" },
    ],
    ["ENDSWITH(größe,'')", { kind: 'match', fn: 'endswith', column: col('größe', 10), value: '' }],
    [
      "not contains(name,'x') and endswith(contains, 'y')",
      and(not({ kind: 'match', fn: 'contains', column: col('name', 14), value: 'x' }), {
        kind: 'match',
        fn: 'endswith',
        column: col('contains', 37),
        value: 'y',
      }),
    ],
  ])('%j', (text, expected) => {
    expect(parseFilter(text)).toEqual(expected);
  });
});

describe('parseFilter: syntax errors name the position and what was expected', () => {
  const CONDITION = "a condition (a column, a value, 'not', '(' or contains/startswith/endswith)";
  const OPERATOR = 'an operator (eq, ne, lt, le, gt, ge or in)';
  test.each<[string, string]>([
    [' ', `at position 2: expected ${CONDITION}, found end of filter`],
    ['id', `at position 3: expected ${OPERATOR}, found end of filter`],
    ['id eq', 'at position 6: expected a column or a value, found end of filter'],
    ['id eq 1 and', `at position 12: expected ${CONDITION}, found end of filter`],
    ['id eq 1 or', `at position 11: expected ${CONDITION}, found end of filter`],
    ['not', `at position 4: expected ${CONDITION}, found end of filter`],
    ['id equals 1', `at position 4: expected ${OPERATOR}, found 'equals'`],
    ['id = 1', `at position 4: expected ${OPERATOR}, found unexpected character '='`],
    ['5 in (1)', "at position 3: expected an operator (eq, ne, lt, le, gt or ge), found 'in'"],
    ["'a' b", "at position 5: expected an operator (eq, ne, lt, le, gt or ge), found 'b'"],
    ['id eq 1 name eq 2', "at position 9: expected 'and', 'or' or end of filter, found 'name'"],
    ['id eq 1)', "at position 8: expected 'and', 'or' or end of filter, found ')'"],
    ['(id eq 1', "at position 9: expected 'and', 'or' or ')', found end of filter"],
    ['(id eq 1 x', "at position 10: expected 'and', 'or' or ')', found 'x'"],
    ['()', `at position 2: expected ${CONDITION}, found ')'`],
    ['and eq 1', `at position 1: expected ${CONDITION}, found 'and'`],
    ['id eq and', "at position 7: expected a column or a value, found 'and'"],
    ['id eq eq 1', "at position 7: expected a column or a value, found 'eq'"],
    ['id eq (1)', "at position 7: expected a column or a value, found '('"],
    ["name eq 'abc", 'at position 9: expected a column or a value, found an unterminated string'],
    ["name eq 'it''s", 'at position 9: expected a column or a value, found an unterminated string'],
    [
      'id eq 1.5abc',
      "at position 7: expected a column or a value, found a malformed number '1.5abc'",
    ],
    [
      "'abc' 'def'",
      "at position 7: expected an operator (eq, ne, lt, le, gt or ge), found the string 'def'",
    ],
    ['id in 1', "at position 7: expected '(' after 'in', found '1'"],
    [
      'id in ()',
      "at position 8: expected a value (a string, a number, a date or time, true, false or null), found ')'",
    ],
    [
      'id in (1,)',
      "at position 10: expected a value (a string, a number, a date or time, true, false or null), found ')'",
    ],
    ['id in (1 2)', "at position 10: expected ',' or ')', found '2'"],
    ['id in (1', "at position 9: expected ',' or ')', found end of filter"],
    [
      'id in (x)',
      "at position 8: expected a value (a string, a number, a date or time, true, false or null), found 'x'",
    ],
    [
      'id in ("a", \'b\')',
      'at position 8: expected a value (a string, a number, a date or time, true, false or null), found the name "a" (strings take single quotes: \'a\')',
    ],
    ['contains(name)', "at position 14: expected ',', found ')'"],
    ["contains('a', 'b')", "at position 10: expected a column, found the string 'a'"],
    ["contains(null, 'b')", "at position 10: expected a column, found 'null'"],
    ["contains(in, 'b')", "at position 10: expected a column, found 'in'"],
    ['contains(name, 5)', "at position 16: expected a string in single quotes, found '5'"],
    ["contains(name, 'x'", "at position 19: expected ')', found end of filter"],
    ["contains(name, 'x', 'y')", "at position 19: expected ')', found ','"],
    // hostile input
    [
      'id eq 1; DROP TABLE x',
      "at position 8: expected 'and', 'or' or end of filter, found unexpected character ';'",
    ],
    [
      'id eq 1 --',
      "at position 9: expected 'and', 'or' or end of filter, found unexpected character '-'",
    ],
    ['`id` eq 1', `at position 1: expected ${CONDITION}, found unexpected character '\`'`],
    ["' or '1'='1", "at position 7: expected an operator (eq, ne, lt, le, gt or ge), found '1'"],
    [
      'id eq 1 /* x */',
      "at position 9: expected 'and', 'or' or end of filter, found unexpected character '/'",
    ],
    [
      "id eq 'x' union select 1",
      "at position 11: expected 'and', 'or' or end of filter, found 'union'",
    ],
    // long source text is shortened in the message
    [
      `id eq 1 ${'x'.repeat(50)}`,
      `at position 9: expected 'and', 'or' or end of filter, found '${'x'.repeat(40)}…'`,
    ],
  ])('%j', (text, message) => {
    const error = failure(text);
    expect(error.status).toBe(400);
    expect(error.code).toBe('FILTER_SYNTAX');
    expect(error.message).toBe(`Invalid $filter ${message}`);
  });
});

describe('parseFilter: limits', () => {
  const limit = (text: string, message: string) => {
    const error = failure(text);
    expect(error.status).toBe(400);
    expect(error.code).toBe('LIMIT_EXCEEDED');
    expect(error.message).toBe(message);
  };

  test('4096 bytes of filter text are accepted, 4097 are not', () => {
    const base = "name eq ''";
    const exact = `name eq '${'a'.repeat(4096 - base.length)}'`;
    expect(Buffer.byteLength(exact)).toBe(4096);
    expect(parseFilter(exact)).toMatchObject({ kind: 'compare' });
    limit(
      `name eq '${'a'.repeat(4097 - base.length)}'`,
      '$filter is 4097 bytes long; the limit is 4096 bytes (UTF-8)',
    );
  });

  test('the limit counts UTF-8 bytes, not characters', () => {
    // 1400 × 'ü' is 2800 bytes; 1500 × '日' is 4500 bytes although only 1500 characters.
    expect(parseFilter(`name eq '${'ü'.repeat(1400)}'`)).toMatchObject({ kind: 'compare' });
    limit(
      `name eq '${'日'.repeat(1500)}'`,
      '$filter is 4510 bytes long; the limit is 4096 bytes (UTF-8)',
    );
  });

  const parens = (n: number) => `${'('.repeat(n)}a eq 1${')'.repeat(n)}`;
  const nots = (n: number) => `${'not '.repeat(n)}a eq 1`;

  test('64 levels of parentheses are accepted, 65 are not', () => {
    expect(parseFilter(parens(64))).toEqual(cmp(col('a', 65), 'eq', num('1'), 67));
    limit(
      parens(65),
      "Invalid $filter at position 65: nesting deeper than 64 levels (parentheses and 'not' both count)",
    );
  });

  test('64 nested nots are accepted, 65 are not', () => {
    let expected = cmp(col('a', 257), 'eq', num('1'), 259);
    for (let i = 0; i < 64; i++) expected = not(expected);
    expect(parseFilter(nots(64))).toEqual(expected);
    limit(
      nots(65),
      "Invalid $filter at position 257: nesting deeper than 64 levels (parentheses and 'not' both count)",
    );
  });

  test('parentheses and not count together', () => {
    expect(parseFilter(`${'not ('.repeat(32)}a eq 1${')'.repeat(32)}`)).toMatchObject({
      kind: 'not',
    });
    limit(
      `not ${'not ('.repeat(32)}a eq 1${')'.repeat(32)}`,
      "Invalid $filter at position 164: nesting deeper than 64 levels (parentheses and 'not' both count)",
    );
  });

  // A 201-character contains pattern once cost 30 s of database CPU.
  test('contains/startswith/endswith patterns: 100 characters in all, counted as characters', () => {
    expect(parseFilter(`contains(name,'${'x'.repeat(100)}')`)).toMatchObject({ kind: 'match' });
    expect(parseFilter(`contains(name,'${'日'.repeat(100)}')`)).toMatchObject({ kind: 'match' });
    expect(parseFilter(`contains(name,'${"''".repeat(100)}')`)).toMatchObject({ kind: 'match' });
    limit(
      `contains(name,'${'x'.repeat(201)}')`,
      'Invalid $filter at position 15: contains, startswith and endswith patterns may have at most 100 characters in all',
    );
    const parts = [`startswith(a,'${'x'.repeat(60)}')`, `endswith(b,'${'y'.repeat(41)}')`];
    expect(parseFilter(`${parts[0]} or endswith(b,'${'y'.repeat(40)}')`)).toMatchObject({
      kind: 'or',
    });
    limit(
      parts.join(' or '),
      'Invalid $filter at position 92: contains, startswith and endswith patterns may have at most 100 characters in all',
    );
    // Other strings do not count.
    expect(parseFilter(`name eq '${'x'.repeat(500)}'`)).toMatchObject({ kind: 'compare' });
  });

  // The attack: contains(tolower(payload),'q') ORed 100 times held a connection for 17–20 s.
  test('function calls: 32 in all, pattern matches and column functions alike', () => {
    const search = (n: number) =>
      Array.from({ length: n }, () => "contains(tolower(payload),'q')").join(' or ');
    expect(parseFilter(search(16))).toMatchObject({ kind: 'or' });
    // The 33rd call is the contains of the 17th term: 16 terms of 30 characters, each followed by ' or '.
    limit(
      search(17),
      'Invalid $filter at position 545: more than 32 function calls; each contains, startswith, endswith and column function (tolower, year, …) counts one',
    );
    limit(
      search(100),
      'Invalid $filter at position 545: more than 32 function calls; each contains, startswith, endswith and column function (tolower, year, …) counts one',
    );
    // Column functions anywhere count: both sides of a comparison, before `in`.
    const years = (n: number) => Array.from({ length: n }, () => 'year(d) eq month(d)');
    expect(parseFilter(years(16).join(' and '))).toMatchObject({ kind: 'and' });
    const over = `${years(16).join(' and ')} or tolower(a) in ('x')`;
    limit(
      over,
      `Invalid $filter at position ${over.lastIndexOf('tolower') + 1}: more than 32 function calls; each contains, startswith, endswith and column function (tolower, year, …) counts one`,
    );
    // Pattern matches alone count too; plain comparisons and `in` values do not.
    const matches = (n: number) => Array.from({ length: n }, () => "startswith(a,'x')");
    expect(parseFilter(matches(32).join(' or '))).toMatchObject({ kind: 'or' });
    expect(failure(matches(33).join(' or ')).code).toBe('LIMIT_EXCEEDED');
    const plain = Array.from({ length: 300 }, (_, i) => `a eq ${i}`).join(' or ');
    expect(parseFilter(plain)).toMatchObject({ kind: 'or' });
  });

  test('sibling groups do not add up', () => {
    const group = parens(64);
    expect(parseFilter(`${group} and ${group} or ${group}`)).toMatchObject({ kind: 'or' });
  });

  test('100000-deep nesting fails cleanly, without a stack overflow', () => {
    limit(parens(100_000), '$filter is 200006 bytes long; the limit is 4096 bytes (UTF-8)');
    limit(nots(100_000), '$filter is 400006 bytes long; the limit is 4096 bytes (UTF-8)');
    limit(
      '('.repeat(4000),
      "Invalid $filter at position 65: nesting deeper than 64 levels (parentheses and 'not' both count)",
    );
    limit(
      'not '.repeat(1024),
      "Invalid $filter at position 257: nesting deeper than 64 levels (parentheses and 'not' both count)",
    );
  });

  const inList = (n: number) => `id in (${Array.from({ length: n }, (_, i) => i).join(',')})`;

  test('1000 in-values are accepted, 1001 are not', () => {
    const parsed = parseFilter(inList(1000));
    expect(parsed).toMatchObject({ kind: 'in' });
    expect(parsed.kind === 'in' && parsed.values.length).toBe(1000);
    // The 1001st value (`1000`) starts right after the 1000th comma.
    const text = inList(1001);
    limit(
      text,
      `Invalid $filter at position ${text.lastIndexOf(',') + 2}: more than 1000 values in an 'in' list`,
    );
  });
});

describe('parseFilter: functions on a column and date/time literals (docs/filters.md)', () => {
  test.each<[string, FilterExpr]>([
    // what odata-query sends
    [
      'created_at gt 2024-01-03T00:00:00.000Z',
      cmp(
        col('created_at', 1),
        'gt',
        {
          kind: 'datetime',
          text: '2024-01-03T00:00:00.000Z',
          value: '2024-01-03 00:00:00.000000',
        },
        12,
      ),
    ],
    [
      "contains(tolower(category),'cat-7')",
      {
        kind: 'match',
        fn: 'contains',
        column: call('tolower', col('category', 18), 10),
        value: 'cat-7',
      },
    ],
    ['year(created_at) eq 2024', cmp(call('year', col('created_at', 6), 1), 'eq', num('2024'), 18)],
    // every function, any case, spaces inside the parentheses
    ...(
      [
        'tolower',
        'toupper',
        'trim',
        'length',
        'year',
        'month',
        'day',
        'hour',
        'minute',
        'second',
        'date',
      ] as const
    ).map((fn): [string, FilterExpr] => [
      `${fn.toUpperCase()}( c ) eq 1`,
      cmp(call(fn, col('c', fn.length + 3), 1), 'eq', num('1'), fn.length + 7),
    ]),
    // a function on either side, or on both
    ["'a' eq toupper(name)", cmp(str('a'), 'eq', call('toupper', col('name', 16), 8), 5)],
    [
      'month(a) eq day(b)',
      cmp(call('month', col('a', 7), 1), 'eq', call('day', col('b', 17), 13), 10),
    ],
    // in, startswith/endswith on a function
    [
      'year(at) in (2023, 2024)',
      { kind: 'in', column: call('year', col('at', 6), 1), values: [num('2023'), num('2024')] },
    ],
    [
      "endswith(trim(name), 'x')",
      { kind: 'match', fn: 'endswith', column: call('trim', col('name', 15), 10), value: 'x' },
    ],
    [
      'day in (2024-01-03, null)',
      { kind: 'in', column: col('day', 1), values: [date('2024-01-03'), NULL] },
    ],
    // function names stay column names when no '(' follows
    ['year eq 2024', cmp(col('year', 1), 'eq', num('2024'), 6)],
    ['date eq 2024-01-03', cmp(col('date', 1), 'eq', date('2024-01-03'), 6)],
    ["contains(date, 'x')", { kind: 'match', fn: 'contains', column: col('date', 10), value: 'x' }],
    ['date(date) eq date', cmp(call('date', col('date', 6), 1), 'eq', col('date', 15), 12)],
    // a literal on the left, not
    ['not 2024-01-03 lt day', not(cmp(date('2024-01-03'), 'lt', col('day', 19), 16))],
  ])('%j', (text, expected) => {
    expect(parseFilter(text)).toEqual(expected);
  });

  test.each<[string, string]>([
    [
      'foo(name) eq 1',
      "at position 1: unknown function 'foo'; the functions are contains, startswith, endswith, tolower, toupper, trim, length, year, month, day, hour, minute, second, date",
    ],
    [
      "substringof('a', name)",
      "at position 1: unknown function 'substringof'; the functions are contains, startswith, endswith, tolower, toupper, trim, length, year, month, day, hour, minute, second, date",
    ],
    [
      "tolower(trim(name)) eq 'a'",
      "at position 9: expected a column (tolower takes a column, not another function), found 'trim'",
    ],
    ["contains(tolower(name) 'a')", "at position 24: expected ',', found the string 'a'"],
    ['year() eq 1', "at position 6: expected a column, found ')'"],
    ["year('x') eq 1", "at position 6: expected a column, found the string 'x'"],
    ['year(a, b) eq 1', "at position 7: expected ')', found ','"],
    [
      'year(a)',
      'at position 8: expected an operator (eq, ne, lt, le, gt, ge or in), found end of filter',
    ],
    ['year(a) eq', 'at position 11: expected a column or a value, found end of filter'],
    ['year(a) in 1', "at position 12: expected '(' after 'in', found '1'"],
  ])('%j → FILTER_SYNTAX', (text, message) => {
    const error = failure(text);
    expect(error.status).toBe(400);
    expect(error.code).toBe('FILTER_SYNTAX');
    expect(error.message).toBe(`Invalid $filter ${message}`);
  });
});

describe('parseFilter: paths and lambdas (docs/relations.md)', () => {
  const path = (names: string[], name: string, position: number): ColumnRef => ({
    kind: 'column',
    name,
    position,
    path: names,
  });
  test.each<[string, FilterExpr]>([
    ["customer/country eq 'Japan'", cmp(path(['customer'], 'country', 1), 'eq', str('Japan'), 18)],
    ['"a b"/"c d" eq 1', cmp(path(['a b'], 'c d', 1), 'eq', num('1'), 13)],
    [
      'items/any(i: i/qty gt 5)',
      {
        kind: 'lambda',
        op: 'any',
        path: ['items'],
        variable: 'i',
        expr: cmp(path(['i'], 'qty', 14), 'gt', num('5'), 20),
        position: 7,
      },
    ],
    [
      'items/any()',
      { kind: 'lambda', op: 'any', path: ['items'], variable: null, expr: null, position: 7 },
    ],
    // What odata-query writes: the variable named after the relation, no space after ':'.
    [
      'order_items/all(order_items:order_items/qty gt 1)',
      {
        kind: 'lambda',
        op: 'all',
        path: ['order_items'],
        variable: 'order_items',
        expr: cmp(path(['order_items'], 'qty', 29), 'gt', num('1'), 45),
        position: 13,
      },
    ],
    [
      'a/b/ANY(_x: _x/größe eq 1)',
      {
        kind: 'lambda',
        op: 'any',
        path: ['a', 'b'],
        variable: '_x',
        expr: cmp(path(['_x'], 'größe', 13), 'eq', num('1'), 22),
        position: 5,
      },
    ],
  ])('%s', (text, expected) => {
    expect(parseFilter(text)).toEqual(expected);
  });

  test.each([
    ['items/any(1x: 1x/qty gt 5)', "found '1x'"],
    ['items/any(null: null/qty gt 5)', "found 'null'"],
    ['items/any(and: and/qty gt 5)', "found 'and'"],
    ['items/all()', "found ')'"],
    ["items/any('i': i/qty gt 5)", "found the string 'i'"],
  ])('%s: the variable must be a plain name', (text, found) => {
    const error = failure(text);
    expect(error.code).toBe('FILTER_SYNTAX');
    expect(error.message).toMatch(/expected a variable name \((any|all)\(x: …\)\)/);
    expect(error.message).toContain(found);
  });
});
