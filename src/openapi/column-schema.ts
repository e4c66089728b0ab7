/**
 * A column → the JSON Schema (2020-12, as OpenAPI 3.1 uses it) of its value in a row, following
 * the JSON types of docs/types.md: BIGINT may be a string beyond ±2^53, DECIMAL is a number with
 * the stored digits, DATE/DATETIME are strings of a fixed shape, JSON is any value, binary is
 * base64, spatial values are GeoJSON geometries.
 * A nullable column adds `"null"` to the type. Each kind's schema is its entry's (types/kinds.ts).
 * Pure: tested with schema fixtures.
 */
import type { ColumnInfo } from '../db/schema-types.js';
import type { JsonSchema, SchemaDirection } from '../types/column-kind.js';
import { COLUMN_KINDS } from '../types/kinds.js';

export type { JsonSchema } from '../types/column-kind.js';

/** The value's schema without nullability: `type`, its constraints and a description. */
function valueSchema(column: ColumnInfo, direction: SchemaDirection): JsonSchema {
  return COLUMN_KINDS[column.kind].schema(column, direction);
}

/** Notes a reader of the description wants that the type does not say. */
function notes(column: ColumnInfo): string[] {
  return [
    ...(column.autoIncrement ? ['auto-increment'] : []),
    ...(column.generated ? ['generated: read-only'] : []),
  ];
}

/** The schema of the column's value in a row, `null` included when the column is nullable. */
export function columnSchema(column: ColumnInfo, direction: SchemaDirection = 'read'): JsonSchema {
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
