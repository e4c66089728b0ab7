/**
 * What the gateway does with a value of one column kind (db/schema-types.ts JsonKind), target
 * by target: one ColumnKind per kind (kinds.ts), so a new column type, or a new target, is one
 * entry or one field. Each function takes the column, whose data type and declared type refine
 * the kind (a TIME, an ENUM and a VARCHAR are all `string`). The writers are chosen once per
 * column when a row shape is built, never per value.
 */
import type { ServerKind } from '../db/pool.js';
import type { ColumnInfo } from '../db/schema-types.js';
import type { CellWriter, CsvFormulas } from './csv-text.js';
import type { EdmMapping } from './edm.js';
import type { ValueWriter } from './json-text.js';
import type { SeekValue } from './seek-values.js';

/** What a value is bound as: mysql2 sends a string as text, a number as DOUBLE, a Buffer as bytes. */
export type WriteParam = string | number | Buffer | null;

/**
 * The value rows must have in the key column. `number` is exact decimal text, compared as a
 * number (a string would be compared as a double, wrong beyond 2^53); `value` is bound as is.
 */
export type KeyOperand =
  | { readonly kind: 'number'; readonly text: string }
  | { readonly kind: 'value'; readonly value: string | number | Buffer };

/** What a column or a function of one holds, as far as `$filter`'s type rules care. */
export type ValueType = 'text' | 'number' | 'date' | 'datetime' | 'time' | 'binary' | 'other';

export type JsonSchema = { [keyword: string]: unknown };

/** Whether a schema describes a value in a row read (`read`) or in a create or update body. */
export type SchemaDirection = 'read' | 'write';

/** The server the SQL is for. */
export type Flavour = ServerKind['flavour'];

export interface ColumnKind {
  // ---- reads: sql/compile-read.ts, types/rows.ts, types/csv-rows.ts ----------------------------
  /** What the driver reads of the column `ref` names: `ref` itself, or an expression over it. */
  readonly readSql: (ref: string, column: ColumnInfo, flavour: Flavour) => string;
  /**
   * The column's value inside a related array's JSON_ARRAY, as text where JSON would lose
   * something, so that JSON.parse never sees a number it would round: what `jsonToken` reads.
   */
  readonly tokenSql: (ref: string, column: ColumnInfo, flavour: Flavour) => string;
  /** The JSON text of a value as mysql2 returns it (docs/types.md). */
  readonly json: (column: ColumnInfo) => ValueWriter;
  /**
   * The same JSON text from the token MySQL wrote for the value inside a related array (what
   * sql/compile-read.ts textOf selects).
   */
  readonly jsonToken: (column: ColumnInfo) => ValueWriter;
  /** The CSV field of a value as mysql2 returns it: the JSON answer's value as text. */
  readonly csv: (column: ColumnInfo, formulas: CsvFormulas) => CellWriter;
  /** The JSON Schema of a value (openapi/column-schema.ts), nullability aside. */
  readonly schema: (column: ColumnInfo, direction: SchemaDirection) => JsonSchema;

  // ---- writes: types/value-codec.ts, plan/exact-write.ts, plan/unique-keys.ts, sql/compile-call.ts
  /**
   * Whether a JSON object or array is a value of the kind (else refused before `write`); such a
   * routine argument in a query string is JSON text (plan/call-plan.ts).
   */
  readonly takesObjects: boolean;
  /** A non-null JSON value → the parameter that stores it exactly, or INVALID_VALUE. */
  readonly write: (column: ColumnInfo, value: unknown, where: string) => WriteParam;
  /** A key value (`given` as a body would carry it, `text` as the path wrote it) → its exact operand. */
  readonly key: (column: ColumnInfo, given: unknown, text: string, where: string) => KeyOperand;
  /**
   * What the column holds when it cannot be an update's or delete's key, as the refusal names
   * it (plan/write-plan.ts); null: it can.
   */
  readonly notAKey: string | null;
  /** Whether storing `value` (from `write`) cannot leave a data warning (plan/exact-write.ts). */
  readonly storesExactly: (column: ColumnInfo, value: string | number | Buffer) => boolean;
  /**
   * Whether an update's or delete's key, as `key` gives it when not a `number`, is compared
   * without a possible data warning (plan/exact-write.ts).
   */
  readonly keyIsExact: (column: ColumnInfo) => boolean;
  /**
   * A key value (from `write`) as the column's unique index compares it with what is stored,
   * for a lookup by `=` (plan/unique-keys.ts): `keptKey` for most.
   */
  readonly storedKey: (column: ColumnInfo, value: WriteParam) => WriteParam;
  /** The CAST target that gives a routine's OUT variable back in its type; null: as it is. */
  readonly castTarget: (column: ColumnInfo) => string | null;

