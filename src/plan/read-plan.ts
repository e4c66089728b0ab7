/**
 * ReadRequest + TableInfo → ReadPlan, a tree: every name resolved against the caller's view of
 * the schema (plan/view.ts: exact match, hidden columns and relations are unknown), `*` expanded
 * in table order, every column reference qualified by the source it is read from, paths through
 * to-one relations made into joins, to-many relations (`$expand`, lambdas) into child reads of
 * their parent row, and functions and date/time literals type-checked (plan-filter.ts). Knows no
 * SQL: the compiler (sql/compile-read.ts) walks the tree.
 */
import type { ColumnInfo, Relation, TableInfo } from '../db/schema-types.js';
import type { ReadRequest, SortDirection } from '../query/ast.js';
import type { PlannedFilter } from './planned-filter.js';
import { Scope } from './scope.js';
import { openViewer, type Viewer } from './view.js';

export type {
  PlannedCall,
  PlannedColumn,
  PlannedColumnExpr,
  PlannedFilter,
  PlannedOperand,
  RelatedRows,
} from './planned-filter.js';

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

import type { PlannedColumn } from './planned-filter.js';

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
}

export function planRead(
  request: ReadRequest,
  table: TableInfo,
  viewer: Viewer = openViewer,
): ReadPlan {
  const scope = Scope.root(table, viewer);
  return scope.plan(request, request.count);
}

/** The columns a plan writes at its top level, in order (expanded relations left out). */
export function selectedColumns(plan: ReadPlan): ColumnInfo[] {
  return plan.selections.flatMap((s) => (s.kind === 'column' ? [s.expr.column] : []));
}
