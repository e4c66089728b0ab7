/**
 * The OData v4 service (docs/odata.md) over HTTP against a real gateway: the service document
 * and `$metadata` (validated by the OASIS odata-csdl converter, and per role), reads with every
 * system query option, server-driven paging followed to the end, key, navigation, property and
 * `$count` reads, writes, function and action imports, and errors in OData's form with REST's
 * statuses and codes — beside the REST request of the same decision where there is one.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
// @ts-expect-error: odata-csdl ships no types
import csdl from 'odata-csdl';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { signUpAs, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const FIXTURE = `
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, \`zip code\` CHAR(5) NULL,
  secret VARCHAR(10) NULL);
CREATE TABLE orders (id BIGINT PRIMARY KEY, customer_id INT NOT NULL, total DECIMAL(10,2) NOT NULL,
  placed DATETIME NOT NULL, note JSON NULL, photo BLOB NULL, big BIGINT NULL,
  FOREIGN KEY (customer_id) REFERENCES customers(id));
CREATE TABLE \`order-items\` (order_id BIGINT NOT NULL, line INT NOT NULL, qty SMALLINT NOT NULL,
  PRIMARY KEY (order_id, line), FOREIGN KEY (order_id) REFERENCES orders(id));
CREATE TABLE logs (at DATETIME NOT NULL, msg TEXT NULL);
CREATE TABLE \`2fa\` (id INT PRIMARY KEY, größe INT NOT NULL);
INSERT INTO customers VALUES (1, 'Ann', '12345', 's1'), (2, 'Bob', NULL, 's2'), (3, 'Cy', '54321', NULL);
INSERT INTO orders VALUES
  (10, 1, 9.90, '2024-05-01 10:00:00', '{"a": 1}', X'fbff', 9007199254740993),
  (11, 2, 120.00, '2024-05-02 11:30:00', NULL, NULL, NULL),
  (12, 1, 5.00, '2024-05-03 08:15:00', NULL, NULL, 7);
INSERT INTO \`order-items\` VALUES (10, 1, 2), (10, 2, 3), (11, 1, 1);
INSERT INTO logs VALUES ('2024-01-01 00:00:00', 'hi');
INSERT INTO \`2fa\` VALUES (1, 40);
CREATE FUNCTION twice(n INT) RETURNS INT DETERMINISTIC RETURN n * 2;
CREATE PROCEDURE hello(IN who VARCHAR(20)) SELECT CONCAT('hi ', who) AS greeting;
`;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

let db: TestDatabase;
let gw: TestGateway;
let base: string;

async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; on?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${init.on ?? base}${url}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the text is the body
  }
  return { status: response.status, headers: response.headers, text, body };
}

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  gw = await startTestGateway(db.name);
  base = gw.url;
});

afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

/** A row's tag: the SHA-1 of its REST JSON, as REST's key read tags it (src/etag.ts). */
const rowTag = (json: string) => `"${createHash('sha1').update(json).digest('base64url')}"`;

const ctx = (fragment: string) => `${base}/odata/$metadata#${fragment}`;

