/**
 * `POST /odata/$batch` (docs/odata-batch.md): the JSON form and the multipart/mixed form; a
 * change set is one transaction (its second request failing leaves the database as it was),
 * writes in it are planned and guarded as alone (a policy's refusal), a dependent request of a
 * failed one is not run (424), reads are answered by the gateway's own routes, and a malformed
 * or oversized batch is a 4xx, never a 5xx.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SCHEMA = `
CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(20) NULL);
CREATE TABLE order_items (id INT AUTO_INCREMENT PRIMARY KEY, order_id INT NOT NULL,
  sku VARCHAR(10) NOT NULL, FOREIGN KEY (order_id) REFERENCES orders (id));
CREATE TABLE order_notes (id INT AUTO_INCREMENT PRIMARY KEY, order_id INT NOT NULL,
  \`the text\` VARCHAR(10) NULL, bin BLOB NULL, FOREIGN KEY (order_id) REFERENCES orders (id));
CREATE TABLE pairs (a INT NOT NULL, b VARCHAR(5) NOT NULL, v INT NULL, PRIMARY KEY (a, b));
CREATE TABLE kinds (id INT PRIMARY KEY, at DATETIME NULL, price DECIMAL(10,2) NULL, big BIGINT NULL,
  doc JSON NULL, bin BLOB NULL, label VARCHAR(10) NULL);
-- A binary primary key is no OData key (Edm.Binary): the set is keyed by its unique key.
CREATE TABLE codes (id VARBINARY(16) NOT NULL PRIMARY KEY, code VARCHAR(10) NOT NULL, v INT NULL,
  UNIQUE KEY (code));
CREATE TABLE zips (\`zip code\` INT NOT NULL, \`area x\` VARCHAR(5) NOT NULL, v INT NULL,
  PRIMARY KEY (\`zip code\`, \`area x\`));
CREATE PROCEDURE hello(IN who VARCHAR(20)) SELECT CONCAT('hi ', who) AS greeting;
INSERT INTO orders VALUES (1, 'one'), (2, 'two');
INSERT INTO codes VALUES (X'01', 'A-1', 1), (X'02', 'B-2', 2);
INSERT INTO zips VALUES (12345, 'n', 1), (12345, 's', 2);
INSERT INTO pairs VALUES (1, 'x', 10), (2, 'y''z', 20);
`;

const POLICY = {
  roles: {
    anonymous: {
      tables: {
        orders: { read: true, create: true, update: true },
        order_items: { read: true },
      },
    },
  },
};

let db: TestDatabase;
let gw: TestGateway;
let guarded: TestGateway;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-batch-'));
  const policyFile = path.join(dir, `${randomBytes(4).toString('hex')}-policy.json`);
  await writeFile(policyFile, JSON.stringify(POLICY));
  db = await createTestDatabase(SCHEMA);
  gw = await startTestGateway(db.name);
  guarded = await startTestGateway(db.name, { policyFile });
}, 60_000);

afterAll(async () => {
  await guarded?.close();
  await gw?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function batch(body: string, type: string, on: TestGateway = gw) {
  const response = await fetch(`${on.url}/odata/$batch`, {
    method: 'POST',
    headers: { 'Content-Type': type },
    body,
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const json = (requests: unknown[], on?: TestGateway) =>
  batch(JSON.stringify({ requests }), 'application/json', on);

async function orders(): Promise<unknown[]> {
  const [rows] = await db.admin.query('SELECT id, note FROM orders ORDER BY id');
  return rows as unknown[];
}

async function nextId(table: string): Promise<number> {
  const [found] = await db.admin.query(
    'SELECT AUTO_INCREMENT AS next FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?',
    [db.name, table],
  );
  return Number((found as { next: number }[])[0]?.next);
}

describe('JSON batch (OData 4.01)', () => {
  test('an atomicity group creates, updates and deletes in one transaction, each answered', async () => {
    const id = await nextId('orders');
    const answer = await json([
      {
        id: 'c',
        method: 'POST',
        url: 'orders',
        headers: { 'content-type': 'application/json' },
        body: { note: 'new' },
        atomicityGroup: 'g',
      },
      {
        id: 'u',
        method: 'PATCH',
        url: '/odata/orders(2)',
        body: { note: 'two!' },
        atomicityGroup: 'g',
      },
      {
        id: 'p',
        method: 'PATCH',
        url: "pairs(b='y''z',a=2)",
        body: { v: 21 },
        atomicityGroup: 'g',
      },
    ]);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('odata-version')).toBe('4.0');
    const base = `${gw.url}/odata/`;
    expect(JSON.parse(answer.text)).toEqual({
      responses: [
        {
          id: 'c',
          status: 201,
          headers: {
            location: `${base}orders(${id})`,
            'content-type': 'application/json;odata.metadata=minimal',
          },
          body: { '@odata.context': `${base}$metadata#orders/$entity`, id, note: 'new' },
        },
        { id: 'u', status: 204, headers: {} },
        { id: 'p', status: 204, headers: {} },
      ],
    });
    expect(await orders()).toEqual([
      { id: 1, note: 'one' },
      { id: 2, note: 'two!' },
      { id, note: 'new' },
    ]);
    const [pairs] = await db.admin.query('SELECT v FROM pairs WHERE a = 2');
    expect(pairs).toEqual([{ v: 21 }]);
    // Cleanup for the next tests' exact rows.
    await db.admin.query('DELETE FROM orders WHERE id = ?', [id]);
    await db.admin.query("UPDATE orders SET note = 'two' WHERE id = 2");
  });

  test("the group's second request failing rolls back the first (checked in the database)", async () => {
    const before = await orders();
    const answer = await json([
      { id: 'a', method: 'POST', url: 'orders', body: { note: 'kept?' }, atomicityGroup: 'g1' },
      {
        id: 'b',
        method: 'PATCH',
        url: 'orders(1)',
        body: { note: 'far too long for the column' },
        atomicityGroup: 'g1',
      },
      { id: 'd', method: 'DELETE', url: 'orders(1)', dependsOn: ['g1'] },
      { id: 'e', method: 'PATCH', url: 'orders(999)', body: { note: 'x' } },
    ]);
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.text) as {
      responses: { id: string; status: number; body: unknown }[];
    };
    expect(body.responses.map((r) => [r.id, r.status])).toEqual([
      ['b', 400],
      ['d', 424],
      ['e', 404],
    ]);
    expect(body.responses[1]?.body).toEqual({
      error: {
        code: 'BATCH_DEPENDENCY_FAILED',
        message: "Not run: request or change set 'g1', which this one depends on, failed",
      },
    });
    const notFound = body.responses[2] as { body: { error: { code: string } } };
    expect(notFound.body.error.code).toBe('ROW_NOT_FOUND');
    expect(await orders()).toEqual(before);
  });

  test('a deep insert inside a change set; a policy refusal fails the set', async () => {
    const id = await nextId('orders');
    const deep = await json([
      {
        id: '1',
        method: 'POST',
        url: 'orders',
        body: { note: 'deep', order_items: [{ sku: 'A' }, { sku: 'B' }] },
        atomicityGroup: 'g',
      },
    ]);
    expect(JSON.parse(deep.text).responses[0].status).toBe(201);
    const [items] = await db.admin.query('SELECT order_id, sku FROM order_items ORDER BY id');
    expect(items).toEqual([
      { order_id: id, sku: 'A' },
      { order_id: id, sku: 'B' },
    ]);
    const before = await orders();
    const refused = await json(
      [
        { id: '1', method: 'POST', url: 'orders', body: { note: 'p' }, atomicityGroup: 'g' },
        {
          id: '2',
          method: 'POST',
          url: 'order_items',
          body: { order_id: 1, sku: 'Z' },
          atomicityGroup: 'g',
        },
      ],
      guarded,
    );
    expect(JSON.parse(refused.text)).toEqual({
      responses: [
        {
          id: '2',
          status: 403,
          headers: { 'content-type': 'application/json' },
          body: { error: { code: 'FORBIDDEN', message: 'Forbidden' } },
        },
      ],
    });
    expect(await orders()).toEqual(before);
  });

  test('a read is answered by the route it names, as alone', async () => {
    const answer = await json([{ id: 'r', method: 'GET', url: 'orders?$top=1' }]);
    const direct = await fetch(`${gw.url}/odata/orders?$top=1`);
    const inner = JSON.parse(answer.text).responses[0];
    expect(inner.status).toBe(200);
    expect(inner.status).toBe(direct.status);
    expect(inner.headers['odata-version']).toBe('4.0');
    expect(inner.body).toEqual(await direct.json());
  });

  test('bad envelopes: 4xx with a code, never 5xx', async () => {
    const cases: [string, string, number, string][] = [
      ['{', 'application/json', 400, 'INVALID_JSON'],
      ['{"requests":3}', 'application/json', 400, 'BATCH_SYNTAX'],
      ['{"requests":[{"id":"1","url":"orders"}]}', 'application/json', 400, 'BATCH_SYNTAX'],
      [
        '{"requests":[{"id":"1","method":"GET","url":"orders","dependsOn":["9"]}]}',
        'application/json',
        400,
        'BATCH_SYNTAX',
      ],
      [
        '{"requests":[{"id":"1","method":"GET","url":"orders"},{"id":"1","method":"GET","url":"orders"}]}',
        'application/json',
        400,
        'BATCH_SYNTAX',
      ],
      [
        JSON.stringify({
          requests: Array.from({ length: 101 }, (_, i) => ({
            id: `${i}`,
            method: 'GET',
            url: 'orders',
          })),
        }),
        'application/json',
        400,
        'BATCH_LIMIT',
      ],
      ['hello', 'text/plain', 415, 'BATCH_MEDIA_TYPE'],
      [
        '--b\r\nContent-Type: application/http\r\n\r\nGET orders HTTP/1.1\r\n\r\n',
        'multipart/mixed; boundary=b',
        400,
        'BATCH_SYNTAX',
      ],
      [
        '--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b--',
        'multipart/mixed; boundary=b',
        400,
        'BATCH_SYNTAX',
      ],
      [
        '--b\r\nContent-Type: application/http\r\n\r\nnot a request line\r\n--b--',
        'multipart/mixed; boundary=b',
        400,
        'BATCH_SYNTAX',
      ],
      [
        '--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: multipart/mixed; boundary=d\r\n\r\n--d--\r\n--c--\r\n--b--',
        'multipart/mixed; boundary=b',
        400,
        'BATCH_LIMIT',
      ],
      [
        `{"requests":[],"pad":"${'x'.repeat(4 * 1024 * 1024)}"}`,
        'application/json',
        413,
        'BATCH_TOO_LARGE',
      ],
    ];
    for (const [body, type, status, code] of cases) {
      const answer = await batch(body, type);
      expect([answer.status, JSON.parse(answer.text).error.code]).toEqual([status, code]);
    }
    // Inside a change set: a request the batch cannot turn into a write is that request's 400.
    const inner = await json([
      { id: '1', method: 'POST', url: 'orders(1)', body: {}, atomicityGroup: 'g' },
      { id: '2', method: 'PATCH', url: '$1', body: {}, atomicityGroup: 'h' },
      { id: '3', method: 'GET', url: '$batch' },
      { id: '4', method: 'PATCH', url: 'orders', body: {} },
      { id: '5', method: 'POST', url: '/table/orders/create', body: {} },
    ]);
    expect(
      JSON.parse(inner.text).responses.map(
        (r: { status: number; body: { error: { code: string } } }) => [r.status, r.body.error.code],
      ),
    ).toEqual([
      [400, 'BATCH_SYNTAX'],
      [400, 'BATCH_SYNTAX'],
      [400, 'BATCH_SYNTAX'],
      [400, 'BATCH_SYNTAX'],
      [400, 'BATCH_SYNTAX'],
    ]);
  });
});

describe('deep insert through the service', () => {
  test('POST /odata/orders with order_items creates both in one transaction', async () => {
    const id = await nextId('orders');
    const response = await fetch(`${gw.url}/odata/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ note: 'svc', order_items: [{ sku: 'S1' }, { sku: 'S2' }] }),
    });
    expect(response.status).toBe(201);
    const [items] = await db.admin.query(
      'SELECT sku FROM order_items WHERE order_id = ? ORDER BY id',
      [id],
    );
    expect(items).toEqual([{ sku: 'S1' }, { sku: 'S2' }]);
  });

  test('related rows are read as entities of their set: OData names, annotations, Edm forms', async () => {
    const note = { the_x0020_text: 'hi', 'the_x0020_text@odata.type': '#String', bin: '-_8=' };
    const alone = await fetch(`${gw.url}/odata/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Prefer: 'return=minimal' },
      body: JSON.stringify({ note: 'alone', order_notes: [note] }),
    });
    expect(alone.status).toBe(204);
    const answer = await json([
      {
        id: 'c',
        method: 'POST',
        url: 'orders',
        headers: { prefer: 'return=minimal' },
        body: { note: 'batch', order_notes: [{ ...note, the_x0020_text: 'ho' }] },
      },
    ]);
    expect(JSON.parse(answer.text).responses.map((r: { status: number }) => r.status)).toEqual([
      204,
    ]);
    const [rows] = await db.admin.query(
      'SELECT o.note, n.`the text` AS text, HEX(n.bin) AS bin FROM order_notes n JOIN orders o ON o.id = n.order_id ORDER BY n.id',
    );
    expect(rows).toEqual([
      { note: 'alone', text: 'hi', bin: 'FBFF' },
      { note: 'batch', text: 'ho', bin: 'FBFF' },
    ]);
  });
});

describe('writes in a batch are read as alone', () => {
  async function kinds(ids: number[]): Promise<unknown[]> {
    const [rows] = await db.admin.query(
      'SELECT id, at, price, big, doc, HEX(bin) AS bin, label FROM kinds WHERE id IN (?) ORDER BY id',
      [ids],
    );
    return rows as unknown[];
  }

  test('PUT replaces (left-out columns NULL), PATCH merges, as PUT and PATCH alone', async () => {
    await db.admin.query(
      `INSERT INTO kinds VALUES (1, '2024-01-01 00:00:00', 1.00, 5, '[1]', X'01', 'one'),
        (2, '2024-01-01 00:00:00', 1.00, 5, '[1]', X'01', 'two')`,
    );
    const alone = await fetch(`${gw.url}/odata/kinds(1)`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ label: 'put' }),
    });
    expect(alone.status).toBe(204);
    const answer = await json([
      { id: 'p', method: 'PUT', url: 'kinds(2)', body: { label: 'put' }, atomicityGroup: 'g' },
      { id: 'm', method: 'PATCH', url: 'kinds(2)', body: { price: 7 }, atomicityGroup: 'g' },
    ]);
    expect(JSON.parse(answer.text)).toEqual({
      responses: [
        { id: 'p', status: 204, headers: {} },
        { id: 'm', status: 204, headers: {} },
      ],
    });
    expect(await kinds([1, 2])).toEqual([
      { id: 1, at: null, price: null, big: null, doc: null, bin: null, label: 'put' },
      { id: 2, at: null, price: '7.00', big: null, doc: null, bin: null, label: 'put' },
    ]);
  });

  test('Edm forms in a body: DateTimeOffset, Decimal and Int64 as strings, Binary, JSON', async () => {
    const entity = {
      at: '2024-06-01T12:30:00Z',
      price: '12.34',
      big: '9007199254740993',
      doc: '{"a":[1]}',
      bin: '-_8=',
      label: 'edm',
    };
    const type = 'application/json;IEEE754Compatible=true';
    const alone = await fetch(`${gw.url}/odata/kinds`, {
      method: 'POST',
      headers: { 'Content-Type': type, Prefer: 'return=minimal' },
      body: JSON.stringify({ id: 10, ...entity }),
    });
    expect(alone.status).toBe(204);
    const answer = await json([
      {
        id: 'c',
        method: 'POST',
        url: 'kinds',
        headers: { 'content-type': type, prefer: 'return=minimal' },
        body: { id: 11, ...entity },
      },
      {
        id: 'u',
        method: 'PATCH',
        url: 'kinds(11)',
        headers: { 'content-type': type },
        body: { bin: '_-8=', doc: '[true]' },
      },
    ]);
    expect(JSON.parse(answer.text).responses.map((r: { status: number }) => r.status)).toEqual([
      204, 204,
    ]);
    const stored = {
      at: '2024-06-01 12:30:00',
      price: '12.34',
      big: '9007199254740993',
      label: 'edm',
    };
    const rows = await kinds([10, 11]);
    expect(rows).toEqual([
      { id: 10, ...stored, doc: { a: [1] }, bin: 'FBFF' },
      { id: 11, ...stored, doc: [true], bin: 'FFEF' },
    ]);
  });
});

describe('keys in a batch are read as the URL alone reads them', () => {
  const patch = (url: string, body: unknown) =>
    fetch(`${gw.url}/odata/${url}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  test('a set keyed by a unique key (its primary key is binary): PATCH, PUT, DELETE, POST with Location', async () => {
    // Alone, the set is served by its unique key.
    expect((await patch("codes('A-1')", { v: 5 })).status).toBe(204);
    const answer = await json([
      { id: 'u', method: 'PATCH', url: "codes('A-1')", body: { v: 10 }, atomicityGroup: 'g' },
      { id: 'p', method: 'PUT', url: "/odata/codes('A-1')", body: { v: 11 }, atomicityGroup: 'g' },
      { id: 'd', method: 'DELETE', url: "codes('B-2')", atomicityGroup: 'g' },
      {
        id: 'c',
        method: 'POST',
        url: 'codes',
        body: { id: 'Aw==', code: 'C 3', v: 3 },
        atomicityGroup: 'g',
      },
    ]);
    const base = `${gw.url}/odata/`;
    expect(JSON.parse(answer.text)).toEqual({
      responses: [
        { id: 'u', status: 204, headers: {} },
        { id: 'p', status: 204, headers: {} },
        { id: 'd', status: 204, headers: {} },
        {
          id: 'c',
          status: 201,
          headers: {
            location: `${base}codes('C%203')`,
            'content-type': 'application/json;odata.metadata=minimal',
          },
          body: {
            '@odata.context': `${base}$metadata#codes/$entity`,
            id: 'Aw==',
            code: 'C 3',
            v: 3,
          },
        },
      ],
    });
    const [rows] = await db.admin.query('SELECT code, v FROM codes ORDER BY code');
    expect(rows).toEqual([
      { code: 'A-1', v: 11 },
      { code: 'C 3', v: 3 },
    ]);
  });

  test('a composite key by its OData names, not its columns’ names; a reference to one', async () => {
    const key = "zip_x0020_code=12345,area_x0020_x='s'";
    expect((await patch(`zips(${key})`, { v: 21 })).status).toBe(204);
    const byColumns = "zips(zip%20code=12345,area%20x='s')";
    const alone = await patch(byColumns, { v: 0 });
    const refused = {
      error: {
        code: 'INVALID_QUERY',
        message:
          "The key of 'zips' is (zip_x0020_code=…,area_x0020_x=…); 'zip_x0020_code' is missing",
      },
    };
    expect(alone.status).toBe(400);
    expect(await alone.json()).toEqual(refused);
    const answer = await json([
      { id: 'u', method: 'PATCH', url: `zips(${key})`, body: { v: 22 } },
      { id: 'x', method: 'PATCH', url: byColumns, body: { v: 0 } },
      {
        id: '1',
        method: 'POST',
        url: 'zips',
        body: { zip_x0020_code: 99999, area_x0020_x: 'w', v: 1 },
        atomicityGroup: 'g',
      },
      {
        id: '2',
        method: 'PATCH',
        url: '$1',
        body: { v: 2 },
        atomicityGroup: 'g',
        dependsOn: ['1'],
      },
    ]);
    const base = `${gw.url}/odata/`;
    expect(JSON.parse(answer.text)).toEqual({
      responses: [
        { id: 'u', status: 204, headers: {} },
        { id: 'x', status: 400, headers: { 'content-type': 'application/json' }, body: refused },
        {
          id: '1',
          status: 201,
          headers: {
            location: `${base}zips(zip_x0020_code=99999,area_x0020_x='w')`,
            'content-type': 'application/json;odata.metadata=minimal',
          },
          body: {
            '@odata.context': `${base}$metadata#zips/$entity`,
            zip_x0020_code: 99999,
            area_x0020_x: 'w',
            v: 1,
          },
        },
        { id: '2', status: 204, headers: {} },
      ],
    });
    const [rows] = await db.admin.query(
      'SELECT `zip code` AS z, `area x` AS a, v FROM zips ORDER BY z, a',
    );
    expect(rows).toEqual([
      { z: 12345, a: 'n', v: 1 },
      { z: 12345, a: 's', v: 22 },
      { z: 99999, a: 'w', v: 2 },
    ]);
  });
});

describe('instance annotations in a body', () => {
  test('a property’s annotations are ignored, alone and in a batch; <nav>@odata.bind is refused', async () => {
    const annotated = {
      'note@odata.type': '#String',
      note: 'uno',
      'note@com.example.origin': 'form',
      '@odata.type': '#tablegate.orders',
    };
    const alone = await fetch(`${gw.url}/odata/orders(1)`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(annotated),
    });
    expect(alone.status).toBe(204);
    const bind = {
      error: {
        code: 'ODATA_UNSUPPORTED',
        message:
          "The annotation 'order_items@odata.bind' is not served: write the foreign key's properties instead (docs/odata.md)",
      },
    };
    const answer = await json([
      { id: 'u', method: 'PATCH', url: 'orders(2)', body: { ...annotated, note: 'dos' } },
      {
        id: 'b',
        method: 'POST',
        url: 'orders',
        body: { 'order_items@odata.bind': ['order_items(1)'] },
      },
    ]);
    expect(JSON.parse(answer.text)).toEqual({
      responses: [
        { id: 'u', status: 204, headers: {} },
        { id: 'b', status: 400, headers: { 'content-type': 'application/json' }, body: bind },
      ],
    });
    expect((await orders()).slice(0, 2)).toEqual([
      { id: 1, note: 'uno' },
      { id: 2, note: 'dos' },
    ]);
    await db.admin.query("UPDATE orders SET note = IF(id = 1, 'one', 'two') WHERE id IN (1, 2)");
  });
});

describe('Content-ID references in a change set', () => {
  test('JSON: $1 names the entity created earlier: POST $1/<navigation>, PATCH $1', async () => {
    const id = await nextId('orders');
    const item = await nextId('order_items');
    const answer = await json([
      { id: '1', method: 'POST', url: 'orders', body: { note: 'ref' }, atomicityGroup: 'g' },
      {
        id: '2',
        method: 'POST',
        url: '$1/order_items',
        body: { sku: 'R1' },
        atomicityGroup: 'g',
        dependsOn: ['1'],
      },
      {
        id: '3',
        method: 'PATCH',
        url: '$1',
        body: { note: 'ref!' },
        atomicityGroup: 'g',
        dependsOn: ['1'],
      },
    ]);
    const base = `${gw.url}/odata/`;
    expect(JSON.parse(answer.text)).toEqual({
      responses: [
        {
          id: '1',
          status: 201,
          headers: {
            location: `${base}orders(${id})`,
            'content-type': 'application/json;odata.metadata=minimal',
          },
          body: { '@odata.context': `${base}$metadata#orders/$entity`, id, note: 'ref' },
        },
        {
          id: '2',
          status: 201,
          headers: {
            location: `${base}order_items(${item})`,
            'content-type': 'application/json;odata.metadata=minimal',
          },
          body: {
            '@odata.context': `${base}$metadata#order_items/$entity`,
            id: item,
            order_id: id,
            sku: 'R1',
          },
        },
        { id: '3', status: 204, headers: {} },
      ],
    });
    const [rows] = await db.admin.query('SELECT note FROM orders WHERE id = ?', [id]);
    expect(rows).toEqual([{ note: 'ref!' }]);
    const [items] = await db.admin.query('SELECT order_id, sku FROM order_items WHERE id = ?', [
      item,
    ]);
    expect(items).toEqual([{ order_id: id, sku: 'R1' }]);
  });

  test('unknown, forward and undeclared references are 400 BATCH_SYNTAX; nothing is written', async () => {
    const before = await orders();
    // The requests, the one whose 400 answers the set, and its message.
    const cases: [unknown[], string, string][] = [
      [
        [
          { id: 'a', method: 'POST', url: 'orders', body: { note: 'x' }, atomicityGroup: 'g' },
          { id: 'b', method: 'PATCH', url: '$9', body: { note: 'y' }, atomicityGroup: 'g' },
        ],
        'b',
        "'$9' names no earlier request of this change set: a reference names a POST before it in the same change set",
      ],
      [
        [
          { id: 'a', method: 'PATCH', url: '$b', body: { note: 'y' }, atomicityGroup: 'g' },
          { id: 'b', method: 'POST', url: 'orders', body: { note: 'x' }, atomicityGroup: 'g' },
        ],
        'a',
        "'$b' names no earlier request of this change set: a reference names a POST before it in the same change set",
      ],
      [
        [
          { id: 'a', method: 'POST', url: 'orders', body: { note: 'x' }, atomicityGroup: 'g' },
          { id: 'b', method: 'PATCH', url: '$a', body: { note: 'y' }, atomicityGroup: 'g' },
        ],
        'b',
        `A request that names '$a' must list 'a' in its "dependsOn"`,
      ],
      [
        [
          { id: 'a', method: 'PATCH', url: 'orders(1)', body: { note: 'x' }, atomicityGroup: 'g' },
          {
            id: 'b',
            method: 'DELETE',
            url: '$a',
            atomicityGroup: 'g',
            dependsOn: ['a'],
          },
        ],
        'b',
        "'$a' names a request that creates no entity: only a POST's can be named",
      ],
    ];
    for (const [requests, id, message] of cases) {
      expect(JSON.parse((await json(requests)).text)).toEqual({
        responses: [
          {
            id,
            status: 400,
            headers: { 'content-type': 'application/json' },
            body: { error: { code: 'BATCH_SYNTAX', message } },
          },
        ],
      });
    }
    expect(await orders()).toEqual(before);
  });

  test('multipart: Content-ID 1 and 2 named by later parts of the change set', async () => {
    const id = await nextId('orders');
    const item = await nextId('order_items');
    const body = [
      '--b',
      'Content-Type: multipart/mixed; boundary=cs',
      '',
      '--cs',
      'Content-Type: application/http',
      'Content-ID: 1',
      '',
      'POST orders HTTP/1.1',
      'Content-Type: application/json',
      'Prefer: return=minimal',
      '',
      '{"note":"mref"}',
      '--cs',
      'Content-Type: application/http',
      'Content-ID: 2',
      '',
      'POST $1/order_items HTTP/1.1',
      'Content-Type: application/json',
      'Prefer: return=minimal',
      '',
      '{"sku":"M1"}',
      '--cs',
      'Content-Type: application/http',
      'Content-ID: 3',
      '',
      'DELETE $2 HTTP/1.1',
      '',
      '',
      '--cs--',
      '--b--',
      '',
    ].join('\r\n');
    const answer = await batch(body, 'multipart/mixed; boundary=b');
    const outer = /boundary=(batchresponse_[0-9a-f]+)/.exec(
      answer.headers.get('content-type') as string,
    )?.[1] as string;
    const inner = /boundary=(changesetresponse_[0-9a-f]+)/.exec(answer.text)?.[1] as string;
    const base = `${gw.url}/odata/`;
    const part = (contentId: string, lines: string[]) => [
      `--${inner}`,
      'Content-Type: application/http',
      'Content-Transfer-Encoding: binary',
      `Content-ID: ${contentId}`,
      '',
      ...lines,
      '',
      '',
    ];
    expect(answer.text).toBe(
      [
        `--${outer}`,
        `Content-Type: multipart/mixed; boundary=${inner}`,
        '',
        ...part('1', [
          'HTTP/1.1 204 No Content',
          `location: ${base}orders(${id})`,
          `odata-entityid: ${base}orders(${id})`,
        ]),
        ...part('2', [
          'HTTP/1.1 204 No Content',
          `location: ${base}order_items(${item})`,
          `odata-entityid: ${base}order_items(${item})`,
        ]),
        ...part('3', ['HTTP/1.1 204 No Content']),
        `--${inner}--`,
        `--${outer}--`,
        '',
      ].join('\r\n'),
    );
    const [rows] = await db.admin.query('SELECT note FROM orders WHERE id = ?', [id]);
    expect(rows).toEqual([{ note: 'mref' }]);
    const [items] = await db.admin.query('SELECT id FROM order_items WHERE id = ?', [item]);
    expect(items).toEqual([]);
  });
});

describe('reads in a batch answer with the batch’s own host', () => {
  /** A request with a Host of its own (fetch may not set one). */
  function hosted(
    method: string,
    url: string,
    headers: Record<string, string>,
    body = '',
  ): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const sent = http.request(`${gw.url}${url}`, { method, headers }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      });
      sent.on('error', reject);
      sent.end(body);
    });
  }

  test('@odata.context and @odata.nextLink name the outer Host, as the read alone', async () => {
    const host = 'gw.example:8443';
    const prefer = 'odata.maxpagesize=1';
    const alone = await hosted('GET', '/odata/orders?$select=id', { host, prefer });
    const answer = await hosted(
      'POST',
      '/odata/$batch',
      { host, 'content-type': 'application/json' },
      JSON.stringify({
        requests: [
          { id: 'r', method: 'GET', url: 'orders?$select=id', headers: { prefer } },
          { id: 'k', method: 'GET', url: 'orders(1)?$select=note' },
        ],
      }),
    );
    expect(answer.status).toBe(200);
    const [page, entity] = JSON.parse(answer.text).responses;
    const expected = JSON.parse(alone.text);
    expect(expected['@odata.context']).toBe(`http://${host}/odata/$metadata#orders(id)`);
    expect(expected['@odata.nextLink']).toMatch(
      new RegExp(`^http://${host.replace('.', '\\.')}/odata/orders\\?\\$select=id&\\$skiptoken=`),
    );
    expect(page.body).toEqual(expected);
    expect(entity.body).toEqual({
      '@odata.context': `http://${host}/odata/$metadata#orders/$entity`,
      '@odata.etag': entity.headers.etag,
      note: 'one',
    });
  });
});

