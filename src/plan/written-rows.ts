/**
 * How the rows a write wrote are found again inside its transaction, for a policy's check after
 * the write (policy/stage.ts, compiled by sql/compile-write.ts): always by their primary key,
 * never by the values sent. A sent value need not be what MySQL stored — an ENUM takes `'4'` as
 * its fourth member, a CHAR drops trailing spaces (which a NO PAD collation then compares), a
 * collation makes `'É'` equal `'e'`, a TIME takes `'10:00'` as 10:00:00 — and a check that looks
 * rows up by the values sent can miss the very row it should refuse. Null where the rows cannot
 * be found exactly by key: the write is then refused before any SQL.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { makesId } from './unique-keys.js';
import type { InsertedRows, InsertPlan, UpdatedRows, UpdatePlan } from './write-plan.js';

/**
 * The primary key's columns of a base table known to have no triggers (a trigger could move a
 * row to another key), or null.
 */
export function primaryKeyOf(table: TableInfo): readonly ColumnInfo[] | null {
  if (table.kind !== 'table' || table.hasTriggers !== false || table.primaryKey.length === 0) {
    return null;
  }
  const key = table.primaryKey.map((name) => table.columnsByName.get(name));
  return key.every((column) => column !== undefined) ? (key as ColumnInfo[]) : null;
}

/**
 * The rows of a plain INSERT (an upsert's are found by each row's own statement:
 * policy/stage.ts).
 */
export function insertedRows(plan: InsertPlan): InsertedRows | null {
  const key = primaryKeyOf(plan.table);
  if (key === null) return null;
  const at = key.map((column) => plan.columns.findIndex(({ name }) => name === column.name));
  const given = plan.rows.map((row) =>
    at.every((index, k) => {
      const cell = index === -1 ? undefined : row[index];
      return (
        cell?.kind === 'value' && !((key[k] as ColumnInfo).autoIncrement && makesId(cell.value))
      );
    }),
  );
  if (given.every(Boolean)) return { kind: 'given-key', key };
  const [column] = key;
  if (key.length !== 1 || column === undefined || !column.autoIncrement || given.some(Boolean)) {
    return null; // some rows give their id and others not: MySQL's ids for those have gaps
  }
  return { kind: 'auto-increment', column };
}

export function updatedRows(plan: UpdatePlan): UpdatedRows | null {
  const key = primaryKeyOf(plan.table);
  if (key === null) return null;
  const names = new Set(key.map(({ name }) => name));
  if (plan.set.some(({ column }) => names.has(column.name))) return null;
  if (key.length === 1 && plan.where.kind === 'equals' && names.has(plan.where.column.name)) {
    return { kind: 'key' };
  }
  return { kind: 'locked', key };
}
