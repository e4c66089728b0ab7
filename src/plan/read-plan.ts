/**
 * ReadRequest + TableInfo → ReadPlan, a tree: every name resolved against the caller's view of
 * the schema (plan/view.ts: exact match, hidden columns and relations are unknown), `*` expanded
 * in table order, every column reference qualified by the source it is read from, paths through
 * to-one relations made into joins, to-many relations (`$expand`, lambdas) into child reads of
 * their parent row, and functions and date/time literals type-checked (scope.ts, filter-types.ts). The
 * nodes are in nodes.ts. Knows no SQL: the compiler (sql/compile-read.ts) walks the tree.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import type { ReadRequest } from '../query/ast.js';
import type { ReadPlan } from './nodes.js';
import { planPage } from './page.js';
import { Scope } from './scope.js';
import { openViewer, type Viewer } from './view.js';

export type {
  Join,
  PlannedCall,
  PlannedColumn,
  PlannedColumnExpr,
  PlannedFilter,
  PlannedOperand,
  PlannedOrder,
  PlannedPage,
  ReadPlan,
  RelatedRows,
  Selection,
  Source,
} from './nodes.js';

export function planRead(
  request: ReadRequest,
  table: TableInfo,
  viewer: Viewer = openViewer,
): ReadPlan {
  const scope = Scope.root(table, viewer);
  return planPage(scope.plan(request, request.count), request);
}

/** The columns a plan writes at its top level, in order (expanded relations left out). */
export function selectedColumns(plan: ReadPlan): ColumnInfo[] {
  return plan.selections.flatMap((s) => (s.kind === 'column' ? [s.expr.column] : []));
}
