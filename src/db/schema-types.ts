/**
 * What the gateway knows about a table: the shape read from information_schema at start and
 * on a rate-limited re-read. Every later stage resolves names against these objects.
 */

/** How a column's value becomes JSON (docs/types.md) and how a JSON value is written into it. */
export type JsonKind =
  | 'integer' // TINYINT…BIGINT: number, or string beyond ±2^53
  | 'decimal' // DECIMAL/NUMERIC: JSON number with exactly the stored digits
  | 'float' // FLOAT/DOUBLE
  | 'year' // YEAR: number
  | 'bit' // BIT(n): number
  | 'date' // DATE: "YYYY-MM-DD"
  | 'datetime' // DATETIME/TIMESTAMP: "YYYY-MM-DD HH:MM:SS[.ffffff]"
  | 'string' // CHAR, VARCHAR, TEXT, TIME, ENUM, SET, and anything else textual
  | 'json' // JSON (MySQL) or LONGTEXT with a json_valid() check (MariaDB)
  | 'binary' // BINARY, VARBINARY, BLOB: base64
  | 'geometry'; // GEOMETRY, POINT, LINESTRING, POLYGON, MULTI…, GEOMETRYCOLLECTION: GeoJSON

/** information_schema DATA_TYPEs of character strings (ENUM and SET are not among them). */
export const CHARACTER_TYPES: ReadonlySet<string> = new Set([
  'char',
  'varchar',
  'tinytext',
  'text',
  'mediumtext',
  'longtext',
]);

/**
 * The information_schema.COLUMNS row a column is read from (schema.ts columnFromRow); a routine's
 * parameter is read into the same shape (routines.ts).
 */
export interface ColumnRow {
  TABLE_NAME: string;
  COLUMN_NAME: string;
  COLUMN_DEFAULT: string | null;
  IS_NULLABLE: string;
  DATA_TYPE: string;
  COLUMN_TYPE: string;
  CHARACTER_MAXIMUM_LENGTH: string | number | null;
  NUMERIC_PRECISION: string | number | null;
  NUMERIC_SCALE: string | number | null;
  COLUMN_KEY: string;
  EXTRA: string;
}

export interface ColumnInfo {
  readonly name: string;
  /** information_schema DATA_TYPE, lower case: `int`, `varchar`, `decimal`, … */
  readonly dataType: string;
  /** information_schema COLUMN_TYPE, e.g. `int(10) unsigned`, `enum('a','b')`. */
  readonly columnType: string;
  readonly kind: JsonKind;
  readonly nullable: boolean;
  readonly unsigned: boolean;
  readonly autoIncrement: boolean;
  /** True when an INSERT may omit the column (it has a default, is nullable, generated or auto-increment). */
  readonly hasDefault: boolean;
  readonly generated: boolean;
  /**
   * True when an INSERT leaving the column out stores a literal (or NULL, or fails for want of a
   * default): MySQL checked it when the table was made. False for an expression default such as
   * CURRENT_TIMESTAMP, which is evaluated (and may be cut with a warning) on every insert;
   * undefined when not known.
   */
  readonly constantDefault?: boolean;
  readonly maxLength: number | null;
  readonly numericPrecision: number | null;
  readonly numericScale: number | null;
  /**
   * A spatial column's spatial reference system, when it declares one (MySQL's `SRID n`,
   * MariaDB's REF_SYSTEM_ID): what written values carry. Absent otherwise (values carry 0).
   */
  readonly srid?: number;
}

export interface TableInfo {
  readonly name: string;
  readonly kind: 'table' | 'view';
  /**
   * False for a view MySQL cannot write (information_schema.VIEWS.IS_UPDATABLE = 'NO': GROUP BY,
   * aggregates, DISTINCT, UNION, subqueries in the select list…); absent for tables and views
   * it can. Such a view is offered no create, update or delete.
   */
  readonly updatable?: false;
  /** In ordinal order. */
  readonly columns: readonly ColumnInfo[];
  readonly columnsByName: ReadonlyMap<string, ColumnInfo>;
  readonly primaryKey: readonly string[];
  /**
   * The columns of each UNIQUE index other than the primary key, in index order (from
   * information_schema.STATISTICS): what `read(<key>,<value>)` may name besides the primary key,
   * and what an upsert's `ON DUPLICATE KEY` may meet (docs/writes.md).
   */
  readonly uniqueKeys: readonly (readonly string[])[];
  /**
   * Whether the table has triggers (information_schema.TRIGGERS); undefined when not known. A
   * trigger's own statements may change values on their way in, so only a table known to have
   * none may take the autocommit fast path (plan/exact-write.ts).
   */
  readonly hasTriggers?: boolean;
  /**
   * How many rows the storage engine estimates the table holds (information_schema.TABLES
   * TABLE_ROWS) as of the schema read that made this object; absent for a view. What the read
   * cost estimate works from (plan/read-cost.ts); never compared when telling whether the
   * schema changed (schema-change.ts), so a re-read does not replace tables for it alone.
   */
  readonly rows?: number;
  /**
   * Relations to other tables by name, from the foreign keys both ways (db/relations.ts): to-one
   * from this table's keys, to-many from keys that reference it.
   */
  readonly relations: ReadonlyMap<string, Relation>;
}

/** A way from a row of one table to related rows of another, through one foreign key. */
export interface Relation {
  readonly name: string;
  /** `one`: this table holds the key (at most one related row); `many`: the other table does. */
  readonly kind: 'one' | 'many';
  /** The foreign key's constraint name. */
  readonly key: string;
  readonly target: TableInfo;
  /** Which column of this table equals which column of the target, in key order. */
  readonly on: readonly { readonly local: ColumnInfo; readonly remote: ColumnInfo }[];
}

/** The n of DATETIME(n), TIMESTAMP(n), TIME(n) from the column's type text; 0 without one. */
export function fractionDigits(column: ColumnInfo): number {
  const match = /\((\d)\)/.exec(column.columnType);
  return match === null ? 0 : Number(match[1]);
}
