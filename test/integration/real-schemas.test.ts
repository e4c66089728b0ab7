/**
 * Real schemas over HTTP against MariaDB (docs/types.md): every MySQL type family (spatial
 * included) and every fractional precision 0–6 of DATETIME, TIMESTAMP and TIME, read at the top,
 * by key, through the small-read and the streamed path and inside expanded relations, each value
 * compared with what MariaDB itself says (CAST(… AS CHAR), ST_AsGeoJSON, TO_BASE64); names with
 * spaces, dots, quotes and non-ASCII letters named in every place a request names a column;
 * GeoJSON and ISO 8601 writes; quoted strings that are no value of their column's type.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { EVERY_TYPE_SQL, PRECISIONS, SPATIAL, temporalValues } from '../fixtures/every-type.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { expectedRows } from '../helpers/expected-rows.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(EVERY_TYPE_SQL);
  gw = await startTestGateway(db.name);
});
afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

async function get(path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(gw.url + path);
  return { status: response.status, body: await response.json() };
}

async function send(
  method: string,
  path: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(gw.url + path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

type Row = Record<string, unknown>;

describe('every type family, value by value against MariaDB', () => {
  let expected: Row[];
  beforeAll(async () => {
    expected = await expectedRows(db.admin, 'types', 'id');
  });

  test('the streamed read', async () => {
    const { status, body } = await get('/table/types/read?$orderby=id');
    expect(status).toBe(200);
    expect(body).toEqual(expected);
  });

  test('the small read (one row by primary key) and the read by key', async () => {
    expect((await get('/table/types/read?$filter=id%20eq%201')).body).toEqual([expected[0]]);
    expect((await get('/table/types/read?$top=2&$orderby=id')).body).toEqual(expected);
  });

  test('each precision 0–6 carries exactly its digits, a zero fraction included', async () => {
    const { body } = await get('/table/types/read?$filter=id%20eq%201');
    const row = (body as Row[])[0] as Row;
    for (const n of PRECISIONS) {
      const v = temporalValues(n);
      expect([row[`dt${n}`], row[`ts${n}`], row[`tm${n}`]]).toEqual([v.dt, v.ts, v.tm]);
    }
  });

  test('inside an expanded to-many array and a to-one object, the same values', async () => {
    const many = (await get('/table/parents/read?$filter=id%20eq%201&$expand=types($orderby=id)'))
      .body as Row[];
    expect(many[0]?.types).toEqual(expected.map(({ ...row }) => row));
    const one = (
      await get('/table/odd%20names/read?$select=id&$expand=parent($expand=types($orderby=id))')
    ).body as Row[];
    expect(((one[0] as Row).parent as Row).types).toEqual(expected);
  });

  test('the shapes are the GeoJSON of RFC 7946 with their type', async () => {
    const { body } = await get('/table/types/read?$select=pt,gc,pg&$filter=id%20eq%201');
    expect((body as Row[])[0]).toEqual({
      pt: { type: 'Point', coordinates: [1.5, -2.25] },
      gc: {
        type: 'GeometryCollection',
        geometries: [
          { type: 'Point', coordinates: [1, 2] },
          {
            type: 'LineString',
            coordinates: [
              [0, 0],
              [1, 1],
            ],
          },
          {
            type: 'Polygon',
            coordinates: [
              [
                [0, 0],
                [1, 0],
                [1, 1],
                [0, 0],
              ],
            ],
          },
        ],
      },
      pg: {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [4, 0],
            [4, 4],
            [0, 4],
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
    });
  });
});

describe('spatial writes take GeoJSON, and nothing else', () => {
  const shapes: Readonly<Record<keyof typeof SPATIAL, unknown>> = {
    g: {
      type: 'MultiPoint',
      coordinates: [
        [0.1, 0.2],
        [3, 4],
      ],
    },
    pt: { type: 'Point', coordinates: [-122.4194, 37.7749] },
    ls: {
      type: 'LineString',
      coordinates: [
        [0, 0],
        [1e-7, 2.5],
      ],
    },
    pg: {
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [2, 0],
          [2, 2],
          [0, 0],
        ],
      ],
    },
    mpt: { type: 'MultiPoint', coordinates: [[1, 1]] },
    mls: {
      type: 'MultiLineString',
      coordinates: [
        [
          [0, 0],
          [1, 1],
        ],
        [
          [5, 5],
          [6, 7],
        ],
      ],
    },
    mpg: {
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
        [
          [
            [2, 2],
            [3, 2],
            [3, 3],
            [2, 2],
          ],
        ],
      ],
    },
    gc: {
      type: 'GeometryCollection',
      geometries: [
        { type: 'Point', coordinates: [9, 9] },
        { type: 'GeometryCollection', geometries: [] },
      ],
    },
  };

  test('a create of every spatial type stores what MariaDB reads back as the same GeoJSON', async () => {
    const created = await send('POST', '/table/types/create', { id: 10, ...shapes });
    expect(created).toMatchObject({ status: 200, body: { success: true, affectedRows: 1 } });
    const names = Object.keys(SPATIAL);
    const [rows] = await db.admin.query(
      `SELECT ${names.map((n) => `ST_AsGeoJSON(${n}) AS ${n}, ST_SRID(${n}) AS ${n}_srid`).join(', ')} FROM types WHERE id = 10`,
    );
    const row = (rows as Row[])[0] as Row;
    for (const name of names) {
      expect(JSON.parse(row[name] as string)).toEqual(shapes[name as keyof typeof SPATIAL]);
      expect(row[`${name}_srid`]).toBe(0);
    }
    const read = await get(`/table/types/read?$select=${names.join(',')}&$filter=id%20eq%2010`);
    expect(read.body).toEqual([shapes]);
  });

  test('an update sets a shape; null clears it', async () => {
    await send('POST', '/table/types/create', { id: 11 });
    const point = { type: 'Point', coordinates: [7, 8] };
    expect((await send('PUT', '/table/types/update(id,11)', { pt: point, g: point })).status).toBe(
      200,
    );
    const [rows] = await db.admin.query(
      'SELECT ST_AsText(pt) AS pt, ST_AsText(g) AS g FROM types WHERE id = 11',
    );
    expect(rows).toEqual([{ pt: 'POINT(7 8)', g: 'POINT(7 8)' }]);
    await send('PUT', '/table/types/update(id,11)', { pt: null });
    expect((await get('/table/types/read?$select=pt,g&$filter=id%20eq%2011')).body).toEqual([
      { pt: null, g: point },
    ]);
  });

  test.each<[string, unknown, string]>([
    [
      'pt',
      'POINT(1 2)',
      `Column 'pt' is spatial and takes a GeoJSON geometry object such as {"type": "Point", "coordinates": [1, 2]}, not a string`,
    ],
    ['pt', 5, 'not a number'],
    [
      'pt',
      {
        type: 'LineString',
        coordinates: [
          [0, 0],
          [1, 1],
        ],
      },
      "Column 'pt' is a POINT column and takes a GeoJSON Point, not a LineString",
    ],
    [
      'g',
      { type: 'Feature', geometry: null },
      "Column 'g' must have a \"type\" of Point, LineString, Polygon, MultiPoint, MultiLineString, MultiPolygon, GeometryCollection, not 'Feature'",
    ],
    [
      'pt',
      { type: 'Point', coordinates: [1, 2, 3] },
      "Column 'pt'.coordinates has 3 coordinates; MySQL stores two (x, y), no elevation",
    ],
    [
      'pt',
      { type: 'Point', coordinates: ['1', 2] },
      "Column 'pt'.coordinates must hold two numbers",
    ],
    [
      'ls',
      { type: 'LineString', coordinates: [[0, 0]] },
      "Column 'ls'.coordinates needs at least 2 positions",
    ],
    [
      'pg',
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
      "Column 'pg'.coordinates[0] is not closed",
    ],
    [
      'pt',
      { type: 'Point', coordinates: [1, 2], crs: {} },
      "has a member 'crs' that a Point does not take",
    ],
    ['g', [1, 2], "Column 'g' must be a GeoJSON geometry object"],
  ])('%s ← %j: 400 INVALID_VALUE', async (column, value, message) => {
    const { status, body } = await send('POST', '/table/types/create', { id: 12, [column]: value });
    expect(status).toBe(400);
    expect(body.code).toBe('INVALID_VALUE');
    expect(body.message).toContain(message);
    const [rows] = await db.admin.query('SELECT id FROM types WHERE id = 12');
    expect(rows).toEqual([]);
  });

  test('a filter on a spatial column is a 400 naming it; a null test works', async () => {
    const { status, body } = await get("/table/types/read?$filter=pt%20eq%20'POINT(1%202)'");
    expect(status).toBe(400);
    expect(body).toEqual({
      success: false,
      code: 'FILTER_TYPE',
      message:
        "Invalid $filter at position 1: column 'pt' (point) is spatial and cannot be filtered (only 'eq null' and 'ne null' test it)",
    });
    const nulls = await get('/table/types/read?$select=id&$filter=pt%20eq%20null&$orderby=id');
    expect(nulls.body).toEqual([{ id: 2 }, { id: 11 }]);
  });

  test('a spatial column is no key of update or delete', async () => {
    const { status, body } = await send('PUT', "/table/types/update(pt,'x')", { vc: 'a' });
    expect(status).toBe(400);
    expect(body.message).toContain('holds spatial values and cannot be the key');
  });
});

describe('ISO 8601 writes to DATETIME and TIMESTAMP', () => {
  test('Date.toISOString(), offsets and zone-less T: stored as the UTC wall time a filter reads', async () => {
    const at = new Date(Date.UTC(2024, 4, 1, 10, 0, 0, 250)).toISOString();
    const created = await send('POST', '/table/types/create', {
      id: 20,
      dt3: at,
      ts3: at,
      dt0: '2024-05-01T12:00:00+02:00',
      ts6: '2024-05-01T00:30:00.000001-01:00',
      dt6: '2024-05-01T10:00:00.5',
    });
    expect(created.status).toBe(200);
    const [rows] = await db.admin.query(
      'SELECT CAST(dt3 AS CHAR) AS dt3, CAST(ts3 AS CHAR) AS ts3, CAST(dt0 AS CHAR) AS dt0, CAST(ts6 AS CHAR) AS ts6, CAST(dt6 AS CHAR) AS dt6 FROM types WHERE id = 20',
    );
    expect(rows).toEqual([
      {
        dt3: '2024-05-01 10:00:00.250',
        ts3: '2024-05-01 10:00:00.250',
        dt0: '2024-05-01 10:00:00',
        ts6: '2024-05-01 01:30:00.000001',
        dt6: '2024-05-01 10:00:00.500000',
      },
    ]);
    // The filter finds the row by the same instant, written either way.
    for (const filter of [`dt3 eq ${at}`, `ts3 eq '${at}'`, "dt0 eq '2024-05-01T11:00:00+01:00'"]) {
      const read = await get(`/table/types/read?$select=id&$filter=${encodeURIComponent(filter)}`);
      expect({ filter, body: read.body }).toEqual({ filter, body: [{ id: 20 }] });
    }
  });

  test('an update or delete key takes the same ISO 8601 forms', async () => {
    await send('POST', '/table/types/create', { id: 22, ts0: '2024-06-01 08:00:00' });
    const key = encodeURIComponent("'2024-06-01T10:00:00+02:00'");
    expect(await send('PUT', `/table/types/update(ts0,${key})`, { vc: 'keyed' })).toMatchObject({
      status: 200,
      body: { affectedRows: 1 },
    });
    expect(await send('DELETE', `/table/types/delete(ts0,${key})`, undefined)).toMatchObject({
      status: 200,
      body: { affectedRows: 1 },
    });
  });

  test('more digits than the column keeps, or no date at all: 400', async () => {
    const cut = await send('POST', '/table/types/create', {
      id: 21,
      dt0: '2024-05-01T10:00:00.250Z',
    });
    expect(cut.status).toBe(400);
    expect(cut.body.code).toBe('INVALID_VALUE');
    const bad = await send('POST', '/table/types/create', { id: 21, dt0: '2024-02-30T10:00:00Z' });
    expect(bad.body).toMatchObject({ code: 'INVALID_VALUE' });
    expect(bad.body.message).toContain('day 30; 2024-02 has 29 days');
  });
});

describe('a quoted string meets a number, date or time only as a value of its type', () => {
  test.each([
    [
      "d gt 'abc'",
      "the string 'abc' cannot be compared with column 'd' (decimal), which is a number",
    ],
    [
      "i_int eq 'abc'",
      "the string 'abc' cannot be compared with column 'i_int' (int), which is a number",
    ],
    [
      "dt0 gt 'yesterday'",
      "the string 'yesterday' cannot be compared with column 'dt0' (datetime)",
    ],
    ["dt eq '2024-02-30'", 'an invalid date (day 30; 2024-02 has 29 days)'],
    ["tm0 lt 'noon'", "the string 'noon' cannot be compared with column 'tm0' (time)"],
    ["parent/id eq 'x'", "the string 'x' cannot be compared with column 'id' (int)"],
  ])('%s → 400 FILTER_TYPE', async (filter, message) => {
    const { status, body } = await get(`/table/types/read?$filter=${encodeURIComponent(filter)}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ success: false, code: 'FILTER_TYPE' });
    expect((body as Row).message).toContain(message);
  });

  test('inside an $expand filter too', async () => {
    const { status, body } = await get(
      `/table/parents/read?$expand=${encodeURIComponent("types($filter=i_int eq 'abc')")}`,
    );
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'FILTER_TYPE' });
  });

  test.each([
    ["i_int eq '-2147483648'", [1]],
    ["d lt '0'", [1]],
    ["dt eq '2024-02-29'", [1]],
    ["dt3 eq '2024-01-01 09:00:00.500'", [1]],
    ["tm0 eq '-838:59:59'", [1]],
    ["tm1 eq '10:00:00.5'", [1]],
  ])('%s: the typed value matches', async (filter, ids) => {
    const { status, body } = await get(
      `/table/types/read?$select=id&$filter=${encodeURIComponent(filter)}`,
    );
    expect(status).toBe(200);
    expect(body).toEqual(ids.map((id) => ({ id })));
  });
});

describe('names with spaces, dots, quotes and non-ASCII letters', () => {
  const q = encodeURIComponent;

  test('$select, $filter and $orderby name them in double quotes', async () => {
    const { status, body } = await get(
      `/table/odd%20names/read?$select=${q('"zip code","a.b","say ""hi""","it\'s",größe,名前')}&$filter=${q('"zip code" ne \'10115\' and "a.b" ge 1')}&$orderby=${q('"zip code" desc')}`,
    );
    expect(status).toBe(200);
    expect(body).toEqual([
      { 'zip code': '75001', 'a.b': 3, 'say "hi"': 'z', "it's": 'c', größe: 30, 名前: 'ウ' },
      { 'zip code': '40301', 'a.b': 1, 'say "hi"': 'x', "it's": 'a', größe: 10, 名前: 'ア' },
    ]);
  });

  test('in $expand options and through a path', async () => {
    const { status, body } = await get(
      `/table/parents/read?$select=id&$filter=id eq 1&$expand=${q('"odd names"($select="zip code","say ""hi""";$filter="a.b" gt 1;$orderby="zip code" desc)')}`,
    );
    expect({ status, body }).toMatchObject({ status: 200 });
    expect(body).toEqual([{ id: 1, 'odd names': [{ 'zip code': '10115', 'say "hi"': 'y "q"' }] }]);
  });

  test('update and delete keys in double quotes', async () => {
    const updated = await send('PUT', `/table/odd%20names/update(${q('"zip code"')},'40301')`, {
      'say "hi"': 'new',
    });
    expect(updated).toMatchObject({ status: 200, body: { affectedRows: 1 } });
    const [rows] = await db.admin.query('SELECT `say "hi"` AS v FROM `odd names` WHERE id = 1');
    expect(rows).toEqual([{ v: 'new' }]);
    const byDot = await send('PUT', `/table/odd%20names/update(${q('"a.b"')},2)`, { größe: 21 });
    expect(byDot).toMatchObject({ status: 200, body: { affectedRows: 1 } });
    await send('POST', '/table/odd%20names/create', { id: 9, "it's": 'gone', 名前: 'エ' });
    const deleted = await send('DELETE', `/table/odd%20names/delete(${q('"it\'s"')},'gone')`, {});
    expect(deleted).toMatchObject({ status: 200, body: { affectedRows: 1 } });
  });

  test('an unknown quoted name is the usual 400, and a quote cannot break out', async () => {
    const { status, body } = await get(
      `/table/odd%20names/read?$select=${q('"zip code`; DROP TABLE parents; --"')}`,
    );
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'UNKNOWN_COLUMN' });
    const [rows] = await db.admin.query('SELECT COUNT(*) AS n FROM parents');
    expect(rows).toEqual([{ n: '2' }]);
  });
});

describe('views MySQL cannot write, and the methods a path answers', () => {
  const READ_ONLY = ['type_counts', 'distinct_names', 'both_names'];

  test.each(READ_ONLY)(
    '%s: create, update and delete are 405 with an empty Allow',
    async (view) => {
      for (const [method, path] of [
        ['POST', 'create'],
        ['PUT', 'update(n,1)'],
        ['DELETE', 'delete(n,1)'],
      ] as const) {
        const response = await fetch(`${gw.url}/table/${view}/${path}`, {
          method,
          headers: { 'content-type': 'application/json' },
          body: method === 'DELETE' ? undefined : JSON.stringify({ n: 1 }),
        });
        expect({ method, status: response.status }).toEqual({ method, status: 405 });
        expect(response.headers.get('allow')).toBe('');
        expect(await response.json()).toEqual({
          success: false,
          code: 'VIEW_NOT_WRITABLE',
          message: `View '${view}' cannot be written: MySQL writes only through simple views (no GROUP BY, DISTINCT, aggregate functions, UNION or subqueries in the select list); read it with GET /table/<view>/read`,
        });
      }
      expect((await get(`/table/${view}/read`)).status).toBe(200);
    },
  );

  test('an updatable view takes writes, a column with a space included', async () => {
    expect(
      (await send('POST', '/table/parent_names/create', { id: 3, name: 'three' })).status,
    ).toBe(200);
    const updated = await send('PUT', `/table/zips/update(id,3)`, { 'zip code': '99999' });
    expect(updated).toMatchObject({ status: 200, body: { affectedRows: 1 } });
    const [rows] = await db.admin.query('SELECT `zip code` AS z FROM `odd names` WHERE id = 3');
    expect(rows).toEqual([{ z: '99999' }]);
  });

  test('a view MariaDB calls updatable but cannot insert into answers its own 400', async () => {
    // A subquery in the select list: MariaDB's IS_UPDATABLE says YES (MySQL's says NO).
    const { status, body } = await send('POST', '/table/with_subquery/create', { n: 1 });
    expect(status).toBe(400);
    expect(body).toMatchObject({ success: false, code: 'ER_VIEW_MULTIUPDATE' });
  });

  test('/openapi.json offers only reads of the views MySQL cannot write', async () => {
    const { body } = await get('/openapi.json');
    const paths = Object.keys((body as { paths: Record<string, unknown> }).paths);
    for (const view of READ_ONLY) {
      // The change feed of a view: listed with its reads (docs/changes.md).
      expect(paths.filter((p) => p.startsWith(`/table/${view}/`))).toEqual([
        `/table/${view}/read`,
        `/table/${view}/changes`,
      ]);
    }
    expect(paths.filter((p) => p.startsWith('/table/parent_names/'))).toEqual([
      '/table/parent_names/read',
      '/table/parent_names/changes',
      '/table/parent_names/create',
      '/table/parent_names/update({key},{value})',
      '/table/parent_names/update',
      '/table/parent_names/delete({key},{value})',
      '/table/parent_names/delete',
    ]);
  });

  test.each([
    ['GET', '/table/types/create', 'POST'],
    ['POST', '/table/types/read', 'GET, HEAD'],
    ['PUT', '/table/types/delete(id,1)', 'DELETE'],
    ['DELETE', '/table/types/update(id,1)', 'PUT'],
    ['DELETE', '/health', 'GET, HEAD'],
    ['POST', '/openapi.json', 'GET, HEAD'],
  ])('%s %s is 405 with Allow: %s', async (method, path, allow) => {
    const withBody = method === 'POST' || method === 'PUT';
    const response = await fetch(gw.url + path, {
      method,
      ...(withBody ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}),
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allow);
    expect(await response.json()).toEqual({
      success: false,
      code: 'METHOD_NOT_ALLOWED',
      message: `${method} is not allowed here; this path answers ${allow}`,
    });
  });

  test('a path no route has stays 404', async () => {
    for (const path of ['/nothing/here', '/table/types/upsert', '/table/types']) {
      const { status, body } = await get(path);
      expect({ path, status, code: (body as Row).code }).toEqual({
        path,
        status: 404,
        code: 'NOT_FOUND',
      });
    }
  });
});

describe('what MySQL would answer without saying why', () => {
  test('a STORED generated DECIMAL whose expression rounds: the create succeeds', async () => {
    const created = await send('POST', '/table/priced/create', { id: 1, price: 10.99 });
    expect(created).toMatchObject({ status: 200, body: { success: true, affectedRows: 1 } });
    expect((await get('/table/priced/read')).body).toEqual([
      { id: 1, price: 10.99, price_with_tax: 13.19 },
    ]);
    const updated = await send('PUT', '/table/priced/update(id,1)', { price: 0.01 });
    expect(updated.status).toBe(200);
    // A value of the client's own that does not fit is still refused.
    const cut = await send('POST', '/table/priced/create', { id: 2, price: 10.999 });
    expect(cut).toMatchObject({ status: 400, body: { code: 'INVALID_VALUE' } });
  });

  test('a bad ENUM or SET text answers with the members', async () => {
    const { status, body } = await send('POST', '/table/types/create', { id: 30, en: 'huge' });
    expect(status).toBe(400);
    expect(body).toEqual({
      success: false,
      code: 'INVALID_VALUE',
      message: "Column 'en' must be one of 'small', 'large'; 'huge' is not",
    });
    const set = await send('PUT', '/table/types/update(id,2)', { st: 'a,x' });
    expect(set.body.message).toBe(
      "Column 'st' takes members of 'a', 'b', 'c', separated by commas; 'a,x' names another",
    );
    // What MySQL itself takes for a member still goes through: it stores the member.
    expect((await send('PUT', '/table/types/update(id,2)', { en: 'LARGE' })).status).toBe(200);
    const [rows] = await db.admin.query('SELECT en FROM types WHERE id = 2');
    expect(rows).toEqual([{ en: 'large' }]);
  });

  test('an unknown table or column gets a "did you mean"', async () => {
    expect((await get('/table/parent/read')).body).toEqual({
      success: false,
      code: 'UNKNOWN_TABLE',
      message: "Table 'parent' does not exist: did you mean 'parents'?",
    });
    expect((await get('/table/parents/read?$select=nme')).body).toMatchObject({
      code: 'UNKNOWN_COLUMN',
      message: "Column 'nme' does not exist in table 'parents': did you mean 'name'?",
    });
    expect((await get('/table/odd%20names/read?$orderby=zip_code')).body).toMatchObject({
      message: "Column 'zip_code' does not exist in table 'odd names': did you mean 'zip code'?",
    });
    expect((await send('POST', '/table/parents/create', { id: 9, nam: 'x' })).body).toMatchObject({
      message: "Column 'nam' does not exist in table 'parents': did you mean 'name'?",
    });
    expect((await get('/table/zzzzzz/read')).body).toMatchObject({
      message: "Table 'zzzzzz' does not exist",
    });
    expect((await get('/table/parents/read?$expand=type')).body).toMatchObject({
      code: 'UNKNOWN_RELATION',
      message: "Relation 'type' does not exist on table 'parents': did you mean 'types'?",
    });
  });

  test('under a policy it names only what the caller may see', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-real-schemas-'));
    const file = path.join(dir, 'policy.json');
    await writeFile(
      file,
      JSON.stringify({
        roles: {
          anonymous: {
            tables: {
              parents: { read: true },
              'odd names': { read: { columns: ['id', 'zip code'] } },
            },
          },
        },
      }),
    );
    const guarded = await startTestGateway(db.name, { policyFile: file });
    try {
      const ask = async (p: string) => (await fetch(guarded.url + p)).json();
      expect(await ask('/table/parent/read')).toMatchObject({
        message: "Table 'parent' does not exist: did you mean 'parents'?",
      });
      // `types` and `priced` exist, but the role cannot read them: never suggested.
      for (const name of ['type', 'typess', 'prices']) {
        expect(await ask(`/table/${name}/read`)).toEqual({
          success: false,
          code: 'UNKNOWN_TABLE',
          message: `Table '${name}' does not exist`,
        });
      }
      expect(await ask('/table/types/read')).toMatchObject({
        message: "Table 'types' does not exist",
      });
      // `größe` is hidden: a near name gets no suggestion; `zip code` is visible.
      expect(await ask('/table/odd%20names/read?$select=grösse')).toMatchObject({
        message: "Column 'grösse' does not exist in table 'odd names'",
      });
      // `types` is hidden from the role: no relation to it is suggested.
      expect(await ask('/table/parents/read?$expand=type')).toMatchObject({
        message: "Relation 'type' does not exist on table 'parents'",
      });
      expect(await ask('/table/odd%20names/read?$select=zip_code')).toMatchObject({
        message: "Column 'zip_code' does not exist in table 'odd names': did you mean 'zip code'?",
      });
    } finally {
      await guarded.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Each value's JSON text in an answer of flat row objects (their values may be nested): per row,
 * name → the text as it stands, digits and all (JSON.parse would round a DECIMAL).
 */
