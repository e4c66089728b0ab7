import { describe, expect, test } from '@jest/globals';
import type { ColumnInfo, TableInfo } from '../../../src/db/schema-types.js';
import { ApiError } from '../../../src/errors.js';
import { type ApplyOutput, planApply } from '../../../src/plan/apply.js';
import { fullView, type Viewer } from '../../../src/plan/view.js';
import type { AggregateMethod } from '../../../src/query/ast.js';
import { parseReadOptions, type QueryObject } from '../../../src/query/options.js';
import {
  big,
  bits,
  customer,
  data,
  name,
  qty,
  ratio,
  sale,
  weight,
  year,
} from '../fixtures/apply-schema.js';
import { at, clock, day, doc, price, table } from '../fixtures/schema.js';

const plan = (query: QueryObject, from: TableInfo = sale, viewer?: Viewer) =>
  planApply(parseReadOptions(query), from, viewer);

function failure(query: QueryObject, from: TableInfo = sale, viewer?: Viewer): ApiError {
  try {
    plan(query, from, viewer);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error(`planned without error: ${JSON.stringify(query)}`);
}

/** The answer's keys, nested objects as [name, keys]. */
function keys(outputs: readonly ApplyOutput[]): unknown[] {
  return outputs.map((o) => (o.kind === 'nested' ? [o.name, keys(o.outputs)] : o.name));
}

/** What each value is written as: the result's kind and data type. */
function results(outputs: readonly ApplyOutput[]): unknown[] {
  return outputs.map((o) =>
    o.kind === 'nested' ? results(o.outputs) : `${o.result.kind}/${o.result.dataType}`,
  );
}

describe('the type rules of the aggregates', () => {
  const columns: [string, string, ColumnInfo][] = [
    qty,
    big,
    price,
    ratio,
    weight,
    year,
    bits,
    day,
    at,
    clock,
    name,
    data,
    doc,
  ].map((c) => [c.name, c.dataType, c]);
  const accepts: Record<AggregateMethod, readonly ColumnInfo[]> = {
    sum: [qty, big, price, ratio, weight],
    average: [qty, big, price, ratio, weight],
    min: [qty, big, price, ratio, weight, year, bits, day, at, clock, name],
    max: [qty, big, price, ratio, weight, year, bits, day, at, clock, name],
    countdistinct: [qty, big, price, ratio, weight, year, bits, day, at, clock, name, data, doc],
  };
  const withDoc = table('t', [...sale.columns.filter((c) => c.name !== 'doc'), doc]);
  for (const method of Object.keys(accepts) as AggregateMethod[]) {
    test.each(columns)(`${method} of %s (%s)`, (_, __, column) => {
      const query = { $apply: `aggregate(${column.name} with ${method} as x)` };
      if (accepts[method].includes(column)) {
        expect(() => plan(query, withDoc)).not.toThrow();
      } else {
        const error = failure(query, withDoc);
        expect(error.code).toBe('APPLY_TYPE');
        expect(error.message).toMatch(
          new RegExp(
            `^Invalid \\$apply at position 11: ${method} takes .*, and column '${column.name}' \\(${column.dataType}\\) is not one$`,
          ),
        );
      }
    });
  }

  test('what each gives, as the row codec will write it', () => {
    const { outputs } = plan({
      $apply:
        'aggregate(qty with sum as a,big with average as b,price with sum as c,price with average as d,ratio with sum as e,weight with average as f,weight with min as g,at with max as h,clock with min as i,name with countdistinct as j,$count as k,bits with max as l)',
    });
    expect(results(outputs)).toEqual([
      'integer/bigint', // SUM of integers: MySQL's DECIMAL(n,0), written as an integer
      'decimal/decimal', // AVG of integers: MySQL's digits
      'decimal/decimal',
      'decimal/decimal',
      'float/double',
      'float/double',
      'float/float', // the column itself: a FLOAT written as the stored float
      'datetime/datetime',
      'string/time',
      'integer/bigint',
      'integer/bigint',
      'bit/bit',
    ]);
    // min and max are written as the column is
    expect((outputs[6] as Extract<ApplyOutput, { kind: 'total' }>).result).toBe(weight);
  });

  test('functions: compute() takes the filter rules, and gives text, numbers or dates', () => {
    const { outputs } = plan({
      $apply:
        'compute(year(day) as y,toupper(name) as u,date(at) as d)/groupby((y,u,d),aggregate(y with sum as s,u with max as m))',
    });
    expect(results(outputs)).toEqual([
      'integer/bigint',
      'string/varchar',
      'date/date',
      'integer/bigint',
      'string/varchar',
    ]);
    expect(failure({ $apply: 'compute(year(name) as y)/groupby((y))' }).message).toBe(
      "Invalid $apply at position 9: year() takes a DATE, DATETIME or TIMESTAMP column, and column 'name' (varchar) is not one",
    );
    expect(failure({ $apply: 'compute(trim(day) as t)/groupby((t))' }).code).toBe('APPLY_TYPE');
    expect(
      failure({ $apply: 'compute(date(at) as d)/aggregate(d with average as a)' }).message,
    ).toBe(
      "Invalid $apply at position 34: average takes a number column (an integer, DECIMAL, FLOAT or DOUBLE column) or a function giving a number, and 'd' (date(at)) gives date",
    );
  });

  test('a kind whose value is read another way (a spatial column) is neither grouped, counted nor answered', () => {
    const shape = {
      ...name,
      name: 'shape',
      dataType: 'point',
      kind: 'geometry',
    } as unknown as ColumnInfo;
    const places = table('places', [sale.columns[0] as ColumnInfo, shape]);
    expect(failure({ $apply: 'groupby((shape))' }, places).message).toBe(
      "Invalid $apply at position 10: column 'shape' (point) cannot be grouped or read through $apply; read it without $apply",
    );
    expect(failure({ $apply: 'aggregate(shape with countdistinct as n)' }, places).code).toBe(
      'APPLY_TYPE',
    );
    expect(failure({ $apply: 'aggregate(shape with min as n)' }, places).code).toBe('APPLY_TYPE');
    expect(failure({ $apply: 'filter(id gt 1)' }, places).code).toBe('APPLY_TYPE');
    expect(() => plan({ $apply: 'aggregate($count as n)' }, places)).not.toThrow();
  });
});

describe('the answer: keys in order, paths as nested objects', () => {
  test('groupby values in order, a relation once in the place of its first path, then aliases', () => {
    const { outputs, groupBy } = plan({
      $apply:
        'groupby((customer/name,qty,customer/country/region,customer/id),aggregate($count as n))',
    });
    expect(keys(outputs)).toEqual([
      ['customer', ['name', ['country', ['region']], 'id']],
      'qty',
      'n',
    ]);
    expect(groupBy?.map((v) => (v.kind === 'column' ? v.column.name : v.fn))).toEqual([
      'name',
      'qty',
      'region',
      'id',
    ]);
  });

  test('without grouping: every column the caller may read, then the computed values', () => {
    const { outputs, groupBy } = plan({ $apply: "filter(name ne 'x')/compute(year(day) as y)" });
    expect(groupBy).toBeNull();
    expect(keys(outputs)).toEqual([...sale.columns.map((c) => c.name), 'y']);
  });

  test('aggregate() alone: one group, no groupby values', () => {
    expect(plan({ $apply: 'aggregate($count as n)' }).groupBy).toEqual([]);
  });

  test.each<[string, QueryObject, string, string]>([
    [
      'a value grouped twice',
      { $apply: 'groupby((customer/name,customer/name))' },
      'INVALID_QUERY',
      "Invalid $apply at position 24: groupby names 'customer/name' twice",
    ],
    [
      'a computed name grouped twice',
      { $apply: 'compute(year(day) as y)/groupby((y,y))' },
      'INVALID_QUERY',
      "Invalid $apply at position 36: groupby names 'y' twice",
    ],
    [
      'an alias that is a group key',
      { $apply: 'groupby((qty),aggregate(price with sum as qty))' },
      'INVALID_QUERY',
      "Invalid $apply at position 43: the answer would have the key 'qty' twice; give one of them another name",
    ],
    [
      'an alias that is a relation grouped through',
      { $apply: 'groupby((customer/name),aggregate($count as customer))' },
      'INVALID_QUERY',
      "Invalid $apply at position 45: the answer would have the key 'customer' twice; give one of them another name",
    ],
    [
      'two aliases alike',
      { $apply: 'aggregate($count as n,qty with sum as n)' },
      'INVALID_QUERY',
      "Invalid $apply at position 39: the answer would have the key 'n' twice; give one of them another name",
    ],
    [
      'a computed name given twice',
      { $apply: 'compute(year(day) as y,month(day) as y)/groupby((y))' },
      'INVALID_QUERY',
      "Invalid $apply at position 38: 'y' already names a computed value; give the computed value another name",
    ],
    [
      'a function of a computed value',
      { $apply: 'compute(year(day) as y)/compute(month(y) as m)/groupby((m))' },
      'APPLY_TYPE',
      "Invalid $apply at position 33: month() takes a column, and 'y' is a computed value",
    ],
    [
      'a function of a computed value in filter()',
      { $apply: 'compute(tolower(name) as n)/filter(length(n) gt 1)/groupby((n))' },
      'APPLY_TYPE',
      "Invalid $apply at position 36: length() takes a column, and 'n' is a computed value",
    ],
    [
      'a computed name used before it is computed',
      { $apply: 'filter(y gt 1)/compute(year(day) as y)/groupby((y))' },
      'UNKNOWN_COLUMN',
      "Column 'y' does not exist in table 'sale'",
    ],
    [
      'a filter() type error names $apply',
      { $apply: 'compute(year(day) as y)/filter(y eq 2024-01-01)/groupby((y))' },
      'FILTER_TYPE',
      "Invalid $apply at position 34: the date 2024-01-01 cannot be compared with year(day) on column 'day' (date), which is a number; a date is compared with a DATE, DATETIME or TIMESTAMP column or date()",
    ],
    [
      '$orderby a column not grouped',
      { $apply: 'groupby((name))', $orderby: 'qty' },
      'INVALID_QUERY',
      "$orderby 'qty' is not in the answer of $apply: order by its groupby values and aliases",
    ],
    [
      '$orderby a path not grouped',
      { $apply: 'groupby((customer/name))', $orderby: 'customer/id' },
      'INVALID_QUERY',
      "$orderby 'customer/id' is not in the answer of $apply: order by its groupby values and aliases",
    ],
    [
      '$orderby a computed value not grouped',
      { $apply: 'compute(year(day) as y)/groupby((name))', $orderby: 'y' },
      'INVALID_QUERY',
      "$orderby 'y' is not in the answer of $apply: order by its groupby values and aliases",
    ],
    [
      '$orderby a column with aggregate() alone',
      { $apply: 'aggregate($count as n)', $orderby: 'name' },
      'INVALID_QUERY',
      "$orderby 'name' is not in the answer of $apply: order by its groupby values and aliases",
    ],
  ])('%s', (_, query, code, message) => {
    const error = failure(query);
    expect({ code: error.code, message: error.message }).toEqual({ code, message });
  });

  test('$orderby: aliases first, then grouped values; the groups not named come after, ascending', () => {
    const { orderBy } = plan({
      $apply: 'compute(year(day) as y)/groupby((name,y),aggregate(qty with sum as qty))',
      $orderby: 'qty desc,y desc',
    });
    expect(
      orderBy.map(({ by, direction }) => [
        by.kind === 'total' ? `total ${by.name}` : by.kind === 'call' ? by.fn : by.column.name,
        direction,
      ]),
    ).toEqual([
      ['total qty', 'desc'],
      ['year', 'desc'],
      ['name', 'asc'],
    ]);
  });
});

describe("through the caller's views", () => {
  const hidden: Viewer = (t) => {
    if (t === sale) {
      const visible = sale.columns.filter((c) => c.name !== 'price');
      return {
        ...fullView(t),
        columns: visible,
        column: (n) => (n === 'price' ? undefined : t.columnsByName.get(n)),
      };
    }
    return t === customer ? null : fullView(t);
  };

  test.each<[string, QueryObject, string]>([
    ['grouped', { $apply: 'groupby((price))' }, "Column 'price' does not exist in table 'sale'"],
    [
      'summed',
      { $apply: 'aggregate(price with sum as s)' },
      "Column 'price' does not exist in table 'sale'",
    ],
    [
      'counted',
      { $apply: 'aggregate(price with countdistinct as s)' },
      "Column 'price' does not exist in table 'sale'",
    ],
    [
      'ordered',
      { $apply: 'groupby((qty))', $orderby: 'price' },
      "Column 'price' does not exist in table 'sale'",
    ],
  ])('a hidden column cannot be %s', (_, query, message) => {
    const error = failure(query, sale, hidden);
    expect({ code: error.code, message: error.message }).toEqual({
      code: 'UNKNOWN_COLUMN',
      message,
    });
  });

  test('a relation to a table the caller cannot read is unknown', () => {
    const error = failure({ $apply: 'groupby((customer/name))' }, sale, hidden);
    expect({ code: error.code, message: error.message }).toEqual({
      code: 'UNKNOWN_RELATION',
      message: "Relation 'customer' does not exist on table 'sale'",
    });
  });

  test("a computed name may be a hidden column's name (nothing tells it exists), not a visible one's", () => {
    expect(() =>
      plan({ $apply: 'compute(year(day) as price)/groupby((price))' }, sale, hidden),
    ).not.toThrow();
    expect(
      failure({ $apply: 'compute(year(day) as qty)/groupby((qty))' }, sale, hidden).message,
    ).toBe(
      "Invalid $apply at position 22: 'qty' already names a column; give the computed value another name",
    );
  });

  test('without grouping, only the columns the caller may read', () => {
    const { outputs } = plan({ $apply: 'filter(qty gt 1)' }, sale, hidden);
    expect(keys(outputs)).not.toContain('price');
    expect(keys(outputs)).toHaveLength(sale.columns.length - 1);
  });
});
