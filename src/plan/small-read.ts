/**
 * Which reads are small enough to fetch whole (execute/database.ts `arrays`) instead of
 * streaming row by row (the row stream's per-row events, listeners and promise are a large
 * share of the CPU of a one-row or 50-row read: bench/README.md, "Measurements behind the
 * code"). The answer is the same bytes either way
 * (http/json-rows.ts frames both); what changes is only that the rows sit in memory together, so
 * a read qualifies only when that memory is bounded by the plan itself:
 * - at most one row: a top-level conjunct of the filter is `<primary key> eq <value>` on a table
 *   whose primary key is that one column (a unique key under the column's own collation and
 *   conversion, so no value matches two rows) — whatever the columns' widths, since a streamed
 *   read holds one whole row at a time too;
 * - or at most SMALL_READ_MAX_ROWS rows (`$top`) of columns with a bounded width, whose widest
 *   possible rows together stay under SMALL_READ_MAX_BYTES.
 */
import type { ColumnInfo } from '../db/schema-types.js';
import { SMALL_READ_MAX_BYTES, SMALL_READ_MAX_ROWS } from '../limits.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import type { ApplyOutput, ApplyPlan } from './apply.js';
import type { PlannedFilter, PlannedOperand, ReadPlan, Selection, Source } from './nodes.js';

/** Bytes a value of a fixed-size type takes at most as text (a DECIMAL(65,30) is 67). */
const FIXED_WIDTH_BYTES = 80;
/** utf8mb4: a character is at most 4 bytes. */
const BYTES_PER_CHAR = 4;
/** Past this many characters a column counts as unbounded (TEXT, BLOB, JSON are far beyond). */
const MAX_BOUNDED_CHARS = 16_383;

export function isSmallRead(plan: ReadPlan): boolean {
  if (plan.filter !== null && pinsOneRow(plan.filter, plan.source)) return true;
  if (plan.top === null || plan.top > SMALL_READ_MAX_ROWS) return false;
  const rowBytes = selectionsBytes(plan.selections);
  return rowBytes !== null && plan.top * rowBytes <= SMALL_READ_MAX_BYTES;
}

/**
 * A read with `$apply`: `aggregate(…)` alone answers one object; otherwise as above, the answer's
 * values in place of the selections (a group's values are a row's).
 */
export function isSmallApply(plan: ApplyPlan): boolean {
  if (plan.groupBy !== null && plan.groupBy.length === 0) return true;
  if (plan.top === null || plan.top > SMALL_READ_MAX_ROWS) return false;
  const rowBytes = outputsBytes(plan.outputs);
  return rowBytes !== null && plan.top * rowBytes <= SMALL_READ_MAX_BYTES;
}

function outputsBytes(outputs: readonly ApplyOutput[]): number | null {
  let bytes = 0;
  for (const output of outputs) {
    const width =
      output.kind === 'nested' ? outputsBytes(output.outputs) : widthBytes(output.result);
    if (width === null) return null;
    bytes += width;
  }
  return bytes;
}

/** The most bytes the selections of one row take, or null when that is not small. */
function selectionsBytes(selections: readonly Selection[]): number | null {
  let bytes = 0;
  for (const selection of selections) {
    // An expanded to-many relation has as many rows as the data has.
    if (selection.kind === 'many') return null;
    const width =
      selection.kind === 'column'
        ? widthBytes(selection.expr.column)
        : selectionsBytes(selection.selections);
    if (width === null) return null;
    bytes += width + (selection.kind === 'one' ? FIXED_WIDTH_BYTES : 0);
  }
  return bytes;
}

/** A top-level conjunct compares the one-column primary key of `source` with a value. */
export function pinsOneRow(filter: PlannedFilter, source: Source): boolean {
  const primaryKey = source.table.primaryKey;
  if (primaryKey.length !== 1) return false;
  if (filter.kind === 'and') return filter.items.some((item) => pinsOneRow(item, source));
  if (filter.kind !== 'compare' || filter.op !== 'eq') return false;
  const [key] = primaryKey;
  const isKey = (operand: PlannedOperand) =>
    operand.kind === 'column' && operand.source === source && operand.column.name === key;
  const isValue = (operand: PlannedOperand) => operand.kind !== 'column' && operand.kind !== 'call';
  return (
    (isKey(filter.left) && isValue(filter.right)) || (isKey(filter.right) && isValue(filter.left))
  );
}

/** The most bytes one value of the column can take, or null when that is not small. */
function widthBytes(column: ColumnInfo): number | null {
  const { width } = COLUMN_KINDS[column.kind];
  if (width === 'unbounded') return null;
  if (width === 'declared') {
    if (column.maxLength === null || column.maxLength > MAX_BOUNDED_CHARS) return null;
    return column.maxLength * BYTES_PER_CHAR;
  }
  return FIXED_WIDTH_BYTES;
}
