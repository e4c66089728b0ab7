/**
 * A column → the JSON Schema (2020-12, as OpenAPI 3.1 uses it) of its value in a row, following
 * the JSON types of docs/types.md: BIGINT may be a string beyond ±2^53, DECIMAL is a number with
 * the stored digits, DATE/DATETIME are strings of a fixed shape, JSON is any value, binary is
 * base64, spatial values are GeoJSON geometries.
 * A nullable column adds `"null"` to the type. Pure: tested with schema fixtures.
 */
import { geometryTypesOf } from '../db/geometry.js';
import { type ColumnInfo, fractionDigits } from '../db/schema-types.js';

export type JsonSchema = { [keyword: string]: unknown };

/** Signed ranges of the integer types below BIGINT (MySQL manual, "Integer Types"). */
const INTEGER_BITS: Readonly<Record<string, number>> = {
  tinyint: 8,
  smallint: 16,
  mediumint: 24,
  int: 32,
  integer: 32,
};

export const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
export const DATETIME_PATTERN =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,6})?$';
/** What a write takes besides: `T` for the space, and a zone (`Z`, `±hh:mm`) converted to UTC. */
export const DATETIME_WRITE_PATTERN =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$';
export const TIME_PATTERN = '^-?[0-9]{2,3}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,6})?$';
export const INTEGER_TEXT_PATTERN = '^-?[0-9]+$';

/** `enum('a','it''s')` → ['a', "it's"]; information_schema doubles a quote inside a member. */
export function enumMembers(columnType: string): string[] {
  const body = /^(?:enum|set)\((.*)\)$/is.exec(columnType.trim())?.[1] ?? '';
  return [...body.matchAll(/'((?:[^']|'')*)'/g)].map((m) => (m[1] ?? '').replaceAll("''", "'"));
}

/** Whether a schema describes a value in a row read (`read`) or in a create or update body. */
type Direction = 'read' | 'write';

const POSITION: JsonSchema = {
  type: 'array',
  items: { type: 'number' },
  minItems: 2,
  maxItems: 2,
  description: '[x, y]: longitude and latitude for a geographic SRID',
};

/** The `coordinates` of each GeoJSON geometry type (RFC 7946 §3.1). */
function coordinatesOf(type: string): JsonSchema {
  const positions = (min: number): JsonSchema => ({
    type: 'array',
    items: POSITION,
    minItems: min,
  });
  const polygon: JsonSchema = { type: 'array', items: positions(4), minItems: 1 };
  switch (type) {
    case 'Point':
      return POSITION;
    case 'LineString':
      return positions(2);
    case 'Polygon':
      return polygon;
    case 'MultiPoint':
      return { type: 'array', items: POSITION };
    case 'MultiLineString':
      return { type: 'array', items: positions(2) };
    default:
      return { type: 'array', items: polygon };
  }
}

/** One GeoJSON geometry type's object; a GeometryCollection's members are any of them. */
function geometrySchema(type: string): JsonSchema {
  const member =
    type === 'GeometryCollection'
      ? {
          geometries: {
            type: 'array',
            items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } },
          },
        }
      : { coordinates: coordinatesOf(type) };
  return {
    type: 'object',
    required: ['type', ...Object.keys(member)],
    properties: {
      type: { const: type },
      ...member,
      bbox: { type: 'array', items: { type: 'number' } },
    },
    additionalProperties: false,
  };
}

/** A spatial column: the GeoJSON geometry objects (RFC 7946) it holds. */
function spatialSchema(column: ColumnInfo): JsonSchema {
  const types = geometryTypesOf(column.dataType);
  const srid = column.srid ? `; SRID ${column.srid}` : '';
  const description = `${column.columnType}: a GeoJSON geometry (RFC 7946)${srid}`;
  if (types.length === 1) return { ...geometrySchema(types[0] as string), description };
  return { type: 'object', oneOf: types.map(geometrySchema), description };
}

