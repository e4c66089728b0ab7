/**
 * A filter after planning: the parsed filter's shape, with every column reference resolved and
 * qualified by its source, `x eq null` turned into a null test, and lambdas over to-many
 * relations turned into correlated row sets. The compiler turns it into a SQL condition.
 */
import type { ColumnInfo, Relation } from '../db/schema-types.js';
import type {
  ColumnFn,
  CompareOp,
  FilterLiteral,
  MatchFn,
  NonNullFilterLiteral,
  UserParameter,
} from '../query/ast.js';
import type { Join, Source } from './read-plan.js';

/** A column of one source of the read. */
export interface PlannedColumn {
  readonly kind: 'column';
  readonly source: Source;
  readonly column: ColumnInfo;
}

/** `fn(column)`, its column of a type `fn` takes. */
export interface PlannedCall {
  readonly kind: 'call';
  readonly fn: ColumnFn;
  readonly arg: PlannedColumn;
}

export type PlannedColumnExpr = PlannedColumn | PlannedCall;

/** An operand of a comparison; never the `null` literal (see `isNull`). */
export type PlannedOperand = PlannedColumnExpr | NonNullFilterLiteral;

/** The rows of a to-many relation that belong to one row of `parent`. */
export interface RelatedRows {
  readonly relation: Relation;
  readonly parent: Source;
  readonly source: Source;
  readonly joins: readonly Join[];
  /** The caller's row condition on the related table. */
  readonly filter: PlannedFilter | null;
}

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
      readonly value: string | UserParameter;
    }
  /**
   * `rel/any(x: cond)`: some related row satisfies `condition` (any row at all when null);
   * `rel/all(x: cond)`: no related row fails it.
   */
  | {
      readonly kind: 'related';
      readonly op: 'any' | 'all';
      readonly rows: RelatedRows;
      readonly condition: PlannedFilter | null;
    };

/** `a AND b`, either of which may be absent; `a` stays one parenthesised item. */
export function both(a: PlannedFilter | null, b: PlannedFilter | null): PlannedFilter | null {
  if (b === null) return a;
  return a === null ? b : { kind: 'and', items: [a, b] };
}

/**
 * Calls `visit` for every column the filter reads, in text order, lambdas' rows included (their
 * own columns, not their row conditions). The one walker over planned filters.
 */
export function visitPlannedColumns(
  filter: PlannedFilter,
  visit: (column: PlannedColumn) => void,
): void {
  const expr = (operand: PlannedColumnExpr | FilterLiteral) => {
    if (operand.kind === 'column') visit(operand);
    else if (operand.kind === 'call') visit(operand.arg);
  };
  switch (filter.kind) {
    case 'or':
    case 'and':
      for (const item of filter.items) visitPlannedColumns(item, visit);
      return;
    case 'not':
      visitPlannedColumns(filter.expr, visit);
      return;
    case 'compare':
      expr(filter.left);
      expr(filter.right);
      return;
    case 'isNull':
      expr(filter.operand);
      return;
    case 'in':
    case 'match':
      expr(filter.column);
      return;
    case 'related':
      if (filter.condition !== null) visitPlannedColumns(filter.condition, visit);
      return;
  }
}

/** Whether the filter has a lambda (a correlated subquery, so its columns need aliases). */
export function readsRelatedRows(filter: PlannedFilter): boolean {
  switch (filter.kind) {
    case 'or':
    case 'and':
      return filter.items.some(readsRelatedRows);
    case 'not':
      return readsRelatedRows(filter.expr);
    case 'related':
      return true;
    default:
      return false;
  }
}
