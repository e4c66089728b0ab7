/**
 * What the OData service promises (docs/odata.md) and no other test asserts: a view is an
 * entity set (in the service document, in `$metadata` with its formed key, read-only, its rows
 * read), and `OData-Version: 4.0` is on every kind of answer: a 200 collection, a 201 create, a
 * 204 PATCH and DELETE, a 304, `/$count` and a 400.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
// @ts-expect-error: odata-csdl ships no types
import csdl from 'odata-csdl';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const FIXTURE = `
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, city VARCHAR(40) NULL);
INSERT INTO customers VALUES (1, 'Ann', 'Oslo'), (2, 'Bob', NULL), (3, 'Cy', 'Rome');
CREATE VIEW later_customers AS SELECT id, name, city FROM customers WHERE id > 1;
`;

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  gw = await startTestGateway(db.name);
});

afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

async function call(
  route: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${gw.url}${route}`, {
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

describe('a view', () => {
  test('is in the service document', async () => {
    const answer = await call('/odata/');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      '@odata.context': `${gw.url}/odata/$metadata`,
      value: [
        { name: 'customers', kind: 'EntitySet', url: 'customers' },
        { name: 'later_customers', kind: 'EntitySet', url: 'later_customers' },
      ],
    });
  });

  test('is an entity set in $metadata, its key formed of its NOT NULL columns', async () => {
    const xml = await call('/odata/$metadata');
    expect(xml.status).toBe(200);
    const json = await call('/odata/$metadata?$format=json');
    expect(json.body).toEqual(csdl.xml2json(xml.text, { strict: true }));
    const schema = (json.body as { tablegate: Record<string, unknown> }).tablegate;
    expect(schema.later_customers).toEqual({
      $Kind: 'EntityType',
      $Key: ['id', 'name'],
      id: { $Type: 'Edm.Int32' },
      name: { $MaxLength: 40 },
      city: { $Nullable: true, $MaxLength: 40 },
    });
    const container = schema.Container as Record<string, unknown>;
    expect(container.later_customers).toEqual({
      $Collection: true,
      $Type: 'tablegate.later_customers',
    });
    expect(xml.text).toContain(
      '<EntitySet Name="later_customers" EntityType="tablegate.later_customers"',
    );
  });

  test('reads its rows, by the set and by its formed key', async () => {
    const set = await call('/odata/later_customers?$orderby=id');
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      '@odata.context': `${gw.url}/odata/$metadata#later_customers`,
      value: [
        { id: 2, name: 'Bob', city: null },
        { id: 3, name: 'Cy', city: 'Rome' },
      ],
    });
    const one = await call("/odata/later_customers(id=3,name='Cy')");
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      '@odata.context': `${gw.url}/odata/$metadata#later_customers/$entity`,
      id: 3,
      name: 'Cy',
      city: 'Rome',
    });
  });

  test('is read-only: a write is 405 ODATA_READ_ONLY', async () => {
    const answer = await call('/odata/later_customers', {
      method: 'POST',
      body: { id: 9, name: 'Di' },
    });
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('GET');
    expect(answer.headers.get('odata-version')).toBe('4.0');
    expect(answer.body).toEqual({
      error: {
        code: 'ODATA_READ_ONLY',
        message:
          "Entity set 'later_customers' has no primary key and no unique key of NOT NULL columns: it is read-only (docs/odata.md)",
      },
    });
  });
});

describe('OData-Version: 4.0 on every answer', () => {
  test('a 200 collection read', async () => {
    const answer = await call('/odata/customers?$orderby=id&$top=1');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('odata-version')).toBe('4.0');
    expect(answer.body).toEqual({
      '@odata.context': `${gw.url}/odata/$metadata#customers`,
      value: [{ id: 1, name: 'Ann', city: 'Oslo' }],
    });
  });

  test('a 201 create, a 204 PATCH and a 204 DELETE', async () => {
    const created = await call('/odata/customers', {
      method: 'POST',
      body: { id: 7, name: 'Ed', city: null },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('odata-version')).toBe('4.0');
    expect(created.headers.get('location')).toBe(`${gw.url}/odata/customers(7)`);
    const patched = await call('/odata/customers(7)', { method: 'PATCH', body: { city: 'Pisa' } });
    expect(patched.status).toBe(204);
    expect(patched.text).toBe('');
    expect(patched.headers.get('odata-version')).toBe('4.0');
    const deleted = await call('/odata/customers(7)', { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(deleted.headers.get('odata-version')).toBe('4.0');
  });

  test('a 304', async () => {
    // $metadata is tagged; an OData collection carries no ETag and an entity read is never
    // answered 304 (docs/odata.md), so $metadata's is the 304 there is.
    const first = await call('/odata/$metadata');
    const tag = first.headers.get('etag') as string;
    expect(tag).toMatch(/^(W\/)?"[^"]+"$/);
    const again = await call('/odata/$metadata', { headers: { 'if-none-match': tag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('odata-version')).toBe('4.0');
  });

  test('/$count', async () => {
    const answer = await call('/odata/customers/$count');
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('3');
    expect(answer.headers.get('odata-version')).toBe('4.0');
  });

  test('a 400', async () => {
    const answer = await call('/odata/customers?$filter=nope eq 1');
    expect(answer.status).toBe(400);
    expect(answer.headers.get('odata-version')).toBe('4.0');
    expect(answer.body).toEqual({
      error: {
        code: 'UNKNOWN_COLUMN',
        message: "Column 'nope' does not exist in table 'customers': did you mean 'name'?",
      },
    });
  });
});
