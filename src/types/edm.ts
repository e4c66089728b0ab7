/**
 * The OData target of the column-type registry (docs/odata.md): a column's Edm type with its
 * facets, as `$metadata` declares it, and how OData JSON writes a value differently from
 * tablegate's own JSON (docs/types.md), as a change of the JSON text the kind's `json` or
 * `jsonToken` writer gave. Each kind's entry (types/*-kinds.ts) picks from these.
 */
import { type ColumnInfo, fractionDigits } from '../db/schema-types.js';
import { invalidBody } from '../errors.js';
import { excerpt } from '../query/lexer.js';

/** An Edm primitive type and the facets `$metadata` gives a property of it. */
export interface EdmType {
  /** `Edm.Int64`, `Edm.String`, `Edm.GeometryPoint`, … */
  readonly name: string;
  readonly precision?: number;
  readonly scale?: number;
  readonly maxLength?: number;
  readonly srid?: number | 'variable';
}

/**
 * A value's JSON text as tablegate writes it → as OData JSON writes it, for the
 * `IEEE754Compatible` format parameter given or not; null when the text is the same.
 */
export type EdmValue = (json: string) => string;

/**
 * A string an OData body gives for a property (`name`) → the value tablegate's write takes
 * (odata/body.ts); a value of another JSON type is passed on as it is.
 */
export type EdmBody = (value: string, name: string) => unknown;

export interface EdmMapping {
  readonly type: (column: ColumnInfo) => EdmType;
  readonly value: (column: ColumnInfo, ieee754: boolean) => EdmValue | null;
  /** How a body's string for the column is read back; null: as it is. */
  readonly body: EdmBody | null;
}

/** Whether a value of the type may be part of an entity's key (OData CSDL: key property types). */
export function keyableEdm(type: EdmType): boolean {
  return !/^Edm\.(Double|Single|Binary|Stream|Geometry|Geography|Untyped)/.test(type.name);
}

/** `"123"` → `123`: an integer beyond ±2^53 is a JSON number in OData unless IEEE754Compatible. */
const unquoted: EdmValue = (json) => (json.charCodeAt(0) === 34 ? json.slice(1, -1) : json);
/** `123` → `"123"`: Int64 and Decimal as strings under IEEE754Compatible=true. */
const quoted: EdmValue = (json) => (json.charCodeAt(0) === 34 ? json : `"${json}"`);

/** Integers: Int64 (and Decimal for BIGINT UNSIGNED) follow IEEE754Compatible, the rest never need to. */
export function integerValue(type: EdmType, ieee754: boolean): EdmValue | null {
  if (type.name !== 'Edm.Int64' && type.name !== 'Edm.Decimal') return null;
  return ieee754 ? quoted : unquoted;
}

/** The Edm integer type that holds every value of an integer column. */
export function integerEdm(column: ColumnInfo): EdmType {
  const unsigned = column.unsigned;
  // The integer kind's own entry, told apart by width: the data types of one kind.
  switch (column.dataType) {
    case 'tinyint':
      return { name: unsigned ? 'Edm.Byte' : 'Edm.SByte' };
    case 'smallint':
      return { name: unsigned ? 'Edm.Int32' : 'Edm.Int16' };
    case 'mediumint':
      return { name: 'Edm.Int32' };
    case 'bigint':
      return unsigned ? { name: 'Edm.Decimal', precision: 20, scale: 0 } : { name: 'Edm.Int64' };
    default:
      return { name: unsigned ? 'Edm.Int64' : 'Edm.Int32' };
  }
}

/** BIT(n): the smallest Edm integer that holds n bits (unsigned). */
export function bitEdm(column: ColumnInfo): EdmType {
  const bits = column.numericPrecision ?? 64;
  if (bits <= 8) return { name: 'Edm.Byte' };
  if (bits <= 31) return { name: 'Edm.Int32' };
  if (bits <= 63) return { name: 'Edm.Int64' };
  return { name: 'Edm.Decimal', precision: 20, scale: 0 };
}