function rawValues(text: string): Record<string, string>[] {
  let i = 0;
  const space = () => {
    while (/\s/.test(text[i] ?? '')) i++;
  };
  const string = (): string => {
    const start = i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (): string => {
    const start = i;
    let depth = 0;
    for (;;) {
      const c = text[i];
      if (c === '"') string();
      else if (depth === 0 && (c === ',' || c === '}')) break;
      else {
        if (c === '{' || c === '[') depth++;
        if (c === '}' || c === ']') depth--;
        i++;
      }
    }
    return text.slice(start, i);
  };
  const rows: Record<string, string>[] = [];
  space();
  i++; // [
  for (space(); text[i] === '{'; space()) {
    i++;
    const row: Record<string, string> = {};
    for (space(); text[i] === '"'; space()) {
      const name = string();
      space();
      i++; // :
      space();
      row[name] = value();
      if (text[i] === ',') i++;
      space();
    }
    i++; // }
    rows.push(row);
    space();
    if (text[i] === ',') i++;
  }
  return rows;
}

describe('CSV: every cell is the text of the JSON value', () => {
  // A row of zero fractions (the binary protocol leaves them out) and a TIME's trailing zeros.
  beforeAll(async () => {
    const set = PRECISIONS.flatMap((n) => [
      `dt${n} = '2024-05-01 09:00:00'`,
      `ts${n} = '2024-05-01 09:00:00'`,
      `tm${n} = '-100:00:00${n === 0 ? '' : '.5'}'`,
    ]);
    await db.admin.query(`INSERT INTO types SET id = 3, ${set.join(', ')}, d = 0, bits = 0`);
  });
  afterAll(async () => {
    await db.admin.query('DELETE FROM types WHERE id = 3');
  });

  test.each([
    ['streamed', '/table/types/read?$orderby=id'],
    ['fetched whole', '/table/types/read?$top=3&$orderby=id'],
    ['by key', '/table/types/read(id,1)'],
    ['by key, zero fractions', '/table/types/read(id,3)'],
  ])('%s: cell by cell, every type and precision', async (_how, url) => {
    const json = await (await fetch(gw.url + url)).text();
    const csv = await fetch(gw.url + url, { headers: { accept: 'text/csv' } });
    expect(csv.status).toBe(200);
    const [header, ...records] = parse(await csv.text()) as string[][];
    const rows = rawValues(json.startsWith('[') ? json : `[${json}]`);
    expect(records).toHaveLength(rows.length);
    expect(header).toEqual(Object.keys(rows[0] as Record<string, string>));
    rows.forEach((row, r) => {
      const expected = Object.values(row).map((raw) =>
        raw === 'null' ? '' : raw.startsWith('"') ? (JSON.parse(raw) as string) : raw,
      );
      const cells = Object.fromEntries(
        (header as string[]).map((name, c) => [name, records[r]?.[c]]),
      );
      expect(cells).toEqual(
        Object.fromEntries(Object.keys(row).map((name, c) => [name, expected[c]])),
      );
    });
  });
});
