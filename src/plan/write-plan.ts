/**
 * Write requests + TableInfo → write plans: every body key and the key column resolved against
 * the schema cache (exact match), every value encoded by types/value-codec.ts, the body's shape
 * checked by write-body.ts. Knows no SQL.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { generatedColumn, invalidQuery, unknownColumn, viewNotWritable } from '../errors.js';
import type { KeyValue, WriteTarget } from '../query/key-value.js';
import type { Resolution } from '../query/prefer.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import { coerceValue, encodeKey, type KeyOperand, type WriteParam } from '../types/value-codec.js';
import type { PlannedFilter } from './read-plan.js';
import { insertRows, updateEntries } from './write-body.js';
import { planWriteFilter } from './write-target.js';

export type { KeyOperand, WriteParam } from '../types/value-codec.js';

/**
 * How the rows a write wrote are found again in its transaction (written-rows.ts decides which
 * applies): by their primary key, never by the values sent.
 */
/** The rows of an INSERT. */
export type InsertedRows =
  /** Every row gives every primary key column: found by those values. */
  | { readonly kind: 'given-key'; readonly key: readonly ColumnInfo[] }
  /**
   * No row gives the AUTO_INCREMENT primary key: found by the ids MySQL made. Each INSERT …
   * VALUES is a "simple insert" (its row count is known when it starts), for which InnoDB
   * reserves all its ids in one step, `insertId`, `insertId + auto_increment_increment`, … in
   * every innodb_autoinc_lock_mode: 0 and 1 under the AUTO-INC lock, 2 ("interleaved") because
   * the server asks for as many values as the statement has rows (MySQL manual, "AUTO_INCREMENT
   * Handling in InnoDB": for simple inserts "there are no gaps in the numbers generated for a
   * single statement"; only bulk inserts such as INSERT … SELECT and mixed-mode inserts, which
   * give some ids and not others, may have gaps). `auto_increment_increment` is more than 1 on
   * a Galera node; the check reads it in the same session.
   */
  | { readonly kind: 'auto-increment'; readonly column: ColumnInfo };

/** The rows of an UPDATE. */
export type UpdatedRows =
  /** `update(<primary key>,<value>)` and the SET leaves the key alone: the row at that key, if the UPDATE matched it. */
  | { readonly kind: 'key' }
  /**
   * The primary keys of the rows the UPDATE will match, read with SELECT … FOR UPDATE in the
   * same transaction just before it (so none of them can change or leave before it runs); the
   * SET leaves them alone.
   */
  | { readonly kind: 'locked'; readonly key: readonly ColumnInfo[] };

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
  /** `Prefer: resolution=…`: what a row whose primary or unique key exists does instead. */
  readonly onDuplicate?: OnDuplicate;
}

/**
 * An upsert (docs/writes.md): `merge-duplicates` updates the row a new row's primary or unique
 * key meets with the new row's columns (its primary key columns excepted: the row stays where
 * it is), `ignore-duplicates` leaves it as it is. MySQL decides which rows meet one
 * (`INSERT … ON DUPLICATE KEY UPDATE`).
 */
export interface OnDuplicate {
  readonly resolution: Resolution;
  /**
   * One INSERT per row, so that each row's own result says what it did: set where a policy
   * checks the rows (`checks`) or the rows are read back.
   */
  readonly perRow: boolean;
  /** A policy's checks of each row, set by the policy stage (policy/stage.ts guardUpsert). */
  readonly checks?: UpsertChecks;
}

/**
 * What a policy asks of an upsert's rows, checked in its transaction: each row's primary and
 * unique keys are looked up first (locked), every row found must satisfy `before`, and
 * afterwards every row written must satisfy `after`, found by its primary key.
 */
export interface UpsertChecks {
  /**
   * The where a row a new row meets must satisfy, before it is changed: the update where, or
   * for `ignore-duplicates` the caller's own rows' (policy/stage.ts ownRows); null: any row.
   */
  readonly before: PlannedFilter | null;
  /** Every where the written rows must satisfy (create, and update for a merge); null: none. */
  readonly after: PlannedFilter | null;
  /** The primary key's columns; none when nothing is checked after (`after` null). */
  readonly key: readonly ColumnInfo[];
}

export interface Assignment {
  readonly column: ColumnInfo;
  readonly value: WriteParam;
}

export type KeyMatch =
  | { readonly kind: 'isNull'; readonly column: ColumnInfo }
  | { readonly kind: 'equals'; readonly column: ColumnInfo; readonly value: KeyOperand };

/**
 * The rows an update or delete changes: those whose key column holds the value
 * (`update(<key>,<value>)`), or those a `$filter` matches (`update?$filter=…`), planned against
 * the table alone (plan/write-target.ts).
 */
export type RowMatch = KeyMatch | { readonly kind: 'filter'; readonly filter: PlannedFilter };

export type { WriteTarget } from '../query/key-value.js';

export interface UpdatePlan {
  readonly table: TableInfo;
  readonly set: readonly Assignment[];
  readonly where: RowMatch;
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
  readonly where: RowMatch;
  /** A policy's row condition, ANDed to the key (src/policy/stage.ts). */
  readonly condition?: PlannedFilter | null;
}

/**
 * `POST /table/<t>/create`: one object, or a non-empty array of objects (at most
 * MAX_INSERT_ROWS); an upsert with `resolution`.
 */
export function planInsert(
  table: TableInfo,
  body: unknown,
  resolution: Resolution | null = null,
): InsertPlan {
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
  if (resolution === null) return { table, columns, rows };
  return { table, columns, rows, onDuplicate: { resolution, perRow: false } };
}

/**
 * `PUT /table/<t>/update(<key>,<value>)` or `update?$filter=…`: the body's columns, set on every
 * matching row. The key or filter is resolved against `keyTable`: a policy lets a role name
 * fewer columns in a key than in a body (plan/view.ts, policy/views.ts); both share the table's ColumnInfo
 * objects.
 */
export function planUpdate(
  table: TableInfo,
  target: KeyValue | WriteTarget,
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
  return { table, set, where: planRowMatch(keyTable, target) };
}

/** `DELETE /table/<t>/delete(<key>,<value>)` or `delete?$filter=…`. */
export function planDelete(table: TableInfo, target: KeyValue | WriteTarget): DeletePlan {
  requireWritable(table);
  return { table, where: planRowMatch(table, target) };
}

function planRowMatch(table: TableInfo, target: KeyValue | WriteTarget): RowMatch {
  if (!('kind' in target)) return planKeyMatch(table, target);
  return target.kind === 'key'
    ? planKeyMatch(table, target.match)
    : { kind: 'filter', filter: planWriteFilter(table, target.filter) };
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
  const { notAKey } = COLUMN_KINDS[column.kind];
  if (notAKey !== null) {
    throw invalidQuery(
      `Column '${column.name}' holds ${notAKey} and cannot be the key of update(…) or delete(…); use another column`,
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
