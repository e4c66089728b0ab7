/**
 * ApplyPlan → `{ sql, params }` for a read with `$apply` and for its `$count`. The rows are taken
 * as a read takes them (sql/compile-read.ts: the table, its to-one joins, the WHERE), then
 * grouped by the groupby values with one fixed SQL aggregate per total. ORDER BY and GROUP BY
 * repeat the expressions instead of naming select-list aliases: MySQL resolves a name in GROUP
 * BY to a column before an alias, and an expression means one thing everywhere. Names enter only
 * through quoteIdent, values only as `?`. Knows no HTTP.
 */
import type { ServerKind } from '../db/pool.js';

type Flavour = ServerKind['flavour'];

import type { ApplyOrder, ApplyOutput, ApplyPlan, TotalOutput } from '../plan/apply.js';
import { readsRelatedRows } from '../plan/nodes.js';
import {
  compileColumnExpr,
  compileFilter,
  type SqlContext,
  UNQUALIFIED,
} from './compile-filter.js';
import { fromClause, limitClause } from './compile-read.js';
import type { CompiledQuery } from './compiled-query.js';
import { quoteIdent } from './quote.js';

/** Fixed SQL per method; the request only picks an entry. */
const AGGREGATE_SQL = { sum: 'SUM', average: 'AVG', min: 'MIN', max: 'MAX' } as const;

export function compileApply(plan: ApplyPlan, flavour: Flavour = 'mariadb'): CompiledQuery {
  const context = contextOf(plan, flavour);
  const params: unknown[] = [];
  let sql = `SELECT ${selectList(plan.outputs, context).join(', ')} ${rowsClause(plan, context, params)}`;
  if (plan.groupBy !== null && plan.groupBy.length > 0) sql += groupByClause(plan, context);
  if (plan.orderBy.length > 0) {
    sql += ` ORDER BY ${plan.orderBy.map((order) => orderItem(order, context)).join(', ')}`;
  }
  return { sql: sql + limitClause(plan, params), params };
}

/**
 * The `$count` query: the rows without grouping, else the groups, counted over the grouped
 * query. `aggregate(…)` alone makes one group whatever the rows, so that count needs no scan.
 */
export function compileApplyCount(plan: ApplyPlan, flavour: Flavour = 'mariadb'): CompiledQuery {
  if (plan.groupBy !== null && plan.groupBy.length === 0) return { sql: 'SELECT 1', params: [] };
  const context = contextOf(plan, flavour);
  const params: unknown[] = [];
  const rows = rowsClause(plan, context, params);
  if (plan.groupBy === null) return { sql: `SELECT COUNT(*) ${rows}`, params };
  const groups = `SELECT 1 ${rows}${groupByClause(plan, context)}`;
  return { sql: `SELECT COUNT(*) FROM (${groups}) AS ${quoteIdent('g')}`, params };
}

/** Columns are qualified when the rows come from more than one source: joins, lambdas. */
function contextOf(plan: ApplyPlan, flavour: Flavour): SqlContext {
  const qualify = plan.joins.length > 0 || (plan.filter !== null && readsRelatedRows(plan.filter));
  return qualify || flavour !== 'mariadb' ? { qualify, flavour } : UNQUALIFIED;
}

function rowsClause(plan: ApplyPlan, context: SqlContext, params: unknown[]): string {
  const from = `FROM ${fromClause(plan, context, params)}`;
  return plan.filter === null
    ? from
    : `${from} WHERE ${compileFilter(plan.filter, params, context)}`;
}

function groupByClause(plan: ApplyPlan, context: SqlContext): string {
  const values = (plan.groupBy ?? []).map((value) => compileColumnExpr(value, context));
  return ` GROUP BY ${values.join(', ')}`;
}

/** One expression per value of the answer object, nested objects' values in place. */
function selectList(outputs: readonly ApplyOutput[], context: SqlContext): string[] {
  return outputs.flatMap((output) => {
    if (output.kind === 'nested') return selectList(output.outputs, context);
    return [
      output.kind === 'total'
        ? aggregate(output, context)
        : compileColumnExpr(output.value, context),
    ];
  });
}

function aggregate({ method, value }: TotalOutput, context: SqlContext): string {
  if (method === 'count' || value === null) return 'COUNT(*)';
  const argument = compileColumnExpr(value, context);
  return method === 'countdistinct'
    ? `COUNT(DISTINCT ${argument})`
    : `${AGGREGATE_SQL[method]}(${argument})`;
}

function orderItem({ by, direction }: ApplyOrder, context: SqlContext): string {
  const expr = by.kind === 'total' ? aggregate(by, context) : compileColumnExpr(by, context);
  return `${expr} ${direction === 'asc' ? 'ASC' : 'DESC'}`;
}
