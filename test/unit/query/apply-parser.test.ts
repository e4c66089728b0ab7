import { describe, expect, test } from '@jest/globals';
import { ApiError } from '../../../src/errors.js';
import { MAX_APPLY_BYTES, MAX_APPLY_ITEMS, MAX_FILTER_CALLS } from '../../../src/limits.js';
import { parseApply } from '../../../src/query/apply-parser.js';
import type { ApplyStep, ColumnRef, FilterExpr, Literal } from '../../../src/query/ast.js';
import { parseReadOptions } from '../../../src/query/options.js';

const ref = (name: string, position: number, ...path: string[]): ColumnRef =>
  path.length === 0 ? { kind: 'column', name, position } : { kind: 'column', name, position, path };
const num = (text: string): Literal => ({ kind: 'number', text });
const gt = (left: ColumnRef, right: Literal, position: number): FilterExpr => ({
  kind: 'compare',
  op: 'gt',
  left,
  right,
  position,
});

function failure(text: string): ApiError {
  try {
    parseApply(text);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error(`parsed without error: ${text}`);
}

describe('parseApply: accepted', () => {
  test.each<[string, ApplyStep[]]>([
    [
      'groupby((category),aggregate(price with sum as total,$count as n))',
      [
        {
          kind: 'groupby',
          refs: [ref('category', 10)],
          aggregates: [
            {
              kind: 'aggregate',
              ref: ref('price', 30),
              method: 'sum',
              alias: 'total',
              position: 48,
            },
            { kind: 'count', alias: 'n', position: 64 },
          ],
        },
      ],
    ],
    ['groupby((a, b))', [{ kind: 'groupby', refs: [ref('a', 10), ref('b', 13)], aggregates: [] }]],
    [
      // paths, quoted names (a doubled quote inside), every method, keywords in any case
      'GroupBy((customer/"zip code", "a""b"), Aggregate(x With Average As "my avg", y with MIN as lo, y with max as hi, z with countdistinct as d, $COUNT AS n))',
      [
        {
          kind: 'groupby',
          refs: [ref('zip code', 10, 'customer'), ref('a"b', 31)],
          aggregates: [
            {
              kind: 'aggregate',
              ref: ref('x', 50),
              method: 'average',
              alias: 'my avg',
              position: 68,
            },
            { kind: 'aggregate', ref: ref('y', 78), method: 'min', alias: 'lo', position: 92 },
            { kind: 'aggregate', ref: ref('y', 96), method: 'max', alias: 'hi', position: 110 },
            {
              kind: 'aggregate',
              ref: ref('z', 114),
              method: 'countdistinct',
              alias: 'd',
              position: 138,
            },
            { kind: 'count', alias: 'n', position: 151 },
          ],
        },
      ],
    ],
    [
      'aggregate(a/b/c with sum as s)',
      [
        {
          kind: 'aggregate',
          aggregates: [
            {
              kind: 'aggregate',
              ref: ref('c', 11, 'a', 'b'),
              method: 'sum',
              alias: 's',
              position: 29,
            },
          ],
        },
      ],
    ],
    [
      // steps; `/` between them may have spaces around it (a `+` in a query string)
      'filter(price gt 5) / compute(year(at) as y, tolower(customer/name) as n)/groupby((y))',
      [
        { kind: 'filter', expr: gt(ref('price', 8), num('5'), 14) },
        {
          kind: 'compute',
          items: [
            {
              call: { kind: 'call', fn: 'year', column: ref('at', 35), position: 30 },
              alias: 'y',
              position: 42,
            },
            {
              call: {
                kind: 'call',
                fn: 'tolower',
                column: ref('name', 53, 'customer'),
                position: 45,
              },
              alias: 'n',
              position: 71,
            },
          ],
        },
        { kind: 'groupby', refs: [ref('y', 83)], aggregates: [] },
      ],
    ],
    [
      // filter() takes the whole filter language: a lambda, a path, parentheses
      "filter((items/any(i: i/qty gt 5)) and not (customer/country eq 'JP'))",
      [
        {
          kind: 'filter',
          expr: {
            kind: 'and',
            items: [
              {
                kind: 'lambda',
                op: 'any',
                path: ['items'],
                variable: 'i',
                expr: gt(ref('qty', 22, 'i'), num('5'), 28),
                position: 15,
              },
              {
                kind: 'not',
                expr: {
                  kind: 'compare',
                  op: 'eq',
                  left: ref('country', 44, 'customer'),
                  right: { kind: 'string', value: 'JP' },
                  position: 61,
                },
              },
            ],
          },
        },
      ],
    ],
    [
      // `$count` followed by `with` is a column named $count
      'aggregate($count with sum as s)',
      [
        {
          kind: 'aggregate',
          aggregates: [
            { kind: 'aggregate', ref: ref('$count', 11), method: 'sum', alias: 's', position: 30 },
          ],
        },
      ],
    ],
    ['filter(a gt 5)', [{ kind: 'filter', expr: gt(ref('a', 8), num('5'), 10) }]],
  ])('%s', (text, steps) => {
    expect(parseApply(text)).toEqual(steps);
  });
});

describe('parseApply: refused, with the position and what was expected', () => {
  test.each<[string, string, string]>([
    [
      '',
      'APPLY_SYNTAX',
      'at position 1: expected a step: filter(…), compute(…), groupby(…) or aggregate(…), found end of $apply',
    ],
    [
      'groupby',
      'APPLY_SYNTAX',
      "at position 1: expected a step: filter(…), compute(…), groupby(…) or aggregate(…), found 'groupby'",
    ],
    [
      'select(a)',
      'APPLY_SYNTAX',
      "at position 1: expected a step: filter(…), compute(…), groupby(…) or aggregate(…), found 'select'",
    ],
    [
      'groupby(a)',
      'APPLY_SYNTAX',
      "at position 9: expected '(' and the values to group by, as in groupby((category)), found 'a'",
    ],
    [
      'groupby(())',
      'APPLY_SYNTAX',
      "at position 10: expected a column, a path to one or a computed name, found ')'",
    ],
    [
      'groupby((a)',
      'APPLY_SYNTAX',
      "at position 12: expected ')' (or ', aggregate(…)'), found end of $apply",
    ],
    ['groupby((a),sum(b))', 'APPLY_SYNTAX', "at position 13: expected aggregate(…), found 'sum'"],
    [
      'groupby((a b))',
      'APPLY_SYNTAX',
      "at position 12: expected ',' and another value, or ')', found 'b'",
    ],
    [
      'aggregate(price)',
      'APPLY_SYNTAX',
      "at position 16: expected 'with' and a method (price with sum as total), found ')'",
    ],
    [
      'aggregate(price with total)',
      'APPLY_SYNTAX',
      "at position 22: expected a method (sum, average, min, max, countdistinct), found 'total'",
    ],
    [
      'aggregate(price with avg as a)',
      'APPLY_SYNTAX',
      "at position 22: expected a method (sum, average, min, max, countdistinct), found 'avg'",
    ],
    [
      'aggregate(price with sum)',
      'APPLY_SYNTAX',
      "at position 25: expected 'as' and a name (price with sum as x), found ')'",
    ],
    ['aggregate(price with sum as)', 'APPLY_SYNTAX', "at position 28: expected a name, found ')'"],
    [
      "aggregate(price with sum as 'x')",
      'APPLY_SYNTAX',
      "at position 29: expected a name, found the string 'x'",
    ],
    [
      'aggregate($count)',
      'APPLY_SYNTAX',
      "at position 17: expected 'with' and a method ($count with sum as total), found ')'",
    ],
    [
      'aggregate(a with sum as s',
      'APPLY_SYNTAX',
      "at position 26: expected ',' and another aggregate, or ')', found end of $apply",
    ],
    [
      'compute(year(at))',
      'APPLY_SYNTAX',
      "at position 17: expected 'as' and a name (year(at) as x), found ')'",
    ],
    [
      'compute(at as y)',
      'APPLY_SYNTAX',
      "at position 9: expected a function of a column (tolower, toupper, trim, length, year, month, day, hour, minute, second, date), found 'at'",
    ],
    [
      'compute(floor(at) as y)',
      'APPLY_SYNTAX',
      "at position 9: expected a function of a column (tolower, toupper, trim, length, year, month, day, hour, minute, second, date), found 'floor'",
    ],
    [
      'compute(year(date(at)) as y)',
      'APPLY_SYNTAX',
      "at position 14: expected a column (year takes a column, not another function), found 'date'",
    ],
    [
      'filter(a gt 1) groupby((a))',
      'APPLY_SYNTAX',
      "at position 16: expected '/' and the next step, or end of $apply, found 'groupby'",
    ],
    [
      'filter(a gt 1)/',
      'APPLY_SYNTAX',
      'at position 16: expected a step: filter(…), compute(…), groupby(…) or aggregate(…), found end of $apply',
    ],
    [
      'groupby((a))/groupby((b))',
      'APPLY_SYNTAX',
      'at position 14: groupby(…) must be the last step; filter rows before grouping, with filter(…) or $filter',
    ],
    [
      'aggregate($count as n)/filter(n gt 1)',
      'APPLY_SYNTAX',
      'at position 24: aggregate(…) must be the last step; filter rows before grouping, with filter(…) or $filter',
    ],
    [
      'groupby((a/))',
      'APPLY_SYNTAX',
      "at position 11: expected ',' and another value, or ')', found unexpected character '/'",
    ],
    [
      'groupby((`a`))',
      'APPLY_SYNTAX',
      "at position 10: expected a column, a path to one or a computed name, found unexpected character '`'",
    ],
    [
      'groupby((a));',
      'APPLY_SYNTAX',
      "at position 13: expected '/' and the next step, or end of $apply, found unexpected character ';'",
    ],
    // a filter()'s own errors are the filter parser's, positioned in the $apply text
    [
      'filter()',
      'FILTER_SYNTAX',
      "at position 8: expected a condition (a column, a value, 'not', '(' or contains/startswith/endswith), found ')'",
    ],
    [
      'groupby((a))/filter(a gt 1)',
      'APPLY_SYNTAX',
      'at position 14: groupby(…) must be the last step; filter rows before grouping, with filter(…) or $filter',
    ],
    ['filter(a gt 1 b)', 'APPLY_SYNTAX', "at position 15: expected 'and', 'or' or ')', found 'b'"],
    [
      "filter(name eq 'x)",
      'FILTER_SYNTAX',
      'at position 16: expected a column or a value, found an unterminated string',
    ],
  ])('%s', (text, code, message) => {
    const error = failure(text);
    expect({ code: error.code, message: error.message }).toEqual({
      code,
      message: `Invalid $apply ${message}`,
    });
  });

  test('limits: bytes, items, and one budget of function calls for every filter() and compute()', () => {
    const long = `filter(${'a'.repeat(MAX_APPLY_BYTES)} gt 1)`;
    expect(failure(long).code).toBe('LIMIT_EXCEEDED');
    const refs = Array.from({ length: MAX_APPLY_ITEMS }, (_, i) => `c${i}`);
    expect(parseApply(`groupby((${refs.join(',')}))`)).toHaveLength(1);
    const over = failure(`groupby((${refs.join(',')}),aggregate($count as n))`);
    expect({ code: over.code, message: over.message }).toEqual({
      code: 'LIMIT_EXCEEDED',
      message: `Invalid $apply at position ${`groupby((${refs.join(',')}),aggregate(`.length + 1}: more than ${MAX_APPLY_ITEMS} computed values, groupby values and aggregates in all`,
    });
    // Half the calls in a filter() step, half in compute(): one more anywhere is too many.
    const half = MAX_FILTER_CALLS / 2;
    const conditions = Array.from({ length: half }, () => "contains(a,'x')").join(' or ');
    const computed = Array.from({ length: half }, (_, i) => `tolower(a) as l${i}`).join(',');
    expect(parseApply(`filter(${conditions})/compute(${computed})`)).toHaveLength(2);
    const calls = failure(`filter(${conditions})/compute(${computed},year(b) as y)`);
    expect(calls.code).toBe('LIMIT_EXCEEDED');
    expect(calls.message).toMatch(/^Invalid \$apply at position \d+: more than 32 function calls/);
    const second = failure(`compute(${computed})/filter(${conditions} or contains(a,'y'))`);
    expect(second.message).toMatch(/^Invalid \$apply at position \d+: more than 32 function calls/);
  });
});

describe('parseReadOptions with $apply', () => {
  test('it is a read option; $filter, $orderby and paging stay', () => {
    expect(
      parseReadOptions({
        $apply: 'groupby((a))',
        $filter: 'a gt 1',
        $orderby: 'a desc',
        $top: '3',
      }),
    ).toEqual({
      select: '*',
      filter: gt(ref('a', 1), num('1'), 3),
      orderBy: [{ column: 'a', direction: 'desc' }],
      top: 3,
      skip: null,
      count: false,
      continues: false,
      apply: [{ kind: 'groupby', refs: [ref('a', 10)], aggregates: [] }],
    });
  });

  test.each([
    [
      { $apply: 'groupby((a))', $skiptoken: 'x' },
      '$skiptoken cannot be combined with $apply: page the groups with $orderby, $top and $skip',
    ],
    [
      { $apply: 'groupby((a))', $select: 'a' },
      "$select cannot be combined with $apply: the answer's keys are its groupby values and aliases",
    ],
    [
      { $apply: 'groupby((a))', $select: '*' },
      "$select cannot be combined with $apply: the answer's keys are its groupby values and aliases",
    ],
    [
      { $apply: 'groupby((a))', $expand: 'b' },
      "$expand cannot be combined with $apply: the answer's keys are its groupby values and aliases",
    ],
    [{ $apply: '' }, '$apply is empty; e.g. $apply=groupby((category),aggregate($count as n))'],
    [{ $apply: ['groupby((a))', 'groupby((b))'] }, "Query option '$apply' is given more than once"],
  ])('%j is refused', (query, message) => {
    expect(() => parseReadOptions(query)).toThrow(message);
  });

  test('apply without $ is refused as a misspelt option', () => {
    expect(() => parseReadOptions({ apply: 'groupby((a))' })).toThrow(
      "Unknown query parameter 'apply': did you mean '$apply'?",
    );
  });
});