  // ---- filters and pages: plan/filter-types.ts, sql/compile-seek.ts ---------------------
  /** What `$filter`'s type rules take a value of the column for. */
  readonly filterType: (column: ColumnInfo) => ValueType;
  /** False for a kind `$filter` cannot compare (only `eq null`, `ne null`). */
  readonly filterable: boolean;
  /**
   * Whether the column's `<`, `=` and `>` agree with ORDER BY for every value, so that a page
   * can continue after its value (plan/page.ts); else the page continues by count.
   */
  readonly seekable: (column: ColumnInfo) => boolean;
  /** Whether the column sorts by a number other than its value (ENUM, SET), read as `+ 0`. */
  readonly sortsByNumber: (column: ColumnInfo) => boolean;
  /** The placeholder a page's key value is compared through. */
  readonly seekPlaceholder: (column: ColumnInfo) => string;
  /** A non-null key value as the driver gives it → as a page token keeps it. */
  readonly seekValue: (column: ColumnInfo, value: unknown) => SeekValue;
  /** A non-null token value → the parameter it binds as; undefined when it is none of the column's. */
  readonly seekParameter: (column: ColumnInfo, value: string | number) => unknown;
  /**
   * Whether a key value read back from a written row is bound as an exact number, as reads
   * compare numbers (sql/compile-write.ts).
   */
  readonly keyAsNumber: boolean;
  /**
   * Whether the answer cache (cache/read-tables.ts rowOf) may name a key read's row by the
   * column's value: the key read's value and the binary log's row image both as canonical
   * integer text, equal exactly when MySQL's `=` finds the row (no collation, no rounding).
   */
  readonly rowImageKey: boolean;

  // ---- @user values: sql/compile-filter.ts, policy/stage.ts ------------------------------
  /**
   * How a caller's `@user` value meets the column in an ordinary `=` that an index can serve:
   * as an integer, as text, or not at all (only the exact comparison).
   */
  readonly userIndex: (column: ColumnInfo) => 'integer' | 'text' | null;
  /**
   * Which `@user` values can equal a value of the column at all: canonical integer digits, any
   * text, or none.
   */
  readonly userEquals: 'integer' | 'text' | null;
  /**
   * Whether a policy's required value is checked against a written one by their parameters
   * (policy/stage.ts); false: it counts as not equal.
   */
  readonly policyEquals: boolean;

  // ---- $apply: plan/apply-types.ts -------------------------------------------------------
  /**
   * What `$apply` takes the kind's values for: `sum` (sum, average, min, max, group and count),
   * `order` (min, max, group and count), `group` (group and count), `none` (refused: the value
   * must be read another way, as a spatial one).
   */
  readonly aggregates: 'sum' | 'order' | 'group' | 'none';
  /**
   * What MySQL's SUM and AVG of a kind `$apply` sums give (AVG of integers a DECIMAL all the
   * same); `integer` for the others.
   */
  readonly sumType: 'integer' | 'decimal' | 'double';
  /**
   * How wide a value is, for the small-read estimate (plan/small-read.ts): one of a fixed
   * size, up to the column's declared length, or not bounded.
   */
  readonly width: 'fixed' | 'declared' | 'unbounded';

  // ---- OData: odata/csdl.ts, odata/entity-json.ts, odata/body.ts (docs/odata.md) ----------
  /** The column's Edm type in `$metadata`, how OData JSON writes its values and reads them back. */
  readonly edm: EdmMapping;
}

/** A key value the index compares as it is given. */
export const keptKey: ColumnKind['storedKey'] = (_column, value) => value;
