/**
 * The leaves of a read plan: its sources (tables under an alias), the joins of to-one relations,
 * and filters after planning — the parsed filter's shape, with every column reference resolved
 * and qualified by its source, `x eq null` turned into a null test, and lambdas over to-many
 * relations turned into correlated row sets. The compiler turns a filter into a SQL condition.
 */
import type { ColumnInfo, Relation, TableInfo } from '../db/schema-types.js';
import type {
  ColumnFn,
  CompareOp,
  FilterLiteral,
  MatchFn,
  NonNullFilterLiteral,
  SortDirection,
  UserParameter,
} from '../query/ast.js';

/** A table as one level of a read reads it, under its alias in the SQL (`t0`, `t1`, …). */
export interface Source {
  readonly table: TableInfo;
  readonly alias: string;
}

/**
 * A to-one relation walked from `parent` (for a path, or an expanded to-one): the related row
 * is joined to the parent's, or missing (every column NULL) when there is none, the caller may
 * not see it, or it fails `filter`.
 */
export interface Join {
  readonly source: Source;
  readonly relation: Relation;
  readonly parent: Source;
  /** The caller's row condition on the related table, and an `$expand` item's `$filter`. */
  readonly filter: PlannedFilter | null;
  /**
   * The joins `filter` walks (an expanded to-one's `$filter` naming a path from the related
   * row), joined inside this one: when the filter fails, they are missing with it.
   */
  readonly nested: readonly Join[];
}

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

/**
 * A quoted string met by a binary column, read as the base64 it is shown in (reads write
 * BINARY/VARBINARY/BLOB as base64, docs/types.md): `text` as written, `value` its bytes.
 */
export interface BinaryLiteral {
  readonly kind: 'binary';
  readonly text: string;
  readonly value: Buffer;
}

/** A literal of a planned filter: the AST's, or one the types made of a quoted string. */
export type PlannedLiteral = NonNullFilterLiteral | BinaryLiteral;

/** An operand of a comparison; never the `null` literal (see `isNull`). */
export type PlannedOperand = PlannedColumnExpr | PlannedLiteral;

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
      readonly values: readonly PlannedLiteral[];
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
  const expr = (operand: PlannedColumnExpr | FilterLiteral | BinaryLiteral) => {
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

/** One key of every row object, in order. */
export type Selection =
  | { readonly kind: 'column'; readonly name: string; readonly expr: PlannedColumn }
  /** An expanded to-one relation: an object of `selections`, or null when the join found none. */
  | {
      readonly kind: 'one';
      readonly name: string;
      readonly join: Join;
      readonly selections: readonly Selection[];
    }
  /** An expanded to-many relation: an array of the rows `plan` reads for each parent row. */
  | {
      readonly kind: 'many';
      readonly name: string;
      readonly relation: Relation;
      readonly parent: Source;
      readonly plan: ReadPlan;
    };

export interface PlannedOrder {
  readonly expr: PlannedColumn;
  readonly direction: SortDirection;
}

export interface ReadPlan {
  readonly source: Source;
  /** The to-one joins the selections, filter and order walk, each once, parents first. */
  readonly joins: readonly Join[];
  /** The keys of every row object, in order: selected columns, then expanded relations. */
  readonly selections: readonly Selection[];
  /** The request's filter ANDed with the caller's row condition. */
  readonly filter: PlannedFilter | null;
  readonly orderBy: readonly PlannedOrder[];
  /** For a to-many child read: per parent row. */
  readonly top: number | null;
  readonly skip: number | null;
  readonly count: boolean;
  /**
   * At the top of a read with `$top` or a `$skiptoken`: how its pages follow one another
   * (page.ts). Null otherwise, and in every child read.
   */
  readonly page: PlannedPage | null;
}

/** How the pages of a read follow one another (page.ts). */
export interface PlannedPage {
  /** The whole order, primary key included; null when pages follow by counting rows. */
  readonly keys: readonly PlannedOrder[] | null;
  /** A `$skiptoken` is given: the read starts after its position (bound per request). */
  readonly continues: boolean;
}