describe('multipart/mixed batch (OData 4.0)', () => {
  test('a change set and a read, answered in a mirroring multipart; a failed set is one response', async () => {
    const id = await nextId('orders');
    const body = [
      '--batch_1',
      'Content-Type: multipart/mixed; boundary=changeset_1',
      '',
      '--changeset_1',
      'Content-Type: application/http',
      'Content-Transfer-Encoding: binary',
      'Content-ID: 1',
      '',
      'POST orders HTTP/1.1',
      'Content-Type: application/json',
      '',
      '{"note":"mp"}',
      '--changeset_1',
      'Content-Type: application/http',
      'Content-ID: 2',
      '',
      'DELETE orders(2) HTTP/1.1',
      '',
      '',
      '--changeset_1--',
      '--batch_1',
      'Content-Type: multipart/mixed; boundary=changeset_2',
      '',
      '--changeset_2',
      'Content-Type: application/http',
      'Content-ID: 3',
      '',
      'POST orders HTTP/1.1',
      'Content-Type: application/json',
      '',
      '{"note":"gone"}',
      '--changeset_2',
      'Content-Type: application/http',
      'Content-ID: 4',
      '',
      'PATCH orders(1) HTTP/1.1',
      'Content-Type: application/json',
      '',
      '{"nope":1}',
      '--changeset_2--',
      '--batch_1--',
      '',
    ].join('\r\n');
    const answer = await batch(body, 'multipart/mixed; boundary=batch_1');
    expect(answer.status).toBe(200);
    const type = answer.headers.get('content-type') as string;
    const outer = /boundary=(batchresponse_[0-9a-f]+)/.exec(type)?.[1] as string;
    const inner = /boundary=(changesetresponse_[0-9a-f]+)/.exec(answer.text)?.[1] as string;
    const base = `${gw.url}/odata/`;
    expect(answer.text).toBe(
      [
        `--${outer}`,
        `Content-Type: multipart/mixed; boundary=${inner}`,
        '',
        `--${inner}`,
        'Content-Type: application/http',
        'Content-Transfer-Encoding: binary',
        'Content-ID: 1',
        '',
        'HTTP/1.1 201 Created',
        `location: ${base}orders(${id})`,
        'content-type: application/json;odata.metadata=minimal',
        '',
        `{"@odata.context":"${base}$metadata#orders/$entity","id":${id},"note":"mp"}`,
        `--${inner}`,
        'Content-Type: application/http',
        'Content-Transfer-Encoding: binary',
        'Content-ID: 2',
        '',
        'HTTP/1.1 204 No Content',
        '',
        '',
        `--${inner}--`,
        `--${outer}`,
        'Content-Type: application/http',
        'Content-Transfer-Encoding: binary',
        'Content-ID: 4',
        '',
        'HTTP/1.1 400 Bad Request',
        'content-type: application/json',
        '',
        JSON.stringify({
          error: {
            code: 'UNKNOWN_COLUMN',
            message: "Column 'nope' does not exist in table 'orders': did you mean 'note'?",
          },
        }),
        `--${outer}--`,
        '',
      ].join('\r\n'),
    );
    // The first set stored, the second not.
    const [kept] = await db.admin.query('SELECT id FROM orders WHERE id IN (1, 2)');
    expect(kept).toEqual([{ id: 1 }]);
    const [rows] = await db.admin.query("SELECT note FROM orders WHERE note IN ('gone', 'mp')");
    expect(rows).toEqual([{ note: 'mp' }]);
  });
});