export function decimalEdm(column: ColumnInfo): EdmType {
  return {
    name: 'Edm.Decimal',
    ...(column.numericPrecision === null ? {} : { precision: column.numericPrecision }),
    ...(column.numericScale === null ? {} : { scale: column.numericScale }),
  };
}

export const decimalValue = (_column: ColumnInfo, ieee754: boolean): EdmValue | null =>
  ieee754 ? quoted : null;

export const floatEdm = (column: ColumnInfo): EdmType => ({
  name: column.dataType === 'float' ? 'Edm.Single' : 'Edm.Double',
});

/** `"2024-05-01 10:00:00.5"` → `"2024-05-01T10:00:00.5Z"`: the session's time zone is UTC (db/pool.ts). */
const dateTimeOffset: EdmValue = (json) =>
  json.length > 12 && json.charCodeAt(11) === 32
    ? `${json.slice(0, 11)}T${json.slice(12, -1)}Z"`
    : json;

export const datetimeEdm = (column: ColumnInfo): EdmType => ({
  name: 'Edm.DateTimeOffset',
  precision: fractionDigits(column),
});
export const datetimeValue = (): EdmValue => dateTimeOffset;

/** TIME as Edm.TimeOfDay (a negative or 24-hour-or-more TIME is written as MySQL gives it). */
export const timeEdm = (column: ColumnInfo): EdmType => ({
  name: 'Edm.TimeOfDay',
  precision: fractionDigits(column),
});

/** Character strings: Edm.String with the declared length (ENUM and SET give theirs too). */
export const stringEdm = (column: ColumnInfo): EdmType => ({
  name: 'Edm.String',
  ...(column.maxLength === null || column.maxLength > 2 ** 31 - 1
    ? {}
    : { maxLength: column.maxLength }),
});

/** JSON: Edm.String holding the JSON text (Edm.Untyped is OData 4.01, unknown to 4.0 clients). */
export const jsonValue = (): EdmValue => JSON.stringify;
/** A JSON property's string in a body is its JSON text. */
export const jsonBody: EdmBody = (value, name) => {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw invalidBody(`'${excerpt(name)}' is a JSON property: its value must be JSON text`);
  }
};

/** base64 → base64url, which OData JSON writes Edm.Binary in. */
const base64url: EdmValue = (json) => json.replace(/[+/]/g, (c) => (c === '+' ? '-' : '_'));
export const binaryValue = (): EdmValue => base64url;
/** base64url in a body → the base64 a binary column's write takes. */
export const binaryBody: EdmBody = (value) =>
  value.replace(/[-_]/g, (c) => (c === '-' ? '+' : '/'));
export const binaryEdm = (column: ColumnInfo): EdmType => ({
  name: 'Edm.Binary',
  ...(column.maxLength === null || column.maxLength > 2 ** 31 - 1
    ? {}
    : { maxLength: column.maxLength }),
});

const GEOMETRY_TYPES: Readonly<Record<string, string>> = {
  point: 'Edm.GeometryPoint',
  linestring: 'Edm.GeometryLineString',
  polygon: 'Edm.GeometryPolygon',
  multipoint: 'Edm.GeometryMultiPoint',
  multilinestring: 'Edm.GeometryMultiLineString',
  multipolygon: 'Edm.GeometryMultiPolygon',
  geometrycollection: 'Edm.GeometryCollection',
  geomcollection: 'Edm.GeometryCollection',
};

/** Spatial columns: the Edm geometry type of the column's shape, with its SRID (0 when none). */
export const geometryEdm = (column: ColumnInfo): EdmType => ({
  name: GEOMETRY_TYPES[column.dataType] ?? 'Edm.Geometry',
  srid: column.srid ?? 0,
});

export const sameValue = (): null => null;
