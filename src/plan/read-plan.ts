/**
 * ReadRequest + TableInfo → ReadPlan: every column name resolved against the schema cache (exact
 * match), `*` expanded in table order, comparisons with `null` turned into null tests, and
 * functions and date/time literals type-checked against their columns (filter-types.ts). The
 * plan carries ColumnInfo objects for the compiler and the row serializer. Knows no SQL.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { filterSyntax, filterType, unknownColumn } from '../errors.js';
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
      /** The value is a policy's `@user` value: matched byte for byte (see `exact`). */
      readonly exact?: true;
    }
  /**
   * `column op value`, compared byte for byte: a policy's `@user` value against text, with no
   * collation (`alicé` is not `alice`, `ALICE` is not `alice`) and no pad space (`'alice '` is
   * not `'alice'`). See ExactValues.
   */
  | {
      readonly kind: 'exact';
      readonly op: CompareOp;
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

/**
 * The values a policy's where compares exactly, by the text of the string literal that stands
 * for each (policy/where.ts puts the caller's `@user` values so); undefined for any other
 * literal. An exact value matches text byte for byte (`exact` nodes, compiled to a binary
 * comparison), an integer column only as its canonical digits (`7`, never `07`, `7.0` or `7abc`,
 * which MySQL would read as 7), and a literal by its text; any other column is refused.
 */
export type ExactValues = (text: string) => string | undefined;

/** A filter planned against the whole table: a policy's row condition (src/policy/). */
export function planTableFilter(
  expr: FilterExpr,
  table: TableInfo,
  exact: ExactValues | null = null,
): PlannedFilter {
  const resolve = (name: string) => {
    const column = table.columnsByName.get(name);
    if (column === undefined) throw unknownColumn(table.name, name);
    return column;
  };
  return planFilter(expr, resolve, exact);
}

function planFilter(
  expr: FilterExpr,
  resolve: Resolve,
  exact: ExactValues | null = null,
): PlannedFilter {
  switch (expr.kind) {
    case 'or':
    case 'and':
      return { kind: expr.kind, items: expr.items.map((item) => planFilter(item, resolve, exact)) };
    case 'not':
      return { kind: 'not', expr: planFilter(expr.expr, resolve, exact) };
    case 'compare':
      return planCompare(expr, resolve, exact);
    case 'in': {
      const column = planColumnExpr(expr.column, resolve);
      const values: NonNullFilterLiteral[] = [];
      const exactly: PlannedFilter[] = [];
      for (const value of expr.values) {
        const given = exact !== null && value.kind === 'string' ? exact(value.value) : undefined;
        if (given !== undefined) exactly.push(planExact('eq', column, given, expr.column.position));
        else if (value.kind !== 'null') values.push(value);
      }
      for (const value of values) checkLiteral(value, column, expr.column.position);
      const orNull = values.length + exactly.length < expr.values.length;
      const membership: PlannedFilter = { kind: 'in', column, values, orNull };
      if (exactly.length === 0) return membership;
      const items = values.length > 0 || orNull ? [membership, ...exactly] : exactly;
      return items.length === 1 ? (items[0] as PlannedFilter) : { kind: 'or', items };
    }
    case 'match': {
      const column = planColumnExpr(expr.column, resolve);
      if (column.kind === 'call') checkMatchCall(expr.fn, describe(column), expr.column.position);
      const given = exact?.(expr.value);
      return given === undefined
        ? { kind: 'match', fn: expr.fn, column, value: expr.value }
        : { kind: 'match', fn: expr.fn, column, value: given, exact: true };
    }
  }
}

/** The filters that are always true and always false (compile-read.ts: `(1 = 1)`, `(1 = 0)`). */
const TRUE: PlannedFilter = { kind: 'and', items: [] };
const FALSE: PlannedFilter = { kind: 'or', items: [] };

/** The same comparison with its sides swapped: `5 lt x` is `x gt 5`. */
const SWAPPED: Readonly<Record<CompareOp, CompareOp>> = {
  eq: 'eq',
  ne: 'ne',
  lt: 'gt',
  le: 'ge',
  gt: 'lt',
  ge: 'le',
};

/** Canonical integer text: what MySQL shows for an integer, and the only text equal to one here. */
export const isCanonicalInteger = (text: string): boolean => /^(?:0|-?[1-9]\d*)$/.test(text);

/** `column op value` with an exact value (see ExactValues). */
function planExact(
  op: CompareOp,
  column: PlannedColumnExpr,
  value: string,
  position: number,
): PlannedFilter {
  const { type, label } = describe(column);
  if (type === 'text') return { kind: 'exact', op, column, value };
  const integer =
    column.kind === 'call'
      ? type === 'number'
      : column.column.kind === 'integer' || column.column.kind === 'year';
  if (!integer) {
    throw filterType(
      `Invalid $filter at position ${position}: @user values are compared exactly, with text or integer columns only, and ${label} is neither`,
    );
  }
  if (isCanonicalInteger(value)) {
    return { kind: 'compare', op, left: column, right: { kind: 'number', text: value } };
  }
  // No integer is this text: only `ne` holds, for every row that has a value.
  return op === 'ne' ? { kind: 'isNull', operand: column, negated: true } : FALSE;
}

/** A literal's text, as an exact value is compared with it. */
function literalText(literal: NonNullFilterLiteral): string {
  switch (literal.kind) {
    case 'string':
      return literal.value;
    case 'boolean':
      return String(literal.value);
    default:
      return literal.text;
  }
}

/** `a op b` for two texts in byte order (UTF-8, as MySQL's binary comparison orders them). */
function compareTexts(op: CompareOp, a: string, b: string): boolean {
  const order = Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  switch (op) {
    case 'eq':
      return order === 0;
    case 'ne':
      return order !== 0;
    case 'lt':
      return order < 0;
    case 'le':
      return order <= 0;
    case 'gt':
      return order > 0;
    case 'ge':
      return order >= 0;
  }
}

function planCompare(
  expr: Extract<FilterExpr, { kind: 'compare' }>,
  resolve: Resolve,
  exact: ExactValues | null,
): PlannedFilter {
  const { op, left, right, position } = expr;
  // Resolve left to right so the first unknown column named is the one reported.
  const l = planOperand(left, resolve);
  const r = planOperand(right, resolve);
  const leftExact = exact !== null && l.kind === 'string' ? exact(l.value) : undefined;
  const rightExact = exact !== null && r.kind === 'string' ? exact(r.value) : undefined;
  if (leftExact !== undefined || rightExact !== undefined) {
    if (isColumnExpr(l)) return planExact(op, l, rightExact as string, position);
    if (isColumnExpr(r)) return planExact(SWAPPED[op], r, leftExact as string, position);
    // Two values, one of them exact: known here, never left to MySQL's collation.
    if (l.kind === 'null' || r.kind === 'null') return op === 'ne' ? TRUE : FALSE;
    const a = leftExact ?? literalText(l);
    const b = rightExact ?? literalText(r);
    return compareTexts(op, a, b) ? TRUE : FALSE;
  }
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

const isColumnExpr = (operand: PlannedColumnExpr | FilterLiteral): operand is PlannedColumnExpr =>
  operand.kind === 'column' || operand.kind === 'call';

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
