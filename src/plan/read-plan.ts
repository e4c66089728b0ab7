/**
 * ReadRequest + TableInfo → ReadPlan: every column name resolved against the schema cache (exact
 * match), `*` expanded in table order, comparisons with `null` turned into null tests, and
 * functions and date/time literals type-checked against their columns (filter-types.ts). The
 * plan carries ColumnInfo objects for the compiler and the row serializer. Knows no SQL.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { filterSyntax, invalidQuery, unknownColumn } from '../errors.js';
import type {
  ColumnExpr,
  ColumnFn,
  CompareOp,
  FilterExpr,
  FilterLiteral,
  MatchFn,
  NonNullFilterLiteral,
  Operand,
  ReadRequest,
  SortDirection,
} from '../query/ast.js';
import {
  checkCall,
  checkMatchCall,
  checkTemporal,
  type Described,
  describeCall,
  describeColumn,
  describeLiteral,
} from './filter-types.js';

export interface PlannedColumn {
  readonly kind: 'column';
  readonly column: ColumnInfo;
}

/** `fn(column)`, its column resolved and of a type `fn` takes. */
export interface PlannedCall {
  readonly kind: 'call';
  readonly fn: ColumnFn;
  readonly column: ColumnInfo;
}

export type PlannedColumnExpr = PlannedColumn | PlannedCall;

/** An operand of a comparison; never the `null` literal (see `isNull`). */
export type PlannedOperand = PlannedColumnExpr | NonNullFilterLiteral;

export type PlannedFilter =
  | { readonly kind: 'or'; readonly items: readonly PlannedFilter[] }
  | { readonly kind: 'and'; readonly items: readonly PlannedFilter[] }
  | { readonly kind: 'not'; readonly expr: PlannedFilter }
  | {
      readonly kind: 'compare';
      readonly op: CompareOp;
      readonly left: PlannedOperand;
      readonly right: PlannedOperand;
    }
  /** `x eq null` / `x ne null` (either side). `operand` is itself `null` for `null eq null`. */
  | {
      readonly kind: 'isNull';
      readonly operand: PlannedColumnExpr | FilterLiteral;
      readonly negated: boolean;
    }
  /** `values` are the non-null list items in order; `orNull` says whether `null` was among them. */
  | {
      readonly kind: 'in';
      readonly column: PlannedColumnExpr;
      readonly values: readonly NonNullFilterLiteral[];
      readonly orNull: boolean;
    }
  | {
      readonly kind: 'match';
      readonly fn: MatchFn;
      readonly column: PlannedColumnExpr;
      readonly value: string;
    };

export interface PlannedOrder {
  readonly column: ColumnInfo;
  readonly direction: SortDirection;
}

export interface ReadPlan {
  readonly table: TableInfo;
  /** The selected columns in select order: the keys of every row object, in this order. */
  readonly columns: readonly ColumnInfo[];
  readonly filter: PlannedFilter | null;
  readonly orderBy: readonly PlannedOrder[];
  readonly top: number | null;
  readonly skip: number | null;
  readonly count: boolean;
}

export function planRead(request: ReadRequest, table: TableInfo): ReadPlan {
  const resolve = (name: string): ColumnInfo => {
    const column = table.columnsByName.get(name);
    if (column === undefined) throw unknownColumn(table.name, name);
    return column;
  };
  return {
    table,
    columns: request.select === '*' ? table.columns : request.select.map(resolve),
    filter: request.filter === null ? null : planFilter(request.filter, resolve),
    orderBy: request.orderBy.map(({ column, direction }) => ({
      column: resolve(column),
      direction,
    })),
    top: request.top,
    skip: request.skip,
    count: request.count,
  };
}

type Resolve = (name: string) => ColumnInfo;

/** A filter planned against the whole table: a policy's row condition (src/policy/). */
export function planTableFilter(expr: FilterExpr, table: TableInfo): PlannedFilter {
  return planFilter(expr, (name) => {
    const column = table.columnsByName.get(name);
    if (column === undefined) throw unknownColumn(table.name, name);
    return column;
  });
}

function planFilter(expr: FilterExpr, resolve: Resolve): PlannedFilter {
  switch (expr.kind) {
    case 'or':
    case 'and':
      return { kind: expr.kind, items: expr.items.map((item) => planFilter(item, resolve)) };
    case 'not':
      return { kind: 'not', expr: planFilter(expr.expr, resolve) };
    case 'compare':
      return planCompare(expr, resolve);
    case 'in': {
      const column = planColumnExpr(expr.column, resolve);
      const values = expr.values.filter(
        (value): value is NonNullFilterLiteral => value.kind !== 'null',
      );
      for (const value of values) checkLiteral(value, column, expr.column.position);
      return { kind: 'in', column, values, orNull: values.length < expr.values.length };
    }
    case 'match': {
      const column = planColumnExpr(expr.column, resolve);
      if (column.kind === 'call') checkMatchCall(expr.fn, describe(column), expr.column.position);
      return { kind: 'match', fn: expr.fn, column, value: expr.value };
    }
    case 'lambda':
      throw invalidQuery('any() and all() are not supported here');
  }
}

function planCompare(
  expr: Extract<FilterExpr, { kind: 'compare' }>,
  resolve: Resolve,
): PlannedFilter {
  const { op, left, right, position } = expr;
  // Resolve left to right so the first unknown column named is the one reported.
  const l = planOperand(left, resolve);
  const r = planOperand(right, resolve);
  if (l.kind === 'null' || r.kind === 'null') {
    if (op === 'eq' || op === 'ne') {
      return { kind: 'isNull', operand: l.kind === 'null' ? r : l, negated: op === 'ne' };
    }
    throw filterSyntax(
      `Invalid $filter at position ${position}: null cannot be compared with '${op}'; use 'eq null' or 'ne null'`,
    );
  }
  checkLiteral(l, r, position);
  checkLiteral(r, l, position);
  return { kind: 'compare', op, left: l, right: r };
}

function planOperand(operand: Operand, resolve: Resolve): PlannedColumnExpr | FilterLiteral {
  return operand.kind === 'column' || operand.kind === 'call'
    ? planColumnExpr(operand, resolve)
    : operand;
}

/** A column, or `fn(column)` with the column checked to be of a type `fn` takes. */
function planColumnExpr(expr: ColumnExpr, resolve: Resolve): PlannedColumnExpr {
  if (expr.kind === 'column') return { kind: 'column', column: resolve(expr.name) };
  const column = resolve(expr.column.name);
  checkCall(expr.fn, column, expr.position);
  return { kind: 'call', fn: expr.fn, column };
}

/**
 * A date/time `side` must meet an operand of a matching type; any other side passes. Only
 * then is the other side described, so plain comparisons pay one `kind` test.
 */
function checkLiteral(side: PlannedOperand, other: PlannedOperand, position: number): void {
  if (side.kind !== 'date' && side.kind !== 'datetime' && side.kind !== 'timeofday') return;
  checkTemporal(side, describe(other), position);
}

function describe(operand: PlannedOperand): Described {
  switch (operand.kind) {
    case 'column':
      return describeColumn(operand.column);
    case 'call':
      return describeCall(operand.fn, operand.column);
    default:
      return describeLiteral(operand);
  }
}
