/**
 * The position where a page continues (plan/page.ts), in SQL: "after the row whose sort keys are
 * (v1, …, vn)" as a condition on the keys, `(k1, …, kn) > (v1, …, vn)` in the order ORDER BY gives
 * them, spelt out so that MySQL compares each key as it sorts it — descending keys backwards, and
 * NULL before every value in ascending order and after every value in descending order, as MySQL
 * and MariaDB sort it:
 *
 *   after(k1) OR (k1 = v1 AND (after(k2) OR (k2 = v2 AND (… after(kn)))))
 *
 * (nested, so the text grows with n, not n²). A leading key's range is what MySQL reads from an
 * index on it, so page 10,000 costs what page 1 does. The values are parameters, never text: a
 * SeekSlot marker stands for value k in the compiled read (which is kept for every token of a
 * query, pipeline/read-cache.ts) and bindSeek puts the token's values in. Each value is bound as
 * the exact parameter of its column's type (seekPlaceholder, keyParameter), the way the filter
 * compiler binds a literal, so DECIMAL digits, BIGINT beyond 2^53, DATETIME(6) fractions and
 * bytes come back exactly as they were read.
 */
import type { ColumnInfo } from '../db/schema-types.js';
import type { PlannedOrder, Source } from '../plan/read-plan.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import type { SeekValue } from '../types/seek-values.js';
import { compileColumnExpr, type SqlContext } from './compile-filter.js';
import type { CompiledQuery } from './compiled-query.js';

export type { SeekValue } from '../types/seek-values.js';

/** Marker of a parameter bound per request: the value of sort key `index`, or the row count to skip. */
export class SeekSlot {
  constructor(readonly index: number) {}
}

const slots: SeekSlot[] = [];

/** The marker of key `index`: one object per index, so two compiles give equal parameters. */
export function seekSlot(index: number): SeekSlot {
  let slot = slots[index];
  if (slot === undefined) {
    slot = new SeekSlot(index);
    slots[index] = slot;
  }
  return slot;
}

/** The marker of the OFFSET of a continued read: a page ended early continues by count. */
export const SKIP_SLOT = new SeekSlot(-1);

/** ENUM and SET sort by their numbers (the member's index, the bits), not by their text. */
const sortsByNumber = (column: ColumnInfo): boolean =>
  COLUMN_KINDS[column.kind].sortsByNumber(column);

/**
 * What a page reads of a sort key to continue after it: the column, or for ENUM and SET its
 * number (`+ 0`), which is what ORDER BY compares.
 */
export function keyExpression(ref: string, column: ColumnInfo): string {
  return sortsByNumber(column) ? `${ref} + 0` : ref;
}

/** Whether the page's select list can give the key from the column's own slot (else it adds one). */
export function readsAsSelected(column: ColumnInfo): boolean {
  return !sortsByNumber(column);
}

/** The placeholder a key's value is compared through: the filter compiler's exact forms. */
export function seekPlaceholder(column: ColumnInfo): string {
  return COLUMN_KINDS[column.kind].seekPlaceholder(column);
}

/** A key of the seek: its column as the statement names it, and whether it can be NULL. */
interface SeekKey {
  readonly ref: string;
  readonly column: ColumnInfo;
  readonly descending: boolean;
  readonly nullable: boolean;
}

/**
 * The condition "after the position" over the page's keys, its SeekSlot markers pushed in text
 * order. `root` is the read's own table: a key of a joined table (a path in `$orderby`) is NULL
 * when the related row is missing, whatever its column says.
 */
export function compileSeek(
  keys: readonly PlannedOrder[],
  root: Source,
  params: unknown[],
  context: SqlContext,
): string {
  const seek: SeekKey[] = keys.map(({ expr, direction }) => ({
    ref: compileColumnExpr(expr, context),
    column: expr.column,
    descending: direction === 'desc',
    nullable: expr.column.nullable || expr.source !== root,
  }));
  return `(${chain(seek, 0, params)})`;
}

function chain(keys: readonly SeekKey[], at: number, params: unknown[]): string {
  const key = keys[at] as SeekKey;
  const after = afterKey(key, seekSlot(at), params);
  if (at === keys.length - 1) return after;
  const equal = equalKey(key, seekSlot(at), params);
  return `${after} OR (${equal} AND (${chain(keys, at + 1, params)}))`;
}

/**
 * Rows after value v of one key. Ascending, NULL comes first: after a value come the greater
 * values; after NULL, every value. Descending, NULL comes last: after a value come the smaller
 * values and NULL; after NULL, nothing. `? IS NULL` is decided by MySQL once per statement.
 */
function afterKey(key: SeekKey, slot: SeekSlot, params: unknown[]): string {
  const value = numberPlaceholder(key);
  const compare = `${key.ref} ${key.descending ? '<' : '>'} ${value}`;
  params.push(slot);
  if (!key.nullable) return compare;
  params.push(slot);
  return key.descending
    ? `(${compare} OR (? IS NOT NULL AND ${key.ref} IS NULL))`
    : `(${compare} OR (? IS NULL AND ${key.ref} IS NOT NULL))`;
}

/** Rows whose key equals v; NULL-safe (`<=>`) where the key can be NULL. */
function equalKey(key: SeekKey, slot: SeekSlot, params: unknown[]): string {
  params.push(slot);
  return `${key.ref} ${key.nullable ? '<=>' : '='} ${numberPlaceholder(key)}`;
}

/**
 * An ENUM or SET compared with an integer compares its number (MySQL manual, "The ENUM Type"),
 * as ORDER BY does, and can still use an index on the column.
 */
function numberPlaceholder(key: SeekKey): string {
  return sortsByNumber(key.column) ? '?' : seekPlaceholder(key.column);
}

// ---- values: the row → the token → the parameter -----------------------------------------

/**
 * A key's value in a row, as the driver gives it (db/pool.ts: DECIMAL, BIGINT and dates as
 * exact strings, other numbers as numbers, BIT and binary strings as Buffers; an ENUM's or SET's
 * number from keyExpression), as the token keeps it: its kind's (types/kinds.ts).
 */
export function seekValueOf(column: ColumnInfo, value: unknown): SeekValue {
  if (value === null || value === undefined) return null;
  return COLUMN_KINDS[column.kind].seekValue(column, value);
}

/**
 * The parameter a token's value binds as, for seekPlaceholder's placeholder; undefined when the
 * value cannot be one of this column's (the token is then refused).
 */
export function keyParameter(column: ColumnInfo, value: SeekValue): unknown {
  if (value === null) return null;
  return COLUMN_KINDS[column.kind].seekParameter(column, value);
}

/**
 * The query with the position's parameters in place of the markers: `values[k]` for key k's
 * marker, `skip` (as text, as every LIMIT value goes: sql/compile-read.ts) for SKIP_SLOT.
 */
export function bindSeek(
  query: CompiledQuery,
  values: readonly unknown[],
  skip: number,
): CompiledQuery {
  const params = query.params.map((param) => {
    if (!(param instanceof SeekSlot)) return param;
    return param === SKIP_SLOT ? String(skip) : values[param.index];
  });
  return { sql: query.sql, params };
}
