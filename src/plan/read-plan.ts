/**
 * ReadRequest + TableInfo → ReadPlan: every column name resolved against the schema cache (exact
 * match), `*` expanded in table order, and comparisons with `null` turned into null tests. The
 * plan carries ColumnInfo objects for the compiler and the row serializer. Knows no SQL.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { filterSyntax, unknownColumn } from '../errors.js';
import type {
  ColumnRef,
  CompareOp,
  FilterExpr,
  Literal,
  MatchFn,
  NonNullLiteral,
  Operand,
  ReadRequest,
  SortDirection,
} from '../query/ast.js';

export interface PlannedColumn {
  readonly kind: 'column';
  readonly column: ColumnInfo;
}

/** An operand of a comparison; never the `null` literal (see `isNull`). */
export type PlannedOperand = PlannedColumn | NonNullLiteral;

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
      readonly operand: PlannedColumn | Literal;
      readonly negated: boolean;
    }
  /** `values` are the non-null list items in order; `orNull` says whether `null` was among them. */
  | {
      readonly kind: 'in';
      readonly column: ColumnInfo;
      readonly values: readonly NonNullLiteral[];
      readonly orNull: boolean;
    }
  | {
      readonly kind: 'match';
      readonly fn: MatchFn;
      readonly column: ColumnInfo;
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
      const column = resolve(expr.column.name);
      const values = expr.values.filter((value): value is NonNullLiteral => value.kind !== 'null');
      return { kind: 'in', column, values, orNull: values.length < expr.values.length };
    }
    case 'match':
      return { kind: 'match', fn: expr.fn, column: resolve(expr.column.name), value: expr.value };
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
  return { kind: 'compare', op, left: l, right: r };
}

function planOperand(operand: Operand, resolve: Resolve): PlannedColumn | Literal {
  return operand.kind === 'column' ? planColumn(operand, resolve) : operand;
}

function planColumn(ref: ColumnRef, resolve: Resolve): PlannedColumn {
  return { kind: 'column', column: resolve(ref.name) };
}
