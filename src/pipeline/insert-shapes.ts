/**
 * One-row creates by the shape of their body (hot path): for one table object, a body naming the
 * same columns in the same order resolves to the same columns, the same INSERT text and the same
 * value-independent part of its exactness (plan/exact-write.ts) every time; only its values are
 * coerced and checked per request, by the very functions the full path uses. A shape is learnt
 * from what the full path made of a body that planned without an error, and serves only callers
 * without a policy and without a `Prefer`: those bring guards and read-backs of their own. A
 * schema change makes new table objects, which start with no shapes.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { INSERT_SHAPES_PER_TABLE } from '../limits.js';
import { insertColumnsAreExact, storesExactly } from '../plan/exact-write.js';
import type { JsonObject } from '../plan/write-body.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import { coerceValue, type WriteParam } from '../types/value-codec.js';

export interface InsertShape {
  /** The body's keys, in its order; `columns[i]` is the column `names[i]` resolved to. */
  readonly names: readonly string[];
  readonly columns: readonly ColumnInfo[];
  readonly sql: string;
  /** The table and the columns a row of this shape leaves out allow autocommit. */
  readonly columnsExact: boolean;
}

/** A shaped row: its one statement and whether it may run alone (insertIsExact's answer). */
export interface ShapedInsert {
  readonly statement: CompiledQuery;
  readonly exact: boolean;
}

/**
 * The shapes each table object has learnt: not a memo (pipeline/memo.ts) but a bounded list
 * filled by the requests that bring new shapes, each shape checked against every body it serves
 * (sameNames); a schema re-read makes a new table object, which learns afresh.
 */
const shapesByTable = new WeakMap<TableInfo, InsertShape[]>();

/** The shape `body`'s keys have on `table`, if one was learnt. */
export function shapeOf(table: TableInfo, body: JsonObject): InsertShape | undefined {
  const shapes = shapesByTable.get(table);
  if (shapes === undefined) return undefined;
  const keys = Object.keys(body);
  for (const shape of shapes) {
    if (sameNames(shape.names, keys)) return shape;
  }
  return undefined;
}

function sameNames(names: readonly string[], keys: readonly string[]): boolean {
  if (names.length !== keys.length) return false;
  for (let at = 0; at < names.length; at++) if (names[at] !== keys[at]) return false;
  return true;
}

/**
 * Keeps the shape of a one-row body the full path planned into `columns` (one per key, in key
 * order) and `sql`; called only when shapeOf found none for it.
 */
export function learnShape(
  table: TableInfo,
  body: JsonObject,
  columns: readonly ColumnInfo[],
  sql: string,
): void {
  let shapes = shapesByTable.get(table);
  if (shapes === undefined) {
    shapes = [];
    shapesByTable.set(table, shapes);
  }
  if (shapes.length >= INSERT_SHAPES_PER_TABLE) return;
  const names = Object.keys(body);
  shapes.push({ names, columns, sql, columnsExact: insertColumnsAreExact(table, columns) });
}

/** `body`'s statement by its shape: each value coerced as planInsert coerces it, in body order. */
export function shapedInsert(shape: InsertShape, body: JsonObject): ShapedInsert {
  const { names, columns } = shape;
  const params: WriteParam[] = new Array(columns.length);
  let exact = shape.columnsExact;
  for (let at = 0; at < columns.length; at++) {
    const column = columns[at] as ColumnInfo;
    const value = coerceValue(column, body[names[at] as string]);
    params[at] = value;
    if (exact) exact = storesExactly(column, value);
  }
  return { statement: { sql: shape.sql, params }, exact };
}