describe('If-Match in a batch', () => {
  const stale = (table: string) => ({
    error: {
      code: 'PRECONDITION_FAILED',
      message: `The row of '${table}' no longer has the ETag given in If-Match (it changed, or is gone): nothing was changed; read it again with read(<key>,<value>)`,
    },
  });
  const tagOf = async (url: string) => {
    const response = await fetch(`${gw.url}/odata/${url}`);
    expect(response.status).toBe(200);
    return response.headers.get('etag') as string;
  };
  const notes = async (ids: number[]) => {
    const [rows] = await db.admin.query('SELECT id, note FROM orders WHERE id IN (?) ORDER BY id', [
      ids,
    ]);
    return rows as unknown[];
  };

  test('JSON: a stale tag in a change set is its 412 and nothing of the set is written; alone, only that request fails', async () => {
    await db.admin.query(
      "INSERT INTO orders VALUES (101, 'a'), (102, 'b'), (103, 'c'); INSERT INTO pairs VALUES (7, 'k', 70)",
    );
    const [t101, t102, t103] = [
      await tagOf('orders(101)'),
      await tagOf('orders(102)'),
      await tagOf('orders(103)'),
    ];
    const tPair = await tagOf("pairs(a=7,b='k')");
    await db.admin.query("UPDATE orders SET note = 'b2' WHERE id = 102");
    const before = await notes([101, 102, 103]);
    const answer = await json([
      {
        id: 'p1',
        method: 'PATCH',
        url: 'orders(101)',
        headers: { 'If-Match': t101 },
        body: { note: 'a!' },
        atomicityGroup: 'g',
      },
      {
        id: 'p2',
        method: 'PATCH',
        url: "pairs(a=7,b='k')",
        headers: { 'if-match': tPair },
        body: { v: 71 },
        atomicityGroup: 'g',
      },
      {
        id: 'p3',
        method: 'DELETE',
        url: 'orders(102)',
        headers: { 'if-match': t102 },
        atomicityGroup: 'g',
      },
    ]);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({
      responses: [
        {
          id: 'p3',
          status: 412,
          headers: { 'content-type': 'application/json' },
          body: stale('orders'),
        },
      ],
    });
    expect(await notes([101, 102, 103])).toEqual(before);
    const [pair] = await db.admin.query('SELECT v FROM pairs WHERE a = 7');
    expect(pair).toEqual([{ v: 70 }]);

    // Outside a change set each write is its own: the stale one fails alone.
    const alone = await json([
      {
        id: 's1',
        method: 'PATCH',
        url: 'orders(102)',
        headers: { 'if-match': t102 },
        body: { note: 'x' },
      },
      {
        id: 's2',
        method: 'PATCH',
        url: 'orders(101)',
        headers: { 'if-match': t101 },
        body: { note: 'a!' },
      },
      {
        id: 's3',
        method: 'PUT',
        url: "pairs(a=7,b='k')",
        headers: { 'if-match': tPair },
        body: { v: 72 },
      },
      { id: 's4', method: 'DELETE', url: 'orders(999)', headers: { 'if-match': '*' } },
      { id: 's5', method: 'DELETE', url: 'orders(103)', headers: { 'if-match': `"x", ${t103}` } },
    ]);
    expect(alone.status).toBe(200);
    const responses = (
      JSON.parse(alone.text) as { responses: { id: string; status: number; body?: unknown }[] }
    ).responses;
    expect(responses.map((r) => [r.id, r.status])).toEqual([
      ['s1', 412],
      ['s2', 204],
      ['s3', 204],
      ['s4', 412],
      ['s5', 204],
    ]);
    expect(responses[0]?.body).toEqual(stale('orders'));
    expect(responses[3]?.body).toEqual(stale('orders'));
    expect(await notes([101, 102, 103])).toEqual([
      { id: 101, note: 'a!' },
      { id: 102, note: 'b2' },
    ]);
    const [pairAfter] = await db.admin.query('SELECT v FROM pairs WHERE a = 7');
    expect(pairAfter).toEqual([{ v: 72 }]);
  });

  test('multipart: a stale tag fails its change set (one response, nothing written); a single part alone', async () => {
    await db.admin.query("INSERT INTO orders VALUES (111, 'm1'), (112, 'm2')");
    const t111 = await tagOf('orders(111)');
    const t112 = await tagOf('orders(112)');
    await db.admin.query("UPDATE orders SET note = 'm2!' WHERE id = 112");
    const before = await notes([111, 112]);
    const part = (id: string, line: string, tag: string, body?: string) => [
      'Content-Type: application/http',
      `Content-ID: ${id}`,
      '',
      line,
      `If-Match: ${tag}`,
      ...(body === undefined ? ['', ''] : ['Content-Type: application/json', '', body]),
    ];
    const text = [
      '--batch_m',
      'Content-Type: multipart/mixed; boundary=cs_m',
      '',
      '--cs_m',
      ...part('1', 'PATCH orders(111) HTTP/1.1', t111, '{"note":"m1!"}'),
      '--cs_m',
      ...part('2', 'DELETE orders(112) HTTP/1.1', t112),
      '--cs_m--',
      '--batch_m',
      ...part('3', 'PATCH orders(112) HTTP/1.1', t112, '{"note":"no"}'),
      '--batch_m',
      ...part('4', 'PATCH orders(111) HTTP/1.1', t111, '{"note":"m1?"}'),
      '--batch_m--',
      '',
    ].join('\r\n');
    const answer = await batch(text, 'multipart/mixed; boundary=batch_m');
    expect(answer.status).toBe(200);
    const outer = /boundary=(batchresponse_[0-9a-f]+)/.exec(
      answer.headers.get('content-type') as string,
    )?.[1] as string;
    const failed = (id: string | null) =>
      [
        'Content-Type: application/http',
        'Content-Transfer-Encoding: binary',
        ...(id === null ? [] : [`Content-ID: ${id}`]),
        '',
        'HTTP/1.1 412 Precondition Failed',
        'content-type: application/json',
        '',
        JSON.stringify(stale('orders')),
      ].join('\r\n');
    expect(answer.text).toBe(
      [
        `--${outer}`,
        failed('2'),
        `--${outer}`,
        failed(null),
        `--${outer}`,
        'Content-Type: application/http',
        'Content-Transfer-Encoding: binary',
        '',
        'HTTP/1.1 204 No Content',
        '',
        '',
        `--${outer}--`,
        '',
      ].join('\r\n'),
    );
    expect(before).toEqual([
      { id: 111, note: 'm1' },
      { id: 112, note: 'm2!' },
    ]);
    expect(await notes([111, 112])).toEqual([
      { id: 111, note: 'm1?' },
      { id: 112, note: 'm2!' },
    ]);
  });
});

