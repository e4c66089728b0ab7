/**
 * How the pages of a read follow one another (docs/paging.md). A top-level
 * read with `$top` or a `$skiptoken` is ordered by its `$orderby` and then by the primary key
 * columns that leaves out, in the direction of the last item (ascending when there is none), so
 * that every row has one place in the order: a page ends at a row, and the next begins right
 * after it by comparing sort keys (sql/compile-seek.ts), whatever was inserted or deleted
 * meanwhile. Where that comparison cannot be exact — no primary key (a view, a keyless table), or
 * a sort key whose SQL comparison is not its ORDER BY (JSON, spatial) — pages follow by counting
 * rows instead, as `$skip` does.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import type { ReadRequest } from '../query/ast.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import type { PlannedColumn, PlannedOrder, ReadPlan } from './nodes.js';

/**
 * Whether the column's `<`, `=` and `>` agree with ORDER BY for every value, so that a page can
 * continue after its value: its kind's entry says (types/kinds.ts).
 */
export function isSeekable(column: ColumnInfo): boolean {
  return COLUMN_KINDS[column.kind].seekable(column);
}

/** The plan with its page, when `request` pages: `$top`, or `$skiptoken`. */
export function planPage(plan: ReadPlan, request: ReadRequest): ReadPlan {
  const continues = request.continues === true;
  if (request.top === null && !continues) return plan;
  const keys = pageKeys(plan);
  return { ...plan, orderBy: keys ?? plan.orderBy, page: { keys, continues } };
}

/**
 * `$orderby` (a column named again dropped: its first place decides) and then the primary key
 * columns it leaves out. The tie-breaker is the server's,
 * not the caller's: it is taken from the table even when the caller's view hides it (the token
 * that carries its value is sealed, pipeline/skiptoken.ts).
 */
function pageKeys(plan: ReadPlan): PlannedOrder[] | null {
  const { source } = plan;
  const table: TableInfo = source.table;
  if (table.primaryKey.length === 0) return null;
  const keys = plan.orderBy.filter(
    (key, i) =>
      plan.orderBy.findIndex(
        ({ expr }) => expr.source === key.expr.source && expr.column === key.expr.column,
      ) === i,
  );
  const direction = keys[keys.length - 1]?.direction ?? 'asc';
  for (const name of table.primaryKey) {
    const column = table.columnsByName.get(name);
    if (column === undefined) return null;
    if (keys.some(({ expr }) => expr.source === source && expr.column.name === name)) continue;
    const expr: PlannedColumn = { kind: 'column', source, column };
    keys.push({ expr, direction });
  }
  return keys.every(({ expr }) => isSeekable(expr.column)) ? keys : null;
}