describe('service document and $metadata', () => {
  test('the service document lists every set and function import, names mapped', async () => {
    const answer = await call('/odata/');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('odata-version')).toBe('4.0');
    expect(answer.headers.get('content-type')).toBe(
      'application/json;odata.metadata=minimal;IEEE754Compatible=false;charset=utf-8',
    );
    expect(answer.body).toEqual({
      '@odata.context': `${base}/odata/$metadata`,
      value: [
        { name: '_x0032_fa', kind: 'EntitySet', url: '_x0032_fa' },
        { name: 'customers', kind: 'EntitySet', url: 'customers' },
        { name: 'logs', kind: 'EntitySet', url: 'logs' },
        { name: 'order_x002D_items', kind: 'EntitySet', url: 'order_x002D_items' },
        { name: 'orders', kind: 'EntitySet', url: 'orders' },
        { name: 'twice', kind: 'FunctionImport', url: 'twice' },
      ],
    });
    expect((await call('/odata')).body).toEqual(answer.body);
  });

  test('$metadata is CSDL XML that odata-csdl reads, and its JSON form is the same model', async () => {
    const xml = await call('/odata/$metadata');
    expect(xml.status).toBe(200);
    expect(xml.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    expect(xml.headers.get('odata-version')).toBe('4.0');
    const converted = csdl.xml2json(xml.text, { strict: true });
    const json = await call('/odata/$metadata?$format=json');
    expect(json.status).toBe(200);
    expect(json.body).toEqual(converted);
    expect(
      (await call('/odata/$metadata', { headers: { accept: 'application/json' } })).body,
    ).toEqual(converted);
    const schema = (json.body as Record<string, Record<string, unknown>>).tablegate as Record<
      string,
      unknown
    >;
    expect(schema.orders).toEqual({
      $Kind: 'EntityType',
      $Key: ['id'],
      id: { $Type: 'Edm.Int64' },
      customer_id: { $Type: 'Edm.Int32' },
      total: { $Type: 'Edm.Decimal', $Precision: 10, $Scale: 2 },
      placed: { $Type: 'Edm.DateTimeOffset', $Precision: 0 },
      note: { $Nullable: true },
      photo: { $Type: 'Edm.Binary', $Nullable: true, $MaxLength: 65535 },
      big: { $Type: 'Edm.Int64', $Nullable: true },
      customer: {
        $Kind: 'NavigationProperty',
        $Type: 'tablegate.customers',
        $ReferentialConstraint: { customer_id: 'id' },
      },
      order_x002D_items: {
        $Kind: 'NavigationProperty',
        $Collection: true,
        $Type: 'tablegate.order_x002D_items',
      },
    });
    expect(schema.order_x002D_items).toMatchObject({ $Key: ['order_id', 'line'] });
    // No primary or unique key: its NOT NULL columns form the key (the set is read-only).
    expect(schema.logs).toMatchObject({ $Key: ['at'] });
    expect(schema._x0032_fa).toMatchObject({ $Key: ['id'], größe: { $Type: 'Edm.Int32' } });
    expect(schema.twice).toEqual([
      {
        $Kind: 'Function',
        $Parameter: [{ $Name: 'n', $Type: 'Edm.Int32', $Nullable: true }],
        $ReturnType: { $Type: 'Edm.Int32', $Nullable: true },
      },
    ]);
    expect(schema.Container).toMatchObject({
      orders: {
        $Collection: true,
        $Type: 'tablegate.orders',
        $NavigationPropertyBinding: {
          customer: 'customers',
          order_x002D_items: 'order_x002D_items',
        },
      },
      twice: { $Function: 'tablegate.twice', $IncludeInServiceDocument: true },
      hello: { $Action: 'tablegate.hello' },
    });
    const again = await call('/odata/$metadata', {
      headers: { 'if-none-match': xml.headers.get('etag') as string },
    });
    expect(again.status).toBe(304);
    // The list as RFC 9110 has it (query/entity-tags.ts): weak or not, among others, spaced.
    const etag = xml.headers.get('etag') as string;
    const opaque = etag.replace(/^W\//, '');
    for (const header of [`"other", ${etag}`, ` W/${opaque} `, `"a,b",${opaque}`, '*']) {
      const listed = await call('/odata/$metadata', { headers: { 'if-none-match': header } });
      expect([header, listed.status]).toEqual([header, 304]);
    }
    for (const header of ['"other"', `${etag}x`, `"other", *`, 'garbage']) {
      const other = await call('/odata/$metadata', { headers: { 'if-none-match': header } });
      expect([header, other.status]).toEqual([header, 200]);
    }
  });
});

describe('collection reads', () => {
  test('rows in Edm forms: DateTimeOffset, base64url, JSON as a string, Int64 exact', async () => {
    const answer = await call('/odata/orders?$filter=id eq 10');
    expect(answer.text).toBe(
      `{"@odata.context":${JSON.stringify(ctx('orders'))},"value":[{"id":10,"customer_id":1,"total":9.90,"placed":"2024-05-01T10:00:00Z","note":"{\\"a\\": 1}","photo":"-_8=","big":9007199254740993}]}`,
    );
  });

  test('IEEE754Compatible=true writes Int64 and Decimal as strings', async () => {
    const answer = await call('/odata/orders?$filter=id eq 10&$select=id,total,big', {
      headers: { accept: 'application/json;odata.metadata=minimal;IEEE754Compatible=true' },
    });
    expect(answer.headers.get('content-type')).toBe(
      'application/json;odata.metadata=minimal;IEEE754Compatible=true;charset=utf-8',
    );
    expect(answer.text).toBe(
      `{"@odata.context":${JSON.stringify(ctx('orders(id,total,big)'))},"value":[{"id":"10","total":"9.90","big":"9007199254740993"}]}`,
    );
  });

  test('$select, $filter and $orderby by mapped names; $count; $top and $skip', async () => {
    const answer = await call(
      '/odata/customers?$select=name,zip_x0020_code&$filter=zip_x0020_code ne null&$orderby=zip_x0020_code desc&$count=true',
    );
    expect(answer.body).toEqual({
      '@odata.context': ctx('customers(name,zip_x0020_code)'),
      '@odata.count': 2,
      value: [
        { name: 'Cy', zip_x0020_code: '54321' },
        { name: 'Ann', zip_x0020_code: '12345' },
      ],
    });
    const paged = await call('/odata/customers?$select=id&$orderby=id&$top=1&$skip=1');
    expect(paged.body).toEqual({ '@odata.context': ctx('customers(id)'), value: [{ id: 2 }] });
    const mapped = await call('/odata/_x0032_fa?$filter=größe gt 10');
    expect(mapped.body).toEqual({
      '@odata.context': ctx('_x0032_fa'),
      value: [{ id: 1, größe: 40 }],
    });
  });

  test('$expand with nested options, by navigation property', async () => {
    const answer = await call(
      '/odata/orders?$select=id&$filter=id eq 10&$expand=customer($select=name),order_x002D_items($select=line;$orderby=line desc;$top=1)',
    );
    expect(answer.body).toEqual({
      '@odata.context': ctx('orders(id)'),
      value: [{ id: 10, customer: { name: 'Ann' }, order_x002D_items: [{ line: 2 }] }],
    });
  });

  test('$apply', async () => {
    const answer = await call(
      '/odata/orders?$apply=groupby((customer_id),aggregate(total with sum as sum))&$orderby=customer_id',
    );
    expect(answer.body).toEqual({
      '@odata.context': ctx('orders'),
      value: [
        { customer_id: 1, sum: 14.9 },
        { customer_id: 2, sum: 120 },
      ],
    });
  });

  test('a page of totals links to the next only when a group follows it', async () => {
    const totals =
      '/odata/orders?$apply=groupby((customer_id),aggregate(total with sum as sum))&$orderby=customer_id';
    const groups = [
      { customer_id: 1, sum: 14.9 },
      { customer_id: 2, sum: 120 },
    ];
    const whole = await call(totals, { headers: { prefer: 'odata.maxpagesize=2' } });
    expect(whole.body).toEqual({ '@odata.context': ctx('orders'), value: groups });
    const prefer = { prefer: 'odata.maxpagesize=1' };
    const first = await call(totals, { headers: prefer });
    // The same request with $skip past the page, as URLSearchParams writes it.
    const link = `${base}/odata/orders?%24apply=groupby%28%28customer_id%29%2Caggregate%28total+with+sum+as+sum%29%29&%24orderby=customer_id&%24skip=1`;
    expect(first.body).toEqual({
      '@odata.context': ctx('orders'),
      value: [groups[0]],
      '@odata.nextLink': link,
    });
    const last = await call(link.slice(base.length), { headers: prefer });
    expect(last.body).toEqual({ '@odata.context': ctx('orders'), value: [groups[1]] });
  });

  test('server-driven paging: Prefer odata.maxpagesize, followed to the end', async () => {
    const prefer = { prefer: 'odata.maxpagesize=2' };
    const first = await call('/odata/orders?$select=id&$orderby=id desc', { headers: prefer });
    expect(first.headers.get('preference-applied')).toBe('odata.maxpagesize=2');
    const page = first.body as { value: unknown[]; '@odata.nextLink': string };
    expect(page.value).toEqual([{ id: 12 }, { id: 11 }]);
    expect(page['@odata.nextLink']).toMatch(
      new RegExp(`^${base}/odata/orders\\?\\$select=id&\\$orderby=id%20desc&\\$skiptoken=`),
    );
    const second = await call(page['@odata.nextLink'].slice(base.length), { headers: prefer });
    expect(second.body).toEqual({ '@odata.context': ctx('orders(id)'), value: [{ id: 10 }] });
    // A client's $top past the page is kept: the next link asks for what is left.
    const topped = await call('/odata/orders?$select=id&$orderby=id&$top=3', { headers: prefer });
    const link = (topped.body as { '@odata.nextLink': string })['@odata.nextLink'];
    expect(link).toContain('$top=1&');
    const rest = await call(link.slice(base.length), { headers: prefer });
    expect(rest.body).toEqual({ '@odata.context': ctx('orders(id)'), value: [{ id: 12 }] });
    // An edited token is refused as REST refuses it.
    const edited = await call(`${link.slice(base.length)}x`);
    expect(edited.status).toBe(400);
    expect(edited.body).toEqual({ error: { code: 'BAD_SKIPTOKEN', message: expect.any(String) } });
  });

  test('--odata-max-page pages every collection', async () => {
    const small = await startTestGateway(db.name, { odataMaxPage: 2 });
    try {
      const first = await call('/odata/customers?$select=id', { on: small.url });
      const page = first.body as { value: unknown[]; '@odata.nextLink'?: string };
      expect(page.value).toEqual([{ id: 1 }, { id: 2 }]);
      expect(first.headers.get('preference-applied')).toBeNull();
      const next = await call((page['@odata.nextLink'] as string).slice(small.url.length), {
        on: small.url,
      });
      expect((next.body as { value: unknown[] }).value).toEqual([{ id: 3 }]);
      expect(next.body).not.toHaveProperty(['@odata.nextLink']);
    } finally {
      await small.close();
    }
  });

  test('odata.metadata=full and none', async () => {
    const full = await call('/odata/customers?$select=id,name&$filter=id eq 1', {
      headers: { accept: 'application/json;odata.metadata=full' },
    });
    expect(full.body).toEqual({
      '@odata.context': ctx('customers(id,name)'),
      value: [
        {
          '@odata.type': '#tablegate.customers',
          '@odata.id': `${base}/odata/customers(1)`,
          '@odata.editLink': `${base}/odata/customers(1)`,
          id: 1,
          name: 'Ann',
        },
      ],
    });
    const none = await call(
      '/odata/customers?$select=id&$filter=id eq 1&$format=application/json;odata.metadata=none',
    );
    expect(none.text).toBe('{"value":[{"id":1}]}');
  });

  test('a collection, its $count and a to-many navigation carry a strong ETag of their bytes; If-None-Match is 304', async () => {
    await db.admin.query(
      "INSERT INTO customers VALUES (40, 'Tag', NULL, NULL), (41, 'Tog', NULL, NULL); INSERT INTO orders VALUES (40, 40, 1.00, '2024-06-01 00:00:00', NULL, NULL, NULL); INSERT INTO `order-items` VALUES (40, 1, 1), (40, 2, 2)",
    );
    const urls = [
      '/odata/customers?$filter=id ge 40&$select=id,name',
      '/odata/customers?$filter=id ge 40&$count=true',
      '/odata/customers/$count?$filter=id ge 40',
      '/odata/orders(40)/order_x002D_items',
      '/odata/orders(40)/order_x002D_items?$select=qty&$top=1',
    ];
    const tags: string[] = [];
    for (const url of urls) {
      const first = await call(url);
      expect(first.status).toBe(200);
      const tag = first.headers.get('etag') as string;
      // The SHA-1 of exactly the body, as REST's reads (src/etag.ts).
      expect(tag).toBe(rowTag(first.text));
      tags.push(tag);
      const same = await call(url, { headers: { 'if-none-match': tag } });
      expect(same.status).toBe(304);
      expect(same.text).toBe('');
      expect(same.headers.get('etag')).toBe(tag);
      expect(same.headers.get('odata-version')).toBe('4.0');
      for (const header of [`"other", ${tag}`, `W/${tag}`, '*']) {
        expect((await call(url, { headers: { 'if-none-match': header } })).status).toBe(304);
      }
      const other = await call(url, { headers: { 'if-none-match': '"other"' } });
      expect([other.status, other.text]).toEqual([200, first.text]);
    }
    expect(new Set(tags).size).toBe(urls.length);
    // A page with a next link: the link is in the bytes the tag covers.
    const paged = await call('/odata/customers?$filter=id ge 40', {
      headers: { prefer: 'odata.maxpagesize=1' },
    });
    expect(paged.text).toContain('@odata.nextLink');
    expect(paged.headers.get('etag')).toBe(rowTag(paged.text));
    // Another metadata level is other bytes, so another tag; no entity carries @odata.etag.
    const none = await call(urls[0] as string, {
      headers: { accept: 'application/json;odata.metadata=none' },
    });
    expect(none.text).toBe('{"value":[{"id":40,"name":"Tag"},{"id":41,"name":"Tog"}]}');
    expect(none.headers.get('etag')).toBe(rowTag(none.text));
    expect(
      (await call(urls[0] as string, { headers: { 'if-none-match': tags[0] as string } })).status,
    ).toBe(304);
    expect(
      (
        await call(urls[0] as string, {
          headers: {
            'if-none-match': tags[0] as string,
            accept: 'application/json;odata.metadata=none',
          },
        })
      ).status,
    ).toBe(200);
    // A change moves the tags: the old one is answered whole.
    await db.admin.query("UPDATE customers SET name = 'Tug' WHERE id = 41");
    await db.admin.query('UPDATE `order-items` SET qty = 3 WHERE order_id = 40 AND line = 2');
    const statuses: number[] = [];
    for (const [i, url] of urls.entries()) {
      statuses.push((await call(url, { headers: { 'if-none-match': tags[i] as string } })).status);
    }
    // The count is the same number and line 1's qty the same: the same bytes, the same tag.
    expect(statuses).toEqual([200, 200, 304, 200, 304]);
  });
});

describe('one entity, its navigation, property and $count', () => {
  test('a key read; a composite key; a string key in quotes', async () => {
    const tag = (await call('/table/customers/read(id,2)')).headers.get('etag');
    expect((await call('/odata/customers(2)')).body).toEqual({
      '@odata.context': ctx('customers/$entity'),
      '@odata.etag': tag,
      id: 2,
      name: 'Bob',
      zip_x0020_code: null,
      secret: 's2',
    });
    expect((await call('/odata/order_x002D_items(order_id=10,line=2)')).body).toEqual({
      '@odata.context': ctx('order_x002D_items/$entity'),
      '@odata.etag': rowTag('{"order_id":10,"line":2,"qty":3}'),
      order_id: 10,
      line: 2,
      qty: 3,
    });
    expect((await call('/odata/logs(at=2024-01-01T00:00:00Z)')).body).toEqual({
      '@odata.context': ctx('logs/$entity'),
      at: '2024-01-01T00:00:00Z',
      msg: 'hi',
    });
  });

  test('no such row: 404 ROW_NOT_FOUND, as REST', async () => {
    const odata = await call('/odata/customers(99)');
    const rest = await call('/table/customers/read(id,99)');
    expect(odata.status).toBe(404);
    expect(rest.status).toBe(404);
    expect(odata.body).toEqual({
      error: { code: 'ROW_NOT_FOUND', message: (rest.body as { message: string }).message },
    });
    expect(odata.headers.get('odata-version')).toBe('4.0');
  });

  test('navigation: to-one an entity, to-many a collection; an empty to-one 204', async () => {
    expect((await call('/odata/orders(10)/customer?$select=name')).body).toEqual({
      '@odata.context': ctx('customers/$entity'),
      name: 'Ann',
    });
    expect((await call('/odata/customers(1)/orders?$select=id&$orderby=id desc')).body).toEqual({
      '@odata.context': ctx('orders'),
      value: [{ id: 12 }, { id: 10 }],
    });
    expect((await call('/odata/customers(3)/orders')).body).toEqual({
      '@odata.context': ctx('orders'),
      value: [],
    });
  });

  test('a to-many navigation page that ends the rows has no next link', async () => {
    const orders = '/odata/customers(1)/orders?$select=id&$orderby=id';
    const whole = await call(orders, { headers: { prefer: 'odata.maxpagesize=2' } });
    expect(whole.body).toEqual({
      '@odata.context': ctx('orders'),
      value: [{ id: 10 }, { id: 12 }],
    });
    const prefer = { prefer: 'odata.maxpagesize=1' };
    const first = await call(orders, { headers: prefer });
    const link = `${base}/odata/customers(1)/orders?%24select=id&%24orderby=id&%24skip=1`;
    expect(first.body).toEqual({
      '@odata.context': ctx('orders'),
      value: [{ id: 10 }],
      '@odata.nextLink': link,
    });
    const last = await call(link.slice(base.length), { headers: prefer });
    expect(last.body).toEqual({ '@odata.context': ctx('orders'), value: [{ id: 12 }] });
    // Past --odata-max-page alike, and a client's $top past the page asks for what is left.
    const small = await startTestGateway(db.name, { odataMaxPage: 2 });
    try {
      const page = await call('/odata/customers(1)/orders?$select=id,total&$orderby=id', {
        on: small.url,
      });
      expect(page.body).toEqual({
        '@odata.context': `${small.url}/odata/$metadata#orders`,
        value: [
          { id: 10, total: 9.9 },
          { id: 12, total: 5 },
        ],
      });
      const topped = await call('/odata/customers(1)/orders?$select=id&$orderby=id&$top=5', {
        on: small.url,
        headers: prefer,
      });
      expect(topped.body).toEqual({
        '@odata.context': `${small.url}/odata/$metadata#orders`,
        value: [{ id: 10 }],
        '@odata.nextLink': `${small.url}/odata/customers(1)/orders?%24select=id&%24orderby=id&%24top=4&%24skip=1`,
      });
    } finally {
      await small.close();
    }
  });

  test('a property, its $value, and $count', async () => {
    expect((await call('/odata/orders(10)/total')).body).toEqual({
      '@odata.context': ctx('orders(10)/total'),
      value: 9.9,
    });
    const raw = await call('/odata/customers(1)/name/$value');
    expect(raw.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(raw.text).toBe('Ann');
    expect((await call('/odata/customers(2)/zip_x0020_code')).status).toBe(204);
    const count = await call('/odata/orders/$count?$filter=total gt 6');
    expect(count.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(count.text).toBe('2');
  });
});

describe('writes', () => {
  test('POST → 201 with Location and the entity; PATCH merges; PUT replaces; DELETE', async () => {
    const created = await call('/odata/customers', {
      method: 'POST',
      body: { '@odata.type': '#tablegate.customers', id: 7, name: 'Di', zip_x0020_code: '11111' },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${base}/odata/customers(7)`);
    expect(created.body).toEqual({
      '@odata.context': ctx('customers/$entity'),
      id: 7,
      name: 'Di',
      zip_x0020_code: '11111',
      secret: null,
    });
    const patched = await call('/odata/customers(7)', { method: 'PATCH', body: { name: 'Dee' } });
    expect(patched.status).toBe(204);
    expect((await call('/odata/customers(7)?$select=name,zip_x0020_code')).body).toMatchObject({
      name: 'Dee',
      zip_x0020_code: '11111',
    });
    const put = await call('/odata/customers(7)', {
      method: 'PUT',
      headers: { prefer: 'return=representation' },
      body: { name: 'Dot' },
    });
    expect(put.status).toBe(200);
    expect(put.headers.get('preference-applied')).toBe('return=representation');
    expect(put.body).toEqual({
      '@odata.context': ctx('customers/$entity'),
      id: 7,
      name: 'Dot',
      zip_x0020_code: null,
      secret: null,
    });
    expect((await call('/odata/customers(7)', { method: 'DELETE' })).status).toBe(204);
    const gone = await call('/odata/customers(7)', { method: 'DELETE' });
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ error: { code: 'ROW_NOT_FOUND' } });
  });

  test('return=minimal → 204 with Location; Edm forms written back; composite keys', async () => {
    const created = await call('/odata/orders', {
      method: 'POST',
      headers: { prefer: 'return=minimal' },
      body: {
        id: 20,
        customer_id: 3,
        total: 1.5,
        placed: '2024-06-01T12:00:00Z',
        note: '[1,2]',
        photo: '-_8=',
      },
    });
    expect(created.status).toBe(204);
    expect(created.headers.get('location')).toBe(`${base}/odata/orders(20)`);
    expect(created.headers.get('preference-applied')).toBe('return=minimal');
    expect(created.text).toBe('');
    const [rows] = await db.admin.query(
      'SELECT placed, note, HEX(photo) AS photo FROM orders WHERE id = 20',
    );
    expect(rows).toEqual([{ placed: '2024-06-01 12:00:00', note: [1, 2], photo: 'FBFF' }]);
    const line = await call('/odata/order_x002D_items(order_id=20,line=1)', { method: 'DELETE' });
    expect(line.status).toBe(404);
    await call('/odata/order_x002D_items', {
      method: 'POST',
      body: { order_id: 20, line: 1, qty: 4 },
    });
    const merged = await call('/odata/order_x002D_items(order_id=20,line=1)', {
      method: 'PATCH',
      body: { qty: 5 },
    });
    expect(merged.status).toBe(204);
    expect((await call('/odata/order_x002D_items(order_id=20,line=1)/qty')).body).toMatchObject({
      value: 5,
    });
  });

  test('a set without a key of its own is read-only: 405 ODATA_READ_ONLY', async () => {
    const answer = await call('/odata/logs', {
      method: 'POST',
      body: { at: '2024-01-02T00:00:00Z' },
    });
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('GET');
    expect(answer.body).toEqual({
      error: {
        code: 'ODATA_READ_ONLY',
        message:
          "Entity set 'logs' has no primary key and no unique key of NOT NULL columns: it is read-only (docs/odata.md)",
      },
    });
  });

  test('a body error is the REST error in OData form', async () => {
    const answer = await call('/odata/customers', { method: 'POST', body: { id: 8, nope: 1 } });
    const rest = await call('/table/customers/create', {
      method: 'POST',
      body: { id: 8, nope: 1 },
    });
    expect(answer.status).toBe(rest.status);
    const { code, message } = rest.body as { code: string; message: string };
    expect(answer.body).toEqual({ error: { code, message } });
  });
});

describe('entity ETags and If-Match', () => {
  const STALE =
    "The row of 'customers' no longer has the ETag given in If-Match (it changed, or is gone): nothing was changed; read it again with read(<key>,<value>)";

  test('a key read carries @odata.etag and the same ETag: the key read of REST gives it', async () => {
    await db.admin.query("INSERT INTO customers VALUES (30, 'Eve', '30303', 's30')");
    const rest = await call('/table/customers/read(id,30)');
    const tag = rest.headers.get('etag') as string;
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    const minimal = await call('/odata/customers(30)');
    expect(minimal.headers.get('etag')).toBe(tag);
    expect(minimal.text).toBe(
      `{"@odata.context":${JSON.stringify(ctx('customers/$entity'))},"@odata.etag":${JSON.stringify(tag)},"id":30,"name":"Eve","zip_x0020_code":"30303","secret":"s30"}`,
    );
    const full = await call('/odata/customers(30)', {
      headers: { accept: 'application/json;odata.metadata=full' },
    });
    expect(full.headers.get('etag')).toBe(tag);
    expect(full.body).toEqual({
      '@odata.context': ctx('customers/$entity'),
      '@odata.etag': tag,
      '@odata.type': '#tablegate.customers',
      '@odata.id': `${base}/odata/customers(30)`,
      '@odata.editLink': `${base}/odata/customers(30)`,
      id: 30,
      name: 'Eve',
      zip_x0020_code: '30303',
      secret: 's30',
    });
    const none = await call('/odata/customers(30)?$format=application/json;odata.metadata=none');
    expect(none.headers.get('etag')).toBe(tag);
    expect(none.text).toBe('{"id":30,"name":"Eve","zip_x0020_code":"30303","secret":"s30"}');
    // $select shapes the body, not the tag: it is the whole row's.
    const selected = await call('/odata/customers(30)?$select=name');
    expect(selected.headers.get('etag')).toBe(tag);
    expect(selected.body).toEqual({
      '@odata.context': ctx('customers/$entity'),
      '@odata.etag': tag,
      name: 'Eve',
    });
  });

  test('entities in a collection and of a formed key carry no @odata.etag', async () => {
    const collection = await call('/odata/customers?$filter=id eq 1&$select=id');
    expect(collection.body).toEqual({ '@odata.context': ctx('customers(id)'), value: [{ id: 1 }] });
    const log = await call('/odata/logs(at=2024-01-01T00:00:00Z)');
    expect(log.headers.get('etag')).toBeNull();
    expect(log.body).toEqual({
      '@odata.context': ctx('logs/$entity'),
      at: '2024-01-01T00:00:00Z',
      msg: 'hi',
    });
  });

  test("a composite key's entity carries the hash of its row's REST JSON, the one-column key's tag", async () => {
    // REST has no key read of a composite key: the tag is the same hash of the row REST's JSON
    // gives it (a row of its collection read), as a one-column key's is.
    const rest = await call('/table/order-items/read?$filter=order_id eq 10 and line eq 1');
    expect(rest.text).toContain('{"order_id":10,"line":1,"qty":2}');
    const tag = rowTag('{"order_id":10,"line":1,"qty":2}');
    const line = await call('/odata/order_x002D_items(order_id=10,line=1)');
    expect(line.status).toBe(200);
    expect(line.headers.get('etag')).toBe(tag);
    expect(line.text).toBe(
      `{"@odata.context":${JSON.stringify(ctx('order_x002D_items/$entity'))},"@odata.etag":${JSON.stringify(tag)},"order_id":10,"line":1,"qty":2}`,
    );
    // Key order in the URL, metadata levels and $select do not change the tag.
    const swapped = await call('/odata/order_x002D_items(line=1,order_id=10)');
    expect(swapped.headers.get('etag')).toBe(tag);
    const none = await call(
      '/odata/order_x002D_items(order_id=10,line=1)?$format=application/json;odata.metadata=none',
    );
    expect(none.headers.get('etag')).toBe(tag);
    expect(none.text).toBe('{"order_id":10,"line":1,"qty":2}');
    const selected = await call('/odata/order_x002D_items(order_id=10,line=1)?$select=qty');
    expect(selected.headers.get('etag')).toBe(tag);
    expect(selected.body).toEqual({
      '@odata.context': ctx('order_x002D_items/$entity'),
      '@odata.etag': tag,
      qty: 2,
    });
    const full = await call('/odata/order_x002D_items(order_id=10,line=1)', {
      headers: { accept: 'application/json;odata.metadata=full' },
    });
    expect(full.headers.get('etag')).toBe(tag);
    expect((full.body as Record<string, unknown>)['@odata.etag']).toBe(tag);
    expect((await call('/odata/order_x002D_items(order_id=10,line=9)')).status).toBe(404);
  });

  test('If-Match on PATCH, PUT and DELETE: the entity tag passes, a stale one is 412', async () => {
    await db.admin.query("INSERT INTO customers VALUES (31, 'Fay', NULL, 's31')");
    const first = (await call('/odata/customers(31)')).headers.get('etag') as string;
    const patched = await call('/odata/customers(31)', {
      method: 'PATCH',
      headers: { 'if-match': first },
      body: { name: 'Fae' },
    });
    expect(patched.status).toBe(204);
    for (const method of ['PATCH', 'PUT', 'DELETE']) {
      const stale = await call('/odata/customers(31)', {
        method,
        headers: { 'if-match': first },
        ...(method === 'DELETE' ? {} : { body: { name: 'Gus' } }),
      });
      expect(stale.status).toBe(412);
      expect(stale.headers.get('odata-version')).toBe('4.0');
      expect(stale.body).toEqual({ error: { code: 'PRECONDITION_FAILED', message: STALE } });
    }
    const [rows] = await db.admin.query('SELECT name, secret FROM customers WHERE id = 31');
    expect(rows).toEqual([{ name: 'Fae', secret: 's31' }]);
    const second = (await call('/odata/customers(31)')).headers.get('etag') as string;
    expect(second).not.toBe(first);
    const put = await call('/odata/customers(31)', {
      method: 'PUT',
      headers: { 'if-match': second },
      body: { name: 'Gus' },
    });
    expect(put.status).toBe(204);
    const third = (await call('/odata/customers(31)')).headers.get('etag') as string;
    expect(
      (await call('/odata/customers(31)', { method: 'DELETE', headers: { 'if-match': third } }))
        .status,
    ).toBe(204);
    expect((await call('/odata/customers(31)')).status).toBe(404);
  });

  test('If-Match on a composite key: the entity tag passes, a stale one is 412, nothing changes', async () => {
    const STALE_LINE =
      "The row of 'order-items' no longer has the ETag given in If-Match (it changed, or is gone): nothing was changed; read it again with read(<key>,<value>)";
    await db.admin.query('INSERT INTO `order-items` VALUES (12, 1, 4)');
    const url = '/odata/order_x002D_items(order_id=12,line=1)';
    const qty = async () =>
      (
        (
          await db.admin.query('SELECT qty FROM `order-items` WHERE order_id = 12 AND line = 1')
        )[0] as {
          qty: number;
        }[]
      ).map((r) => r.qty);
    const first = (await call(url)).headers.get('etag') as string;
    expect(first).toBe(rowTag('{"order_id":12,"line":1,"qty":4}'));
    const patched = await call(url, {
      method: 'PATCH',
      headers: { 'if-match': first },
      body: { qty: 5 },
    });
    expect(patched.status).toBe(204);
    expect(await qty()).toEqual([5]);
    for (const method of ['PATCH', 'PUT', 'DELETE']) {
      const stale = await call(url, {
        method,
        headers: { 'if-match': first },
        ...(method === 'DELETE' ? {} : { body: { qty: 9 } }),
      });
      expect(stale.status).toBe(412);
      expect(stale.headers.get('odata-version')).toBe('4.0');
      expect(stale.body).toEqual({ error: { code: 'PRECONDITION_FAILED', message: STALE_LINE } });
    }
    // A change by anyone else moves the tag too.
    const second = (await call(url)).headers.get('etag') as string;
    expect(second).toBe(rowTag('{"order_id":12,"line":1,"qty":5}'));
    await db.admin.query('UPDATE `order-items` SET qty = 6 WHERE order_id = 12 AND line = 1');
    const moved = await call(url, {
      method: 'PUT',
      headers: { 'if-match': second },
      body: { qty: 7 },
    });
    expect(moved.status).toBe(412);
    expect(await qty()).toEqual([6]);
    const third = (await call(url)).headers.get('etag') as string;
    const put = await call(url, {
      method: 'PUT',
      headers: { 'if-match': `"other", ${third}` },
      body: { qty: 7 },
    });
    expect(put.status).toBe(204);
    expect(await qty()).toEqual([7]);
    // `*`: the row exists; on a key without a row it is 412.
    const missing = await call('/odata/order_x002D_items(order_id=12,line=9)', {
      method: 'PATCH',
      headers: { 'if-match': '*' },
      body: { qty: 1 },
    });
    expect(missing.status).toBe(412);
    expect(missing.body).toEqual({ error: { code: 'PRECONDITION_FAILED', message: STALE_LINE } });
    const fourth = (await call(url)).headers.get('etag') as string;
    expect((await call(url, { method: 'DELETE', headers: { 'if-match': fourth } })).status).toBe(
      204,
    );
    expect(await qty()).toEqual([]);
    expect((await call(url, { method: 'DELETE', headers: { 'if-match': '*' } })).status).toBe(412);
  });
});

describe('function and action imports', () => {
  test('a function import answers its value; an action import its result sets', async () => {
    expect((await call('/odata/twice(n=21)')).body).toEqual({
      '@odata.context': ctx('Edm.Int32'),
      value: 42,
    });
    expect((await call('/odata/hello', { method: 'POST', body: { who: 'me' } })).body).toEqual({
      results: [[{ greeting: 'hi me' }]],
      out: {},
    });
    const missing = await call('/odata/hello', { method: 'POST', body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: { code: 'MISSING_PARAMETER' } });
  });
});

describe('errors', () => {
  test('unknown set 404, bad query 400, unsupported option 400, all in OData form', async () => {
    const unknown = await call('/odata/nope');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({
      error: { code: 'UNKNOWN_TABLE', message: "Table 'nope' does not exist" },
    });
    const bad = await call('/odata/orders?$filter=id eq');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'FILTER_SYNTAX' } });
    const search = await call('/odata/orders?$search=x');
    expect(search.body).toEqual({
      error: {
        code: 'ODATA_UNSUPPORTED',
        message: 'The query option $search is not served (docs/odata.md)',
      },
    });
    const format = await call('/odata/orders?$format=atom');
    expect(format.status).toBe(400);
    expect(format.body).toMatchObject({ error: { code: 'ODATA_UNSUPPORTED' } });
    const bind = await call('/odata/orders', {
      method: 'POST',
      body: { id: 30, 'customer@odata.bind': 'customers(1)' },
    });
    expect(bind.status).toBe(400);
    expect(bind.body).toMatchObject({ error: { code: 'ODATA_UNSUPPORTED' } });
    const key = await call('/odata/order_x002D_items(10)');
    expect(key.status).toBe(400);
    expect(key.body).toMatchObject({ error: { code: 'INVALID_QUERY' } });
  });
});

describe('auth mode: two roles see different services', () => {
  const SECRET = 'odata-test-secret-0123456789abcdefghijklmnop';
  let dir: string;
  let auth: TestGateway;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-odata-'));
    const policy = path.join(dir, 'policy.json');
    await writeFile(
      policy,
      JSON.stringify({
        roles: {
          clerk: {
            tables: {
              customers: { read: { columns: ['id', 'name'] } },
              orders: { read: { where: 'customer_id eq 1' }, update: true },
            },
            routines: { twice: true },
          },
          boss: { tables: { '*': { read: true, create: true, update: true, delete: true } } },
        },
      }),
    );
    auth = await startTestGateway(db.name, { mode: 'auth', jwtSecret: SECRET, policyFile: policy });
    for (const role of ['clerk', 'boss']) {
      tokens[role] = (
        await signUpAs(
          auth.url,
          db.admin,
          { email: `${role}@odata.example`, password: 'correct horse battery' },
          role,
        )
      ).token;
    }
  });

  afterAll(async () => {
    await auth?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const as = (role: string) => ({
    on: auth.url,
    headers: { authorization: `Bearer ${tokens[role]}` },
  });

  test('without a token: 401 in OData form', async () => {
    const answer = await call('/odata/', { on: auth.url });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('odata-version')).toBe('4.0');
    expect(answer.body).toEqual({ error: { code: 'ACCESS_DENIED', message: expect.any(String) } });
  });

  test('$metadata shows each role what it may see', async () => {
    const clerk = (await call('/odata/$metadata?$format=json', as('clerk'))).body as {
      tablegate: Record<string, unknown>;
    };
    expect(Object.keys(clerk.tablegate)).toEqual(['customers', 'orders', 'twice', 'Container']);
    expect(clerk.tablegate.customers).toEqual({
      $Kind: 'EntityType',
      $Key: ['id'],
      id: { $Type: 'Edm.Int32' },
      name: { $MaxLength: 40 },
      orders: { $Kind: 'NavigationProperty', $Collection: true, $Type: 'tablegate.orders' },
    });
    const boss = (await call('/odata/$metadata?$format=json', as('boss'))).body as {
      tablegate: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(boss.tablegate)).toEqual([
      '_x0032_fa',
      'customers',
      'logs',
      'order_x002D_items',
      'orders',
      'Container',
    ]);
    expect(boss.tablegate.customers).toHaveProperty('secret');
  });

  test('reads follow the role: hidden columns unknown, row conditions filter, others 404 and 403', async () => {
    expect((await call('/odata/orders?$select=id', as('clerk'))).body).toEqual({
      '@odata.context': `${auth.url}/odata/$metadata#orders(id)`,
      value: [{ id: 10 }, { id: 12 }],
    });
    const hidden = await call('/odata/customers?$select=secret', as('clerk'));
    const hiddenRest = await call('/table/customers/read?$select=secret', as('clerk'));
    expect(hidden.status).toBe(400);
    expect(hidden.body).toEqual({
      error: {
        code: (hiddenRest.body as { code: string }).code,
        message: (hiddenRest.body as { message: string }).message,
      },
    });
    const notHers = await call('/odata/orders(11)', as('clerk'));
    expect(notHers.status).toBe(404);
    const unreadable = await call('/odata/logs', as('clerk'));
    expect(unreadable.status).toBe(404);
    expect(unreadable.body).toMatchObject({ error: { code: 'UNKNOWN_TABLE' } });
    const forbidden = await call('/odata/customers(1)', { ...as('clerk'), method: 'DELETE' });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ error: { code: 'FORBIDDEN' } });
    expect((await call('/odata/logs', as('boss'))).status).toBe(200);
  });
});
