/**
 * The type rules of `$apply` (docs/totals.md): which columns each aggregate method and compute()
 * function takes, and what each gives. What a value gives is a ColumnInfo, so the row codec
 * (types/rows.ts) writes it as it writes a column of that type: the aggregated column itself for
 * min and max, else a type of what MySQL answers (SUM of integers is a DECIMAL without fraction,
 * written as an integer; AVG of integers a DECIMAL with div_precision_increment digits, written
 * with exactly those digits; SUM and AVG of FLOAT/DOUBLE a DOUBLE). A mismatch is an APPLY_TYPE
 * 400 that names the column.
 */
import type { ColumnInfo, JsonKind } from '../db/schema-types.js';
import { applyType } from '../errors.js';
import type { AggregateMethod, ColumnFn } from '../query/ast.js';
import { excerpt } from '../query/lexer.js';
import type { ColumnKind } from '../types/column-kind.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import { columnType, FN_RULES, type ValueType } from './filter-types.js';
import type { PlannedColumnExpr } from './nodes.js';

/** A value of each row that `$apply` groups by or aggregates: a column, or fn(column). */
export type RowValue = PlannedColumnExpr;

/** What `$count as n` and the methods give or take. */
export type TotalMethod = AggregateMethod | 'count';

/** A column-like description of a computed value (never a column of any table). */
function result(name: string, dataType: string, kind: JsonKind): ColumnInfo {
  return {
    name,
    dataType,
    columnType: dataType,
    kind,
    nullable: true,
    unsigned: false,
    autoIncrement: false,
    hasDefault: false,
    generated: false,
    maxLength: null,
    numericPrecision: null,
    numericScale: null,
  };
}

/** COUNT, SUM of integers (MySQL's DECIMAL(n,0)), integer-valued functions: number or string. */
const INTEGER = result('integer', 'bigint', 'integer');
/** SUM/AVG of DECIMAL and AVG of integers: the DECIMAL text MySQL sends, digit for digit. */
const DECIMAL = result('decimal', 'decimal', 'decimal');
/** SUM/AVG of FLOAT and DOUBLE: MySQL computes them as DOUBLE. */
const DOUBLE = result('double', 'double', 'float');
const DATE = result('date', 'date', 'date');

/** Text from a function of each column: its length bounds the text (one object per column). */
const texts = new WeakMap<ColumnInfo, ColumnInfo>();

/** What a compute() function gives, per function (text keeps its column's length). */
export function computedResult(fn: ColumnFn, arg: ColumnInfo): ColumnInfo {
  switch (FN_RULES[fn].gives) {
    case 'text': {
      let text = texts.get(arg);
      if (text === undefined) {
        text = { ...result('text', 'varchar', 'string'), maxLength: arg.maxLength };
        texts.set(arg, text);
      }
      return text;
    }
    case 'date':
      return DATE;
    default:
      return INTEGER;
  }
}

/** The type of a row value: a column's, or what its function gives. */
function valueType(value: RowValue): ValueType {
  return value.kind === 'column' ? columnType(value.column) : FN_RULES[value.fn].gives;
}

/** What a row value is, as its writer sees it (min and max give it unchanged). */
export function valueResult(value: RowValue): ColumnInfo {
  return value.kind === 'column' ? value.column : computedResult(value.fn, value.arg.column);
}

/** The kinds whose entry (types/kinds.ts) says `$apply` takes their values for one of `uses`. */
function kindsFor(...uses: ColumnKind['aggregates'][]): ReadonlySet<JsonKind> {
  const kinds = Object.keys(COLUMN_KINDS) as JsonKind[];
  return new Set(kinds.filter((kind) => uses.includes(COLUMN_KINDS[kind].aggregates)));
}

