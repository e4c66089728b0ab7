/**
 * `--max-answer-bytes` (docs/reading.md): an answer built whole before it is sent — a read
 * fetched whole, `read(<key>,<value>)`, the first row of a streamed read — that passes the bound
 * answers 400 ANSWER_TOO_LARGE before any byte of its body, and its statement is stopped; an
 * answer under the bound is unchanged, and a streamed answer past it still streams whole.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestDatabase, integers, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const MAX = 4096;
const TOO_LARGE = {
  success: false,
  message: `The answer is more than ${MAX} bytes, the most one built whole before it is sent may take (--max-answer-bytes): ask for fewer rows ($top), fewer columns ($select) or fewer related rows ($expand with $top)`,
  code: 'ANSWER_TOO_LARGE',
};
const NOTE = 'n'.repeat(100);

let db: TestDatabase;
let gw: TestGateway;
/** The same database with the default bound, to compare answers under the small one. */
let plain: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(`
    CREATE TABLE parents (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
    INSERT INTO parents VALUES (1, 'many'), (2, 'few');
    CREATE TABLE children (
      id INT PRIMARY KEY,
      parent_id INT NOT NULL,
      note VARCHAR(100) NOT NULL,
      FOREIGN KEY (parent_id) REFERENCES parents (id)
    );
    INSERT INTO children SELECT seq, 1, '${NOTE}' FROM ${integers(200)};
    INSERT INTO children VALUES (1001, 2, 'a'), (1002, 2, 'b');
    CREATE TABLE wide (id INT PRIMARY KEY, note VARCHAR(100) NOT NULL);
    INSERT INTO wide SELECT seq, '${NOTE}' FROM ${integers(2000)};
  `);
  [gw, plain] = await Promise.all([
    startTestGateway(db.name, { maxAnswerBytes: MAX }),
    startTestGateway(db.name),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([gw?.close(), plain?.close()]);
  await db?.drop();
});

async function answer(
  base: string,
  path: string,
  accept = 'application/json',
): Promise<{ status: number; type: string | null; text: string }> {
  const response = await fetch(`${base}${path}`, { headers: { accept } });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    text: await response.text(),
  };
}

async function expectTooLarge(path: string, accept?: string): Promise<void> {
  const got = await answer(gw.url, path, accept);
  expect([got.status, got.type, JSON.parse(got.text)]).toEqual([
    400,
    'application/json; charset=utf-8',
    TOO_LARGE,
  ]);
}

/** Every statement of the refused answers was stopped and its connection came back. */
async function expectPoolFree(): Promise<void> {
  for (let i = 0; i < 50 && gw.gateway.db.stats().inUse > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(gw.gateway.db.stats()).toMatchObject({ inUse: 0, waiting: 0 });
}

describe('past the bound: 400 ANSWER_TOO_LARGE, nothing of the answer sent', () => {
  test('a read fetched whole: $top of narrow rows', async () => {
    // 50 rows of about 120 bytes: fetched whole (plan/small-read.ts), about 6 KB.
    await expectTooLarge('/table/wide/read?$top=50');
    await expectTooLarge('/table/wide/read?$top=50', 'text/csv');
  });

  test('one row by its primary key with 200 related rows', async () => {
    await expectTooLarge('/table/parents/read?$filter=id%20eq%201&$expand=children');
    await expectTooLarge('/table/parents/read(id,1)?$expand=children');
    await expectTooLarge('/table/parents/read(id,1)?$expand=children', 'text/csv');
  });

  test('a streamed read whose first row passes it', async () => {
    await expectTooLarge('/table/parents/read?$expand=children');
    await expectTooLarge('/table/parents/read?$expand=children&$orderby=id', 'text/csv');
    await expectPoolFree();
  });
});

describe('under the bound: the answer is unchanged', () => {
  test.each([
    ['/table/wide/read?$top=10', 'application/json'],
    ['/table/wide/read?$top=10', 'text/csv'],
    ['/table/parents/read(id,2)?$expand=children', 'application/json'],
    ['/table/parents/read?$filter=id%20eq%202&$expand=children', 'application/json'],
    ['/table/parents/read?$expand=children($top=3)&$orderby=id', 'application/json'],
    ['/table/wide/read?$apply=aggregate(id%20with%20sum%20as%20total)', 'application/json'],
  ])('%s (%s)', async (path, accept) => {
    const [small, usual] = await Promise.all([
      answer(gw.url, path, accept),
      answer(plain.url, path, accept),
    ]);
    expect(small.status).toBe(200);
    expect(small).toEqual(usual);
  });

  test('a streamed answer far past the bound streams whole', async () => {
    const got = await answer(gw.url, '/table/wide/read');
    expect(got.status).toBe(200);
    const rows = JSON.parse(got.text) as { id: number; note: string }[];
    expect(rows.length).toBe(2000);
    expect(rows[1999]).toEqual({ id: 2000, note: NOTE });
    expect(got.text.length).toBeGreaterThan(MAX * 50);
  });

  test('a page held for its Link starts streaming at the bound: the same rows', async () => {
    const [small, usual] = await Promise.all([
      fetch(`${gw.url}/table/wide/read?$top=1000&$orderby=id`),
      fetch(`${plain.url}/table/wide/read?$top=1000&$orderby=id`),
    ]);
    expect([small.status, usual.status]).toEqual([200, 200]);
    expect(await small.json()).toEqual(await usual.json());
  });
});
