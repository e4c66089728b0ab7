/**
 * A table's unique keys — the primary key and every UNIQUE index (db/schema.ts) — as the
 * write and key-read stages use them: which column alone names one row (`read(<key>,<value>)`),
 * and which rows a new row's values meet in `INSERT … ON DUPLICATE KEY` (an upsert's policy
 * checks and read-back look them up first). Knows no SQL.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import type { WriteParam } from '../types/value-codec.js';
import type { PlannedCell } from './write-plan.js';

/** The primary key first, then the unique indexes, each as its columns; unknown names dropped. */
export function uniqueKeysOf(table: TableInfo): (readonly ColumnInfo[])[] {
  const keys: (readonly ColumnInfo[])[] = [];
  for (const names of [table.primaryKey, ...table.uniqueKeys]) {
    if (names.length === 0) continue;
    const columns = names.map((name) => table.columnsByName.get(name));
    if (columns.every((column) => column !== undefined)) keys.push(columns as ColumnInfo[]);
  }
  return keys;
}

/** Whether the column alone is the primary key or a unique index (one row per non-NULL value). */
export function isSingleColumnKey(table: TableInfo, name: string): boolean {
  return [table.primaryKey, ...table.uniqueKeys].some((key) => key.length === 1 && key[0] === name);
}

/**
 * A value as the unique index compares it with what is stored, for a lookup by `=`: its kind's
 * rule (types/kinds.ts `storedKey`: CHAR without trailing spaces, BINARY(n) padded to n). Other
 * values compare under `=` as the index does: the column's collation decides for text,
 * numbers and temporals are converted to the column's type.
 */
export function storedKeyValue(column: ColumnInfo, value: WriteParam): WriteParam {
  return COLUMN_KINDS[column.kind].storedKey(column, value);
}

/** One unique key of a new row and the values it gives, as the index compares them. */
export interface GivenKey {
  readonly columns: readonly ColumnInfo[];
  readonly values: readonly WriteParam[];
}

/**
 * The unique keys a new row can meet an existing row on, with its values: those whose every
 * column it gives. A key with a NULL among them meets no row (NULL equals nothing in a unique
 * index), nor does one with an AUTO_INCREMENT column the row leaves to MySQL (or gives NULL or
 * 0: a new id); a key with another column the row leaves out takes that column's default, which
 * is not known here: `complete` is false then, and what the row meets cannot be looked up.
 */
export function givenKeys(
  keys: readonly (readonly ColumnInfo[])[],
  columns: readonly ColumnInfo[],
  row: readonly PlannedCell[],
): { readonly keys: GivenKey[]; readonly complete: boolean } {
  const given: GivenKey[] = [];
  let complete = true;
  for (const key of keys) {
    const values: WriteParam[] = [];
    let meetsNone = false;
    let unknown = false;
    for (const column of key) {
      const at = columns.indexOf(column);
      const cell = at === -1 ? undefined : row[at];
      const value = cell?.kind === 'value' ? cell.value : undefined;
      if (column.autoIncrement && (value === undefined || makesId(value))) meetsNone = true;
      else if (value === null) meetsNone = true;
      else if (value === undefined) unknown = true;
      else values.push(storedKeyValue(column, value));
    }
    if (meetsNone) continue;
    if (unknown) complete = false;
    else given.push({ columns: key, values });
  }
  return { keys: given, complete };
}

/** NULL or 0 into an AUTO_INCREMENT column makes a new id, as leaving it out does. */
export const makesId = (value: WriteParam) => value === null || value === 0 || value === '0';
