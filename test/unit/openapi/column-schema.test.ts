import { describe, expect, test } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { columnSchema, insertSchema } from '../../../src/openapi/column-schema.js';
import { column } from '../fixtures/schema.js';

const ajv = new Ajv2020({ strict: false });
const valid = (schema: object, value: unknown) => ajv.validate(schema, value);

const spatial = (dataType: string, nullable = false) =>
  column('g', {
    dataType,
    columnType: dataType,
    kind: 'geometry',
    nullable,
    numericPrecision: null,
    numericScale: null,
  });

describe('spatial columns are GeoJSON geometries', () => {
  test('a POINT column: a Point and nothing else', () => {
    const schema = columnSchema(spatial('point'));
    expect(schema.description).toBe('point: a GeoJSON geometry (RFC 7946)');
    expect(valid(schema, { type: 'Point', coordinates: [1, 2] })).toBe(true);
    expect(valid(schema, { type: 'Point', coordinates: [1, 2, 3] })).toBe(false);
    expect(
      valid(schema, {
        type: 'LineString',
        coordinates: [
          [0, 0],
          [1, 1],
        ],
      }),
    ).toBe(false);
    expect(valid(schema, 'POINT(1 2)')).toBe(false);
    expect(valid(schema, null)).toBe(false);
  });

  test('a nullable GEOMETRY column: any geometry type, or null', () => {
    const schema = columnSchema({ ...spatial('geometry', true), srid: 4326 });
    expect(schema.description).toBe('geometry: a GeoJSON geometry (RFC 7946); SRID 4326');
    for (const value of [
      null,
      { type: 'Point', coordinates: [1, 2] },
      {
        type: 'MultiPolygon',
        coordinates: [
          [
            [
              [0, 0],
              [1, 0],
              [1, 1],
              [0, 0],
            ],
          ],
        ],
      },
      { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1, 2] }] },
    ]) {
      expect({ value, valid: valid(schema, value) }).toEqual({ value, valid: true });
    }
    expect(valid(schema, { type: 'Feature', geometry: null })).toBe(false);
  });
});

describe('DATETIME: exact digits in reads, ISO 8601 in writes', () => {
  const at = column('at', { dataType: 'datetime', columnType: 'datetime(3)', kind: 'datetime' });

  test('the read schema says the digits', () => {
    expect(columnSchema(at).description).toBe(
      'datetime(3); YYYY-MM-DD HH:MM:SS.fff as stored, no time zone',
    );
  });

  test('a create body takes what Date.toISOString() writes', () => {
    const body = insertSchema([at]);
    for (const value of [
      '2024-05-01 10:00:00.250',
      '2024-05-01T10:00:00.250Z',
      '2024-05-01T12:00:00+02:00',
    ]) {
      expect({ value, valid: valid(body, { at: value }) }).toEqual({ value, valid: true });
    }
    expect(valid(body, { at: 'yesterday' })).toBe(false);
  });
});