/** The value's schema without nullability: `type`, its constraints and a description. */
function valueSchema(column: ColumnInfo, direction: Direction): JsonSchema {
  const type = column.columnType;
  switch (column.kind) {
    case 'integer': {
      if (column.dataType === 'bigint') {
        return {
          type: ['integer', 'string'],
          ...(column.unsigned ? { minimum: 0 } : {}),
          pattern: INTEGER_TEXT_PATTERN,
          description: `${type}; a string beyond ±2^53`,
        };
      }
      const bits = INTEGER_BITS[column.dataType] ?? 32;
      const [minimum, maximum] = column.unsigned
        ? [0, 2 ** bits - 1]
        : [-(2 ** (bits - 1)), 2 ** (bits - 1) - 1];
      return { type: 'integer', minimum, maximum, description: type };
    }
    case 'decimal':
      return { type: 'number', description: `${type}; exactly the stored digits` };
    case 'float':
      return { type: 'number', description: type };
    case 'year':
      return { type: 'integer', description: type };
    case 'bit':
      return { type: 'integer', minimum: 0, description: type };
    case 'date':
      return { type: 'string', format: 'date', pattern: DATE_PATTERN, description: 'YYYY-MM-DD' };
    case 'datetime': {
      const digits = fractionDigits(column);
      const shape = `YYYY-MM-DD HH:MM:SS${digits === 0 ? '' : `.${'f'.repeat(digits)}`}`;
      if (direction === 'write') {
        return {
          type: 'string',
          pattern: DATETIME_WRITE_PATTERN,
          description: `${type}; ${shape}, or ISO 8601 with a zone (2024-05-01T10:00:00.250Z), stored as its UTC wall time`,
        };
      }
      return {
        type: 'string',
        pattern: DATETIME_PATTERN,
        description:
          column.dataType === 'timestamp'
            ? `${type}; ${shape} in UTC`
            : `${type}; ${shape} as stored, no time zone`,
      };
    }
    case 'geometry':
      return spatialSchema(column);
    case 'json':
      return { description: 'JSON: any JSON value' };
    case 'binary':
      return { type: 'string', contentEncoding: 'base64', description: `${type}; base64` };
    case 'string': {
      if (column.dataType === 'enum') {
        return { type: 'string', enum: enumMembers(type), description: type };
      }
      if (column.dataType === 'set') {
        return { type: 'string', description: `${type}; members separated by commas` };
      }
      if (column.dataType === 'time') {
        return { type: 'string', pattern: TIME_PATTERN, description: type };
      }
      const bounded = column.dataType === 'char' || column.dataType === 'varchar';
      return {
        type: 'string',
        ...(bounded && column.maxLength !== null ? { maxLength: column.maxLength } : {}),
        description: type,
      };
    }
  }
}

/** Notes a reader of the description wants that the type does not say. */
function notes(column: ColumnInfo): string[] {
  return [
    ...(column.autoIncrement ? ['auto-increment'] : []),
    ...(column.generated ? ['generated: read-only'] : []),
  ];
}

/** The schema of the column's value in a row, `null` included when the column is nullable. */
export function columnSchema(column: ColumnInfo, direction: Direction = 'read'): JsonSchema {
  const schema = valueSchema(column, direction);
  const extra = notes(column);
  if (extra.length > 0) schema.description = `${schema.description}; ${extra.join(', ')}`;
  if (column.generated) schema.readOnly = true;
  if (!column.nullable || schema.type === undefined) return schema;
  if (schema.oneOf !== undefined) return withNull(schema);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  schema.type = [...types, 'null'];
  if (Array.isArray(schema.enum)) schema.enum = [...schema.enum, null];
  return schema;
}

/** A nullable spatial value: its objects, or null. */
function withNull(schema: JsonSchema): JsonSchema {
  const { description, ...value } = schema;
  return { description, oneOf: [value, { type: 'null' }] };
}

/**
 * A row as `read` answers it: every key optional, because `$select` picks the columns; no key
 * that is not a column.
 */
export function rowSchema(columns: readonly ColumnInfo[]): JsonSchema {
  return {
    type: 'object',
    properties: Object.fromEntries(columns.map((c) => [c.name, columnSchema(c)])),
    additionalProperties: false,
  };
}

/** A row `create` takes: writable columns; those without a default are required. */
export function insertSchema(columns: readonly ColumnInfo[]): JsonSchema {
  const writable = columns.filter((c) => !c.generated);
  const required = writable.filter((c) => !c.hasDefault).map((c) => c.name);
  return {
    type: 'object',
    properties: Object.fromEntries(writable.map((c) => [c.name, columnSchema(c, 'write')])),
    ...(required.length > 0 ? { required } : {}),
    minProperties: 1,
    additionalProperties: false,
  };
}

/** The columns `update` changes: any writable ones, at least one. */
export function updateSchema(columns: readonly ColumnInfo[]): JsonSchema {
  const writable = columns.filter((c) => !c.generated);
  return {
    type: 'object',
    properties: Object.fromEntries(writable.map((c) => [c.name, columnSchema(c, 'write')])),
    minProperties: 1,
    additionalProperties: false,
  };
}