describe('a write in a batch is refused as alone', () => {
  async function alone(method: string, url: string, body?: unknown) {
    const response = await fetch(`${gw.url}/odata/${url}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: JSON.parse(await response.text()) as unknown };
  }

  test('a path past the entity, a set name whose escapes are not the rule, an unknown property, the service document or $metadata: the same status and error', async () => {
    const before = await orders();
    const cases: [string, string, unknown][] = [
      ['PATCH', 'orders(1)/note', { note: 'x' }],
      ['PUT', 'orders(1)/note', { note: 'x' }],
      ['DELETE', 'orders(1)/note', undefined],
      ['POST', 'orders/$count', { note: 'x' }],
      ['PATCH', 'a_x0041_b(1)/note', { note: 'x' }],
      ['POST', 'a_x0041_b', { note: 'x' }],
      ['POST', 'nosuch', { note: 'x' }],
      ['POST', 'bad_xD800_', { note: 'x' }],
      ['POST', 'order-items', { sku: 'x' }],
      ['POST', 'orders', { nope: 1 }],
      ['POST', 'orders', { a_x0041_b: 1 }],
      ['PATCH', 'orders(1)', { _x0032_x: 1 }],
      // The service's own documents take GET alone (a reference names `$<id>`, not these).
      ['PATCH', '$metadata', { note: 'x' }],
      ['DELETE', '$metadata', undefined],
      ['POST', '', { note: 'x' }],
    ];
    for (const [method, url, body] of cases) {
      const single = await alone(method, url, body);
      expect(single.status).toBeGreaterThanOrEqual(400);
      const answer = await json([
        { id: '1', method, url, ...(body === undefined ? {} : { body }) },
      ]);
      const [response] = (
        JSON.parse(answer.text) as { responses: { status: number; body: unknown }[] }
      ).responses;
      expect([method, url, response?.status, response?.body]).toEqual([
        method,
        url,
        single.status,
        single.body,
      ]);
    }
    // The 404 of a path past the entity, exactly.
    expect(await alone('PATCH', 'orders(1)/note', { note: 'x' })).toEqual({
      status: 404,
      body: { error: { code: 'NOT_FOUND', message: 'No route for PATCH /odata/orders(1)/note' } },
    });
    expect(await alone('PATCH', '$metadata', { note: 'x' })).toEqual({
      status: 404,
      body: { error: { code: 'NOT_FOUND', message: 'No route for PATCH /odata/$metadata' } },
    });
    // In a change set it fails the set; in multipart the same.
    const set = await json([
      { id: 'a', method: 'PATCH', url: 'orders(2)', body: { note: 'two!' }, atomicityGroup: 'g' },
      {
        id: 'b',
        method: 'PATCH',
        url: '/odata/orders(1)/note',
        body: { note: 'x' },
        atomicityGroup: 'g',
      },
    ]);
    expect(JSON.parse(set.text)).toEqual({
      responses: [
        {
          id: 'b',
          status: 404,
          headers: { 'content-type': 'application/json' },
          body: {
            error: { code: 'NOT_FOUND', message: 'No route for PATCH /odata/orders(1)/note' },
          },
        },
      ],
    });
    const multipart = await batch(
      [
        '--b1',
        'Content-Type: application/http',
        '',
        'PATCH orders(1)/note HTTP/1.1',
        'Content-Type: application/json',
        '',
        '{"note":"x"}',
        '--b1--',
        '',
      ].join('\r\n'),
      'multipart/mixed; boundary=b1',
    );
    expect(multipart.text).toContain('HTTP/1.1 404 Not Found');
    expect(multipart.text).toContain(
      JSON.stringify({
        error: { code: 'NOT_FOUND', message: 'No route for PATCH /odata/orders(1)/note' },
      }),
    );
    expect(await orders()).toEqual(before);
  });
});

describe('an action import in a batch', () => {
  test('outside a change set it is called as alone; inside one it is refused and the set writes nothing', async () => {
    const before = await orders();
    const alone = await fetch(`${gw.url}/odata/hello`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ who: 'me' }),
    });
    const aloneBody = JSON.parse(await alone.text()) as unknown;
    expect([alone.status, aloneBody]).toEqual([
      200,
      { results: [[{ greeting: 'hi me' }]], out: {} },
    ]);
    const single = await json([{ id: '1', method: 'POST', url: 'hello', body: { who: 'me' } }]);
    const [called] = (
      JSON.parse(single.text) as { responses: { id: string; status: number; body: unknown }[] }
    ).responses;
    expect([called?.id, called?.status, called?.body]).toEqual(['1', 200, aloneBody]);

    const set = await json([
      { id: 'a', method: 'PATCH', url: 'orders(2)', body: { note: 'two?' }, atomicityGroup: 'g' },
      { id: 'b', method: 'POST', url: 'hello', body: { who: 'me' }, atomicityGroup: 'g' },
    ]);
    expect(JSON.parse(set.text)).toEqual({
      responses: [
        {
          id: 'b',
          status: 400,
          headers: { 'content-type': 'application/json' },
          body: {
            error: {
              code: 'ODATA_UNSUPPORTED',
              message:
                "'hello' is an action: it runs as a call of its own, outside any transaction of a change set; send it outside the change set",
            },
          },
        },
      ],
    });
    expect(await orders()).toEqual(before);
  });
});
