/**
 * Spatial columns (GEOMETRY, POINT, …, docs/types.md): read as MySQL's WKB and answered as a
 * GeoJSON geometry (RFC 7946), written from one; never filtered, never a routine's parameter.
 */
import { geometryTypesOf, wkbToGeoJson } from '../db/geometry.js';
import type { ColumnInfo } from '../db/schema-types.js';
import { type ColumnKind, type Flavour, type JsonSchema, keptKey } from './column-kind.js';
import { csvField, text } from './csv-text.js';
import { geometryEdm, sameValue } from './edm.js';
import { decoded, writeGeometry } from './json-text.js';
import { textKeyValue } from './seek-values.js';
import { geometryBytes, wellFormed } from './write-values.js';

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

/**
 * WKB of a spatial column. MySQL 8 writes a geographic SRID's coordinates in the SRS's own axis
 * order (latitude first for 4326) unless told otherwise; GeoJSON is longitude first. MariaDB
 * knows no axis order (and no second argument): x, y as stored.
 */
function wkb(ref: string, flavour: Flavour): string {
  return flavour === 'mysql' ? `ST_AsBinary(${ref}, 'axis-order=long-lat')` : `ST_AsBinary(${ref})`;
}

export const geometryKind: ColumnKind = {
  edm: { type: geometryEdm, value: sameValue, body: null },
  // mysql2 would parse MySQL's geometry into objects that lose the geometry's type.
  readSql: (ref, _column, flavour) => wkb(ref, flavour),
  tokenSql: (ref, _column, flavour) => `TO_BASE64(${wkb(ref, flavour)})`,
  // WKB from ST_AsBinary (sql/compile-read.ts).
  json: () => writeGeometry,
  // TO_BASE64(ST_AsBinary(…)): the same WKB as at the top level (base64 skips the `\n`s).
  jsonToken: () => (t) => wkbToGeoJson(Buffer.from(decoded(t as string), 'base64')),
  // The GeoJSON the JSON answer holds.
  csv: () => (value) => (Buffer.isBuffer(value) ? csvField(wkbToGeoJson(value)) : text(value)),
  schema: spatialSchema,
  // A GeoJSON geometry object; geometryBytes refuses anything else, saying what it takes.
  takesObjects: true,
  write: geometryBytes,
  key: (_column, _given, text, where) => ({ kind: 'value', value: wellFormed(text, where) }),
  notAKey: 'spatial values',
  // Stored as sent or refused; kept in the transaction all the same (rarely written).
  storesExactly: () => false,
  keyIsExact: () => false,
  storedKey: keptKey,
  // Never reached: a routine with a spatial parameter is not served (db/routines.ts).
  castTarget: () => null,
  filterType: () => 'other',
  // MySQL compares geometries as bytes, never as shapes.
  filterable: false,
  seekable: () => false,
  sortsByNumber: () => false,
  seekPlaceholder: () => '?',
  seekValue: textKeyValue,
  seekParameter: () => undefined,
  keyAsNumber: false,
  rowImageKey: false,
  userIndex: () => null,
  userEquals: null,
  policyEquals: true,
  // Read as WKB, which `$apply`'s rows are not.
  aggregates: 'none',
  sumType: 'integer',
  width: 'unbounded',
};
