/**
 * The columns of a result set that no table describes (a procedure's SELECTs), from the field
 * metadata MySQL sends with it: the wire type, character set, flags and decimals say which JSON
 * kind a value has (docs/types.md, as schema.ts says it for table columns), so the row codec
 * (types/rows.ts) writes these rows exactly as it writes a table's.
 */
import type { FieldPacket } from 'mysql2';
import type { ServerKind } from './pool.js';
import type { ColumnInfo, JsonKind } from './schema-types.js';

/** The character set number of binary strings (BINARY, VARBINARY, BLOB and binary results). */
const BINARY_CHARSET = 63;
/** Column definition flags (MySQL's include/mysql_com.h). */
const NOT_NULL_FLAG = 1;
const UNSIGNED_FLAG = 32;
const BINARY_FLAG = 128;
const BIT_TYPE = 16;

/**
 * How a declared type shows the field's decimals: as fractional seconds (`datetime(3)`), as a
 * DECIMAL's scale (`decimal(10,2)`); a type without one shows none.
 */
type Decimals = 'fraction' | 'scale';

/**
 * MySQL's wire types (include/field_types.h) → the data type they stand for, its kind, and how
 * its declared type shows the field's decimals.
 */
const WIRE_TYPES: Readonly<
  Record<number, { dataType: string; kind: JsonKind; decimals?: Decimals }>
> = {
  0: { dataType: 'decimal', kind: 'decimal', decimals: 'scale' },
  1: { dataType: 'tinyint', kind: 'integer' },
  2: { dataType: 'smallint', kind: 'integer' },
  3: { dataType: 'int', kind: 'integer' },
  4: { dataType: 'float', kind: 'float' },
  5: { dataType: 'double', kind: 'float' },
  6: { dataType: 'null', kind: 'string' },
  7: { dataType: 'timestamp', kind: 'datetime', decimals: 'fraction' },
  8: { dataType: 'bigint', kind: 'integer' },
  9: { dataType: 'mediumint', kind: 'integer' },
  10: { dataType: 'date', kind: 'date' },
  11: { dataType: 'time', kind: 'string', decimals: 'fraction' },
  12: { dataType: 'datetime', kind: 'datetime', decimals: 'fraction' },
  13: { dataType: 'year', kind: 'year' },
  14: { dataType: 'date', kind: 'date' },
  15: { dataType: 'varchar', kind: 'string' },
  16: { dataType: 'bit', kind: 'bit' },
  17: { dataType: 'timestamp', kind: 'datetime', decimals: 'fraction' },
  18: { dataType: 'datetime', kind: 'datetime', decimals: 'fraction' },
  19: { dataType: 'time', kind: 'string', decimals: 'fraction' },
  245: { dataType: 'json', kind: 'json' },
  246: { dataType: 'decimal', kind: 'decimal', decimals: 'scale' },
  247: { dataType: 'enum', kind: 'string' },
  248: { dataType: 'set', kind: 'string' },
  249: { dataType: 'tinyblob', kind: 'string' },
  250: { dataType: 'mediumblob', kind: 'string' },
  251: { dataType: 'longblob', kind: 'string' },
  252: { dataType: 'blob', kind: 'string' },
  253: { dataType: 'varchar', kind: 'string' },
  254: { dataType: 'char', kind: 'string' },
};

const TEXT_KINDS: ReadonlySet<number> = new Set([15, 249, 250, 251, 252, 253, 254]);

function flagsOf(field: FieldPacket): number {
  return typeof field.flags === 'number' ? field.flags : 0;
}

/** `datetime(3)`, `time(2)`, `decimal(10,2)`: the declared type the codecs read digits from. */
function typeText(
  dataType: string,
  shown: Decimals | undefined,
  field: FieldPacket,
  unsigned: boolean,
): string {
  const decimals = field.decimals;
  if (shown === 'fraction') {
    return decimals >= 1 && decimals <= 6 ? `${dataType}(${decimals})` : dataType;
  }
  if (shown === 'scale') return `decimal(${field.columnLength ?? 65},${decimals})`;
  return unsigned ? `${dataType} unsigned` : dataType;
}

/**
 * One result column as a column: its name, and how its values are written. `flavour`: the
 * server's, whose quirks the metadata does not say.
 */
export function columnFromField(
  field: FieldPacket,
  flavour: ServerKind['flavour'] = 'mysql',
): ColumnInfo {
  const type = field.columnType ?? field.type ?? 253;
  const wire = WIRE_TYPES[type] ?? { dataType: 'varchar', kind: 'string' as const };
  const flags = flagsOf(field);
  const unsigned = (flags & UNSIGNED_FLAG) !== 0;
  let { dataType, kind } = wire;
  // MariaDB's JSON is LONGTEXT; its extended metadata (MariaDB 10.5+) says `json` (a JSON
  // column, JSON_OBJECT(), …).
  if (field.extendedFormat === 'json') kind = 'json';
  // MariaDB types an expression over a BIT column (COALESCE, IF, MAX, a subquery) as BIT but
  // sends its value as decimal digits (MDEV-32244); it marks such a field, and no BIT column,
  // binary. The digits are an integer's text.
  else if (flavour === 'mariadb' && type === BIT_TYPE && (flags & BINARY_FLAG) !== 0) {
    kind = 'integer';
  } else if (TEXT_KINDS.has(type) && field.characterSet === BINARY_CHARSET) {
    kind = 'binary';
    dataType = type === 254 ? 'binary' : type === 15 || type === 253 ? 'varbinary' : dataType;
  }
  return {
    name: field.name,
    dataType,
    columnType: typeText(dataType, wire.decimals, field, unsigned),
    kind,
    nullable: (flags & NOT_NULL_FLAG) === 0,
    unsigned,
    autoIncrement: false,
    hasDefault: false,
    generated: false,
    maxLength: null,
    numericPrecision: null,
    numericScale: kind === 'decimal' ? field.decimals : null,
  };
}
