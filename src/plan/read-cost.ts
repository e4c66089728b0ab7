/**
 * A read's cost estimate (docs/reading.md, "Cost limits"): a bound on the work MySQL does for
 * the correlated subqueries of a plan — the lambdas of its filter and its expanded to-many
 * relations — worked out from the plan tree and the tables' row counts read with the schema
 * (TableInfo.rows), with no round trip. Pure: the pipeline computes it once per compiled read
 * and the read caches keep it with the read (pipeline/read.ts).
 *
 * The unit is one row read through an index. Every relation comes from a foreign key, and
 * InnoDB indexes both sides of every foreign key, so each correlated subquery reaches its rows
 * through an index: what it costs is how many rows it visits. A related table holds on average
 * `rows(related) / rows(parent)` rows per parent row (the fan-out); nesting multiplies fan-outs.
 * The table's own scan is not counted: a plain read of any size streams in flat memory
 * (docs/reading.md), and its time is the client's to take.
 */
import type { Relation, TableInfo } from '../db/schema-types.js';
import type { ApplyPlan } from './apply.js';
import type { Join, PlannedFilter, ReadPlan, Selection } from './nodes.js';
import { pinsOneRow } from './small-read.js';

/**
 * What a row of an expanded to-many relation counts, against 1 for a row a lambda visits: MySQL
 * builds its JSON text into its parent's value and sends it, several times the time of the
 * lookup alone (measured on MariaDB 10.11: bench/README.md, "Measurements behind the code"),
 * rounded up.
 */
export const EXPANDED_ROW_WEIGHT = 8;

/** The estimated rows of a table: its statistics, or none known (a view, an empty table). */
function rowsOf(table: TableInfo): number {
  return table.rows ?? 0;
}

/** Rows of the relation's target per row of `from`: 1 through a to-one relation. */
export function fanOut(relation: Relation, from: TableInfo): number {
  if (relation.kind === 'one') return 1;
  return rowsOf(relation.target) / Math.max(1, rowsOf(from));
}

/** What one parent row's test of the filter costs: the rows its lambdas visit. */
export function filterCost(filter: PlannedFilter | null): number {
  if (filter === null) return 0;
  switch (filter.kind) {
    case 'and':
    case 'or':
      return filter.items.reduce((sum, item) => sum + filterCost(item), 0);
    case 'not':
      return filterCost(filter.expr);
    case 'related': {
      const { rows } = filter;
      const related = fanOut(rows.relation, rows.parent.table);
      // Each related row: itself, its to-one joins, the caller's row condition, the condition.
      const perRow =
        1 + joinsCost(rows.joins) + filterCost(rows.filter) + filterCost(filter.condition);
      return related * perRow;
    }
    default:
      return 0;
  }
}

/** Per row they are joined to: one lookup each, and what their own filters' lambdas visit. */
function joinsCost(joins: readonly Join[]): number {
  let cost = 0;
  for (const join of joins) cost += 1 + filterCost(join.filter) + joinsCost(join.nested);
  return cost;
}

/** What the expanded to-many relations of one row's selections cost (within to-one ones too). */
function expansionsCost(selections: readonly Selection[]): number {
  let cost = 0;
  for (const selection of selections) {
    if (selection.kind === 'one') cost += expansionsCost(selection.selections);
    else if (selection.kind === 'many') {
      cost += childCost(selection.plan, fanOut(selection.relation, selection.parent.table));
    }
  }
  return cost;
}

/**
 * One parent row's expanded rows of `plan`: every related row is joined to its to-one rows and
 * tested by its filter, the first `$skip` + `$top` of them (per parent row) written into the
 * answer, with their own expansions.
 */
function childCost(plan: ReadPlan, related: number): number {
  const read = plan.top === null ? related : Math.min(related, plan.top + (plan.skip ?? 0));
  const perRelated = joinsCost(plan.joins) + filterCost(plan.filter);
  return related * perRelated + read * (EXPANDED_ROW_WEIGHT + expansionsCost(plan.selections));
}

/**
 * The estimate of a read: its filter's lambdas over every row of the table (each row is tested,
 * whatever `$top` keeps, and a row that fails sends nothing while it costs), plus the
 * expansions of one row of the answer. A read streams: MySQL builds a row's arrays as the
 * client takes the rows before it, so what the expansions cost is bounded per row, and the
 * whole answer is the client's to take (docs/reading.md, "Cost limits"). A filter on the
 * one-column primary key tests one row, as does `read(<key>,<value>)` (`oneRow`).
 */
export function readCost(plan: ReadPlan, oneRow = false): number {
  const pinned = oneRow || (plan.filter !== null && pinsOneRow(plan.filter, plan.source));
  const rows = rowsOf(plan.source.table);
  const tested = pinned ? Math.min(1, rows) : rows;
  const perTested = filterCost(plan.filter) + joinsFilterCost(plan.joins);
  const perAnswered = tested === 0 ? 0 : expansionsCost(plan.selections);
  return Math.round(tested * perTested + perAnswered);
}

/**
 * The rows a read's answer is estimated to hold: the table's rows (its statistics), at most
 * `$skip` + `$top`, one when the filter pins the key or the read names one (`oneRow`).
 */
export function answerRows(plan: ReadPlan, oneRow = false): number {
  const rows = rowsOf(plan.source.table);
  if (oneRow || (plan.filter !== null && pinsOneRow(plan.filter, plan.source))) {
    return Math.min(1, rows);
  }
  return plan.top === null ? rows : Math.min(rows, plan.top + (plan.skip ?? 0));
}

/** The lambdas in the row conditions of the root's joins, per row (the lookups stream). */
function joinsFilterCost(joins: readonly Join[]): number {
  let cost = 0;
  for (const join of joins) cost += filterCost(join.filter) + joinsFilterCost(join.nested);
  return cost;
}

/** The estimate of a read with `$apply`: its filters' lambdas over every row (totals expand nothing). */
export function applyCost(plan: ApplyPlan): number {
  const perRow = filterCost(plan.filter) + joinsFilterCost(plan.joins);
  return Math.round(rowsOf(plan.source.table) * perRow);
}
