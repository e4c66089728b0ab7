/**
 * Whether a one-statement write may run under autocommit, without BEGIN/COMMIT (hot path: two
 * statements fewer). The transaction exists for one check: a statement that MySQL let through
 * with a data warning (a Note 1265 for cut trailing spaces or a DATE's cut time, docs/types.md)
 * is rolled back and refused. Under autocommit the row would already be stored, so a write may
 * skip the transaction only when its plan proves that no such warning can occur; any doubt keeps
 * it.
 */
import { CHARACTER_TYPES, type ColumnInfo, type TableInfo } from '../db/schema-types.js';
import type { WriteParam } from '../db/value-codec.js';
import type { DeletePlan, InsertPlan, RowMatch, UpdatePlan } from './write-plan.js';

/** `YYYY-MM-DD`, optionally with `[ T]HH:MM[:SS[.f…]]`: MySQL reads these without a warning. */
const DATETIME_TEXT = /^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$/;
const DATE_TEXT = /^\d{4}-\d{2}-\d{2}$/;

/**
 * True when storing `value` in `column` cannot leave a data warning; only an error (which
 * autocommit rolls back like a transaction) or nothing. Relies on the value codec, which has
 * already refused what strict mode would change silently: fractions into integers, DECIMAL
 * digits past the scale, fractional seconds past a DATETIME's precision, numbers that lost
 * digits in JSON.parse. Out-of-range numbers, too-long binary values, bad dates and unconvertible
 * characters are errors in the session's strict mode (db/pool.ts), never warnings.
 */
export function storesExactly(column: ColumnInfo, value: WriteParam): boolean {
  if (value === null) return true; // NULL into NOT NULL is an error in strict mode
  switch (column.kind) {
    case 'integer':
    case 'year':
    case 'bit':
    case 'decimal':
    case 'float':
      return true;
    case 'geometry':
      // Stored as sent or refused; kept in the transaction all the same (rarely written).
      return false;
    case 'binary':
    case 'json':
      return column.maxLength !== null && byteLength(value) <= column.maxLength;
    case 'datetime':
      return typeof value === 'string' && DATETIME_TEXT.test(value);
    case 'date':
      // '2024-01-01 10:00:00' into a DATE is stored as 2024-01-01 with Note 1265.
      return typeof value === 'string' && DATE_TEXT.test(value);
    case 'string':
      // A VARCHAR(3) takes 'abc  ' as 'abc' with Note 1265: only a value that fits is sure. The
      // UTF-8 byte length bounds the length in characters, and in bytes for TEXT types (whose
      // CHARACTER_MAXIMUM_LENGTH is in bytes). TIME, ENUM, SET and others keep the transaction.
      return (
        CHARACTER_TYPES.has(column.dataType) &&
        column.maxLength !== null &&
        byteLength(value) <= column.maxLength
      );
  }
}

function byteLength(value: string | number | Buffer): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number') return String(value).length;
  return value.length;
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
  return (
    match.value.kind === 'number' ||
    column.kind === 'binary' ||
    column.kind === 'float' ||
    (column.kind === 'string' && CHARACTER_TYPES.has(column.dataType))
  );
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
