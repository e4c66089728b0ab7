/**
 * Write requests + TableInfo → write plans: every body key and the key column resolved against
 * the schema cache (exact match), every value encoded by db/value-codec.ts, the body's shape
 * checked by write-body.ts. Knows no SQL.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { coerceValue, encodeKey, type KeyOperand, type WriteParam } from '../db/value-codec.js';
import { generatedColumn, invalidQuery, unknownColumn, viewNotWritable } from '../errors.js';
import type { KeyValue } from '../query/key-value.js';
import type { PlannedFilter } from './read-plan.js';
import { insertRows, updateEntries } from './write-body.js';
import type { InsertedRows, UpdatedRows } from './written-rows.js';

export type { KeyOperand, WriteParam } from '../db/value-codec.js';

/** One column of one inserted row: a value, or the column's default (the body left it out). */
export type PlannedCell =
  | { readonly kind: 'value'; readonly value: WriteParam }
  | { readonly kind: 'default' };

export interface InsertPlan {
  readonly table: TableInfo;
  /** The union of the rows' keys, in the order they first appear. */
  readonly columns: readonly ColumnInfo[];
  /** One cell per column for every row. */
  readonly rows: readonly (readonly PlannedCell[])[];
  /** A policy's row condition every inserted row must satisfy (src/policy/stage.ts)… */
  readonly condition?: PlannedFilter | null;
  /** …checked after the INSERT, in its transaction, on the rows found so. */
  readonly recheck?: InsertedRows;
}

export interface Assignment {
  readonly column: ColumnInfo;
  readonly value: WriteParam;
}

export type KeyMatch =
  | { readonly kind: 'isNull'; readonly column: ColumnInfo }
  | { readonly kind: 'equals'; readonly column: ColumnInfo; readonly value: KeyOperand };

export interface UpdatePlan {
  readonly table: TableInfo;
  readonly set: readonly Assignment[];
  readonly where: KeyMatch;
  /** A policy's row condition, ANDed to the key (src/policy/stage.ts). */
  readonly condition?: PlannedFilter | null;
  /**
   * Check after the UPDATE, in its transaction, that the rows it wrote (found so) still satisfy
   * `condition`.
   */
  readonly recheck?: UpdatedRows;
}

export interface DeletePlan {
  readonly table: TableInfo;
  readonly where: KeyMatch;
  /** A policy's row condition, ANDed to the key (src/policy/stage.ts). */
  readonly condition?: PlannedFilter | null;
}

/** `POST /table/<t>/create`: one object, or a non-empty array of objects (at most MAX_INSERT_ROWS). */
export function planInsert(table: TableInfo, body: unknown): InsertPlan {
  requireWritable(table);
  const objects = insertRows(body);
  const columns: ColumnInfo[] = [];
  const position = new Map<string, number>();
  for (const row of objects) {
    for (const name of Object.keys(row)) {
      if (position.has(name)) continue;
      position.set(name, columns.length);
      columns.push(writableColumn(table, name));
    }
  }
  const rows = objects.map((row, index) => {
    const rowNumber = Array.isArray(body) ? index + 1 : null;
    const cells: PlannedCell[] = columns.map(() => ({ kind: 'default' }));
    for (const [name, value] of Object.entries(row)) {
      const at = position.get(name) as number;
      cells[at] = {
        kind: 'value',
        value: coerceValue(columns[at] as ColumnInfo, value, rowNumber),
      };
    }
    return cells;
  });
  return { table, columns, rows };
}

/**
 * `PUT /table/<t>/update(<key>,<value>)`: the body's columns, set on every matching row. The key
 * is resolved against `keyTable`: a policy lets a role name fewer columns in a key than in a
 * body (policy/view.ts); both share the table's ColumnInfo objects.
 */
export function planUpdate(
  table: TableInfo,
  match: KeyValue,
  body: unknown,
  keyTable: TableInfo = table,
): UpdatePlan {
  requireWritable(table);
  const entries = updateEntries(body);
  const columns = entries.map(([name]) => writableColumn(table, name));
  const set = entries.map(([, value], index) => {
    const column = columns[index] as ColumnInfo;
    return { column, value: coerceValue(column, value, null) };
  });
  return { table, set, where: planKeyMatch(keyTable, match) };
}

/** `DELETE /table/<t>/delete(<key>,<value>)`. */
export function planDelete(table: TableInfo, match: KeyValue): DeletePlan {
  requireWritable(table);
  return { table, where: planKeyMatch(table, match) };
}

/** The columns a "did you mean" may name: those of `table` as the caller sees it. */
function namesOf(table: TableInfo): string[] {
  return table.columns.map((c) => c.name);
}

/** A view MySQL cannot write is refused before its body is read (db/schema-types.ts `updatable`). */
function requireWritable(table: TableInfo): void {
  if (table.updatable === false) throw viewNotWritable(table.name);
}

function writableColumn(table: TableInfo, name: string): ColumnInfo {
  const column = table.columnsByName.get(name);
  if (column === undefined) throw unknownColumn(table.name, name, namesOf(table));
  if (column.generated) throw generatedColumn(table.name, name);
  return column;
}

/**
 * The key column and value of `update(…)`/`delete(…)`. `null` (bare) matches NULL. Otherwise the
 * value is read as the key column's type: for a text, date or binary column a bare token is its
 * text as written (`007` stays `007`); for a numeric column it must be a number. A JSON column
 * cannot be a key: MySQL compares JSON documents, not their text.
 */
export function planKeyMatch(table: TableInfo, match: KeyValue): KeyMatch {
  const column = table.columnsByName.get(match.key);
  if (column === undefined) throw unknownColumn(table.name, match.key, namesOf(table));
  const { value: literal, bare } = match;
  if (literal.kind === 'null') return { kind: 'isNull', column };
  if (column.kind === 'json' || column.kind === 'geometry') {
    throw invalidQuery(
      `Column '${column.name}' holds ${column.kind === 'json' ? 'JSON' : 'spatial values'} and cannot be the key of update(…) or delete(…); use another column`,
    );
  }
  // What the JSON body would have carried for this value.
  const given: unknown =
    literal.kind === 'string'
      ? literal.value
      : literal.kind === 'number'
        ? literal.text
        : literal.value;
  const text = literal.kind === 'string' ? literal.value : (bare ?? String(given));
  return { kind: 'equals', column, value: encodeKey(column, given, text) };
}
