import { describe, expect, test } from '@jest/globals';
import { GeoJsonError, geoJsonToGeometry, wkbToGeoJson } from '../../../src/db/geometry.js';

/** WKB of a point in either byte order, built by hand (an oracle apart from the writer). */
function pointWkb(x: number, y: number, little = true): Buffer {
  const bytes = Buffer.alloc(21);
  bytes.writeUInt8(little ? 1 : 0, 0);
  if (little) {
    bytes.writeUInt32LE(1, 1);
    bytes.writeDoubleLE(x, 5);
    bytes.writeDoubleLE(y, 13);
  } else {
    bytes.writeUInt32BE(1, 1);
    bytes.writeDoubleBE(x, 5);
    bytes.writeDoubleBE(y, 13);
  }
  return bytes;
}

const SHAPES: readonly unknown[] = [
  { type: 'Point', coordinates: [1.5, -2.25] },
  { type: 'Point', coordinates: [0.1, 123456.789012345] },
  {
    type: 'LineString',
    coordinates: [
      [0, 0],
      [1e-7, 1e21],
    ],
  },
  {
    type: 'Polygon',
    coordinates: [
      [
        [0, 0],
        [4, 0],
        [4, 4],
        [0, 0],
      ],
      [
        [1, 1],
        [2, 1],
        [2, 2],
        [1, 1],
      ],
    ],
  },
  { type: 'MultiPoint', coordinates: [] },
  {
    type: 'MultiPoint',
    coordinates: [
      [1, 2],
      [3, 4],
    ],
  },
  {
    type: 'MultiLineString',
    coordinates: [
      [
        [0, 0],
        [1, 1],
      ],
      [
        [2, 2],
        [3, 3],
      ],
    ],
  },
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
  { type: 'GeometryCollection', geometries: [] },
  {
    type: 'GeometryCollection',
    geometries: [
      { type: 'Point', coordinates: [9, 9] },
      {
        type: 'GeometryCollection',
        geometries: [
          {
            type: 'LineString',
            coordinates: [
              [0, 0],
              [1, 1],
            ],
          },
        ],
      },
    ],
  },
];

describe('GeoJSON → internal geometry → GeoJSON', () => {
  test.each(SHAPES)('%j comes back the same, exactly', (shape) => {
    const bytes = geoJsonToGeometry(shape, 'geometry', 4326, "Column 'g'");
    expect(bytes.readUInt32LE(0)).toBe(4326);
    expect(JSON.parse(wkbToGeoJson(bytes.subarray(4)))).toEqual(shape);
  });

  test('the internal format is SRID then little-endian WKB', () => {
    const bytes = geoJsonToGeometry({ type: 'Point', coordinates: [1, -1] }, 'point', 0, 'x');
    expect(bytes.toString('hex')).toBe(`00000000${pointWkb(1, -1).toString('hex')}`);
  });
});

describe('WKB → GeoJSON text', () => {
  test('either byte order', () => {
    expect(wkbToGeoJson(pointWkb(1.5, -2))).toBe('{"type":"Point","coordinates":[1.5,-2]}');
    expect(wkbToGeoJson(pointWkb(1.5, -2, false))).toBe('{"type":"Point","coordinates":[1.5,-2]}');
  });

  test.each([
    ['cut short', pointWkb(1, 2).subarray(0, 20)],
    ['trailing bytes', Buffer.concat([pointWkb(1, 2), Buffer.from([0])])],
    ['an unknown type', Buffer.from('010800000000', 'hex')],
    ['a bad byte order', Buffer.from('0201000000', 'hex')],
    ['a count beyond the bytes', Buffer.from('0102000000ffffffff', 'hex')],
  ])('%s is an error (MySQL never sends it)', (_, bytes) => {
    expect(() => wkbToGeoJson(bytes)).toThrow();
  });
});

describe('what a spatial column refuses', () => {
  const write = (value: unknown, dataType = 'geometry') =>
    geoJsonToGeometry(value, dataType, 0, "Column 'g'");

  test.each<[unknown, string, string]>([
    [
      {
        type: 'LineString',
        coordinates: [
          [0, 0],
          [1, 1],
        ],
      },
      'point',
      "Column 'g' is a POINT column and takes a GeoJSON Point, not a LineString",
    ],
    [
      { type: 'Feature', geometry: null },
      'geometry',
      'must have a "type" of Point, LineString, Polygon, MultiPoint, MultiLineString, MultiPolygon, GeometryCollection, not \'Feature\'',
    ],
    [{ coordinates: [1, 2] }, 'geometry', 'must have a "type"'],
    [
      { type: 'Point', coordinates: [1] },
      'point',
      "Column 'g'.coordinates must be a position [x, y]",
    ],
    [
      { type: 'Point', coordinates: [1, 2, 3] },
      'point',
      'has 3 coordinates; MySQL stores two (x, y), no elevation',
    ],
    [{ type: 'Point', coordinates: [1, Number.NaN] }, 'point', 'must hold two numbers'],
    [{ type: 'Point', coordinates: [1, null] }, 'point', 'must hold two numbers'],
    [{ type: 'LineString', coordinates: [[0, 0]] }, 'linestring', 'needs at least 2 positions'],
    [{ type: 'Polygon', coordinates: [] }, 'polygon', 'needs at least one linear ring'],
    [
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [0, 0],
          ],
        ],
      },
      'polygon',
      "Column 'g'.coordinates[0] needs at least 4 positions",
    ],
    [
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 1],
          ],
        ],
      },
      'polygon',
      'is not closed',
    ],
    [{ type: 'MultiPoint', coordinates: 'x' }, 'multipoint', 'must be an array of coordinates'],
    [
      { type: 'GeometryCollection', geometries: [5] },
      'geometrycollection',
      "Column 'g'.geometries[0] must be a GeoJSON geometry object",
    ],
    [
      { type: 'Point', coordinates: [1, 2], crs: { type: 'name' } },
      'point',
      "has a member 'crs' that a Point does not take",
    ],
    [{ type: 'Point', coordinates: [1, 2], geometries: [] }, 'point', "has a member 'geometries'"],
  ])('%j into %s', (value, dataType, message) => {
    expect(() => write(value, dataType)).toThrow(GeoJsonError);
    expect(() => write(value, dataType)).toThrow(message);
  });

  test('GeometryCollections nested past 32 levels', () => {
    let shape: unknown = { type: 'Point', coordinates: [0, 0] };
    for (let i = 0; i < 40; i++) shape = { type: 'GeometryCollection', geometries: [shape] };
    expect(() => write(shape)).toThrow('nests GeometryCollections deeper than 32');
  });

  test('a bbox is taken and not stored', () => {
    const bytes = write({ type: 'Point', coordinates: [1, 2], bbox: [1, 2, 1, 2] }, 'point');
    expect(wkbToGeoJson(bytes.subarray(4))).toBe('{"type":"Point","coordinates":[1,2]}');
  });
});
