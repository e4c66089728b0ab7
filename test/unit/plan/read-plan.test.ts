import { describe, expect, test } from '@jest/globals';
import { ApiError } from '../../../src/errors.js';
import { type PlannedFilter, planRead, type ReadPlan } from '../../../src/plan/read-plan.js';
import type { ReadRequest } from '../../../src/query/ast.js';
import { parseFilter } from '../../../src/query/filter-parser.js';
import { parseReadOptions } from '../../../src/query/options.js';
import { backtick, id, note, order, price, select, shipped, size } from '../fixtures/schema.js';

const request = (overrides: Partial<ReadRequest>): ReadRequest => ({
  select: '*',
  filter: null,
  orderBy: [],
  top: null,
  skip: null,
  count: false,
  ...overrides,
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
    const expected: ReadPlan = {
      table: order,
      columns: [id, select, price, note, size, backtick, shipped],
      filter: null,
      orderBy: [],
      top: null,
      skip: null,
      count: false,
    };
    expect(plan).toEqual(expected);
    expect(plan.columns).toBe(order.columns);
  });

  test('a list resolves to ColumnInfo objects in the order given', () => {
    const plan = planRead(request({ select: ['größe', 'select', 'we`ird', 'id'] }), order);
    expect(plan.columns).toEqual([size, select, backtick, id]);
    expect(plan.columns[0]).toBe(size);
  });

  test('order, top, skip and count pass through, order columns resolved', () => {
    const plan = planRead(
      parseReadOptions({ $orderby: 'price desc,id', $top: '5', $skip: '10', $count: 'true' }),
      order,
    );
    expect(plan.orderBy).toEqual([
      { column: price, direction: 'desc' },
      { column: id, direction: 'asc' },
    ]);
    expect([plan.top, plan.skip, plan.count]).toEqual([5, 10, true]);
  });

  test.each<[string, Partial<ReadRequest>, string]>([
    ['select', { select: ['id', 'nope'] }, 'nope'],
    ['select is case-sensitive', { select: ['ID'] }, 'ID'],
    ['* inside a list', { select: ['*'] }, '*'],
    ['orderby', { orderBy: [{ column: 'Price', direction: 'asc' }] }, 'Price'],
    ['filter', { filter: parseFilter("id eq 1 and missing eq 'x'") }, 'missing'],
    ['filter, right operand', { filter: parseFilter('id eq other') }, 'other'],
    ['filter, first unknown reported', { filter: parseFilter('a eq b') }, 'a'],
    ['in', { filter: parseFilter('nope in (1)') }, 'nope'],
    ['function', { filter: parseFilter("contains(nope, 'x')") }, 'nope'],
    ['inside not and parentheses', { filter: parseFilter('not (id eq 1 or (gone eq 2))') }, 'gone'],
  ])('unknown column in %s → 400 UNKNOWN_COLUMN', (_, overrides, name) => {
    const error = failure(() => planRead(request(overrides), order));
    expect(error.status).toBe(400);
    expect(error.code).toBe('UNKNOWN_COLUMN');
    expect(error.message).toBe(`Column '${name}' does not exist in table 'order'`);
  });
});

describe('planRead: filters', () => {
  test.each<[string, PlannedFilter]>([
    [
      'id eq 5',
      {
        kind: 'compare',
        op: 'eq',
        left: { kind: 'column', column: id },
        right: { kind: 'number', text: '5' },
      },
    ],
    [
      "'x' lt select",
      {
        kind: 'compare',
        op: 'lt',
        left: { kind: 'string', value: 'x' },
        right: { kind: 'column', column: select },
      },
    ],
    ['note eq null', { kind: 'isNull', operand: { kind: 'column', column: note }, negated: false }],
    ['null eq note', { kind: 'isNull', operand: { kind: 'column', column: note }, negated: false }],
    ['note ne null', { kind: 'isNull', operand: { kind: 'column', column: note }, negated: true }],
    ['5 eq null', { kind: 'isNull', operand: { kind: 'number', text: '5' }, negated: false }],
    ['null eq null', { kind: 'isNull', operand: { kind: 'null' }, negated: false }],
    ['null ne null', { kind: 'isNull', operand: { kind: 'null' }, negated: true }],
    [
      "größe in (1, null, 'a', null)",
      {
        kind: 'in',
        column: size,
        values: [
          { kind: 'number', text: '1' },
          { kind: 'string', value: 'a' },
        ],
        orNull: true,
      },
    ],
    [
      'id in (1)',
      { kind: 'in', column: id, values: [{ kind: 'number', text: '1' }], orNull: false },
    ],
    ['note in (null)', { kind: 'in', column: note, values: [], orNull: true }],
    ["startswith(select, 'a_')", { kind: 'match', fn: 'startswith', column: select, value: 'a_' }],
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
                  left: { kind: 'column', column: id },
                  right: { kind: 'number', text: '1' },
                },
                {
                  kind: 'compare',
                  op: 'eq',
                  left: { kind: 'column', column: shipped },
                  right: { kind: 'boolean', value: true },
                },
              ],
            },
          },
          { kind: 'isNull', operand: { kind: 'column', column: note }, negated: true },
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
