/**
 * Whether a one-statement write may run under autocommit, without BEGIN/COMMIT (hot path: two
 * statements fewer). The transaction exists for one check: a statement that MySQL let through
 * with a data warning (a Note 1265 for cut trailing spaces or a DATE's cut time, docs/types.md)
 * is rolled back and refused. Under autocommit the row would already be stored, so a write may
 * skip the transaction only when its plan proves that no such warning can occur; any doubt keeps
 * it.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import type { WriteParam } from '../types/value-codec.js';
import type { DeletePlan, InsertPlan, RowMatch, UpdatePlan } from './write-plan.js';

/**
 * True when storing `value` in `column` cannot leave a data warning; only an error (which
 * autocommit rolls back like a transaction) or nothing. Relies on the value codec, which has
 * already refused what strict mode would change silently: fractions into integers, DECIMAL
 * digits past the scale, fractional seconds past a DATETIME's precision, numbers that lost
 * digits in JSON.parse. Out-of-range numbers, too-long binary values, bad dates and unconvertible
 * characters are errors in the session's strict mode (db/pool.ts), never warnings. Which
 * values of a kind are sure is the kind's entry (types/kinds.ts).
 */
export function storesExactly(column: ColumnInfo, value: WriteParam): boolean {
  if (value === null) return true; // NULL into NOT NULL is an error in strict mode
  return COLUMN_KINDS[column.kind].storesExactly(column, value);
}

/**
 * The table itself adds nothing that could warn: a base table (not a view), known to have no
 * triggers (their statements could warn) and no generated columns (computed from the values).
 */
function plainTable(table: TableInfo): boolean {
  return (
    table.kind === 'table' &&
    table.hasTriggers === false &&
    !table.columns.some((column) => column.generated)
  );
}

/**
 * A key comparison that cannot warn: numbers are compared as exact numbers, text keys against
 * text columns; a date or TIME key given as text might be read with a "truncated" warning. A
 * `$filter` keeps the transaction: its comparisons are not proven here.
 */
function exactKey(match: RowMatch): boolean {
  if (match.kind === 'filter') return false;
  if (match.kind === 'isNull') return true;
  const { column } = match;
  return match.value.kind === 'number' || COLUMN_KINDS[column.kind].keyIsExact(column);
}

/**
 * One row, every value stored exactly, and every column left out AUTO_INCREMENT or with a literal
 * default (an expression default, e.g. a DATE DEFAULT (NOW()), is cut with a warning).
 */
export function insertIsExact(plan: InsertPlan): boolean {
  const [row, ...more] = plan.rows;
  if (row === undefined || more.length > 0 || !insertColumnsAreExact(plan.table, plan.columns)) {
    return false;
  }
  return row.every(
    (cell, at) =>
      cell.kind === 'value' && storesExactly(plan.columns[at] as ColumnInfo, cell.value),
  );
}

/**
 * The part of insertIsExact that does not depend on the values: the table, and the columns a
 * row of `columns` leaves out (pipeline/insert-shapes.ts keeps it per body shape).
 */
export function insertColumnsAreExact(table: TableInfo, columns: readonly ColumnInfo[]): boolean {
  if (!plainTable(table)) return false;
  const given = new Set(columns);
  return table.columns.every(
    (column) => given.has(column) || column.autoIncrement || column.constantDefault === true,
  );
}

/** Every assigned value stored exactly, an exact key, and no policy row condition in the WHERE. */
export function updateIsExact(plan: UpdatePlan): boolean {
  return (
    plainTable(plan.table) &&
    !plan.condition &&
    exactKey(plan.where) &&
    plan.set.every(({ column, value }) => storesExactly(column, value))
  );
}

/** A DELETE writes no values: only the key comparison and the table can warn. */
export function deleteIsExact(plan: DeletePlan): boolean {
  return plainTable(plan.table) && !plan.condition && exactKey(plan.where);
}
