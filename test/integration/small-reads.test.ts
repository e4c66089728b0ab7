/**
 * Reads the plan bounds are fetched whole (plan/small-read.ts); every other read is
 * streamed. The client cannot tell: the same status, body and framing (one string with a
 * Content-Length under 64 KiB, chunked above) for the same rows through either path.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createTestDatabase, integers, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(`
    CREATE TABLE pages (id INT PRIMARY KEY, body VARCHAR(650) NOT NULL, n DECIMAL(12,4));
    INSERT INTO pages SELECT seq, REPEAT(CHAR(97 + seq % 26), 650), seq / 7 FROM ${integers(100)};
  `);
  gw = await startTestGateway(db.name);
});

afterAll(async () => {
  await gw.close();
  await db.drop();
});

async function get(query: string) {
  const response = await fetch(`${gw.url}/table/pages/read?${query}`);
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    length: response.headers.get('content-length'),
    chunked: response.headers.get('transfer-encoding') === 'chunked',
    body: await response.text(),
  };
}

test('one row by primary key (fetched whole) and the same row by a range (streamed): the same answer', async () => {
  const whole = await get('$filter=id%20eq%207');
  const streamed = await get('$filter=id%20ge%207%20and%20id%20le%207');
  expect(whole).toEqual(streamed);
  expect(whole.chunked).toBe(false);
  expect(JSON.parse(whole.body)).toEqual([{ id: 7, body: 'h'.repeat(650), n: 1 }]);
});

test('100 rows over 64 KiB with $top (fetched whole) and without (streamed): the same bytes, both chunked', async () => {
  const whole = await get('$orderby=id&$top=100');
  const streamed = await get('$orderby=id');
  expect(whole.body.length).toBeGreaterThan(64 * 1024);
  expect(whole).toEqual(streamed);
  expect(whole.chunked).toBe(true);
  expect(JSON.parse(whole.body)).toHaveLength(100);
});

test('a small page under 64 KiB: one string with its Content-Length, the same as streamed', async () => {
  const whole = await get('$orderby=id&$top=5&$skip=10');
  const streamed = await get('$orderby=id&$filter=id%20gt%2010%20and%20id%20le%2015');
  expect(whole).toEqual(streamed);
  expect(whole.length).toBe(String(Buffer.byteLength(whole.body)));
  expect(JSON.parse(whole.body).map((row: { id: number }) => row.id)).toEqual([11, 12, 13, 14, 15]);
});