/** What min and max take: numbers, text (ENUM and SET by their text), dates and times. */
const ORDERED = kindsFor('sum', 'order');
const SUMMABLE = kindsFor('sum');
/**
 * What a group value, a counted value and a value of the rows read through `$apply` may be: the
 * kinds the driver's own value of the column is written from (types/rows.ts); a kind whose value
 * must be read another way (a spatial column) is refused rather than written wrong.
 */
const PLAIN = kindsFor('sum', 'order', 'group');

const TAKES: Readonly<Record<AggregateMethod, string>> = {
  countdistinct: 'a column that is not spatial, or a function of one',
  sum: 'a number column (an integer, DECIMAL, FLOAT or DOUBLE column) or a function giving a number',
  average:
    'a number column (an integer, DECIMAL, FLOAT or DOUBLE column) or a function giving a number',
  min: 'a number, text, date or time column, or a function of one',
  max: 'a number, text, date or time column, or a function of one',
};

/** Whether `method` takes `value`: countdistinct takes any; functions give numbers, text or dates. */
function takes(method: AggregateMethod, value: RowValue): boolean {
  switch (method) {
    case 'countdistinct':
      return value.kind === 'call' || PLAIN.has(value.column.kind);
    case 'sum':
    case 'average':
      return value.kind === 'column'
        ? SUMMABLE.has(value.column.kind)
        : valueType(value) === 'number';
    case 'min':
    case 'max':
      return value.kind === 'call' || ORDERED.has(value.column.kind);
  }
}

/**
 * Throws APPLY_TYPE unless `method` takes `value`; `label` is the value as written
 * (`price`, `customer/credit`, or a computed name), `position` the aggregate's alias.
 */
export function checkAggregate(
  method: AggregateMethod,
  value: RowValue,
  label: string,
  position: number,
): void {
  if (takes(method, value)) return;
  const what =
    value.kind === 'column'
      ? `column '${excerpt(label)}' (${value.column.dataType}) is not one`
      : `'${excerpt(label)}' (${value.fn}(${value.arg.column.name})) gives ${valueType(value)}`;
  throw applyType(
    `Invalid $apply at position ${position}: ${method} takes ${TAKES[method]}, and ${what}`,
  );
}

/** Throws APPLY_TYPE unless `value` can be a group value (or a value of the rows answered). */
export function checkPlain(value: RowValue, label: string, position: number): void {
  if (value.kind === 'call' || PLAIN.has(value.column.kind)) return;
  throw applyType(
    `Invalid $apply at position ${position}: column '${excerpt(label)}' (${value.column.dataType}) cannot be grouped or read through $apply; read it without $apply`,
  );
}

/** What `method` of `value` gives (null for `$count`). */
export function totalResult(method: TotalMethod, value: RowValue | null): ColumnInfo {
  if (method === 'count' || method === 'countdistinct' || value === null) return INTEGER;
  if (method === 'min' || method === 'max') return valueResult(value);
  const sums = value.kind === 'column' ? COLUMN_KINDS[value.column.kind].sumType : 'integer';
  if (sums === 'double') return DOUBLE;
  if (sums === 'decimal' || method === 'average') return DECIMAL;
  return INTEGER;
}

/** Throws APPLY_TYPE unless compute()'s `fn` takes the column (the filter's function rules). */
export function checkComputed(fn: ColumnFn, column: ColumnInfo, position: number): void {
  const rule = FN_RULES[fn];
  if (rule.takes.includes(columnType(column))) return;
  throw applyType(
    `Invalid $apply at position ${position}: ${fn}() takes ${rule.takesText}, and column '${column.name}' (${column.dataType}) is not one`,
  );
}

/** The columns of a view each method takes, for the API description. */
export function aggregatable(columns: readonly ColumnInfo[]): {
  readonly summable: readonly ColumnInfo[];
  readonly ordered: readonly ColumnInfo[];
} {
  return {
    summable: columns.filter((column) => SUMMABLE.has(column.kind)),
    ordered: columns.filter((column) => ORDERED.has(column.kind)),
  };
}
