/**
 * Conditional requests (docs/caching.md) end to end on MariaDB over HTTP: every 200 read — JSON
 * and CSV, `$expand`, `$apply`, paged, counted, key reads, a streamed answer within the hold
 * bound (past it: none) — carries a strong ETag that is the hash of exactly its body (and of the X-Total-Count and
 * Link it has); If-None-Match with it answers 304 with no body; If-Match on update and delete by
 * key goes on only while the row still has the tag its key read gave, checked on the locked row
 * in the write's transaction (two writers with one tag: exactly one wins).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import { USERS_TABLE } from '../../src/db/schema.js';
import { etagOf } from '../../src/etag.js';
import { readTag } from '../../src/http/read-tag.js';
import { PAGE_HOLD_BYTES } from '../../src/limits.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const BIG_ROWS = 30_000;

const FIXTURE = `
CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,2) NOT NULL,
  secret VARCHAR(20) NULL, owner INT NOT NULL DEFAULT 1, KEY by_name (name));
INSERT INTO items VALUES (1, 'apple', 1.50, 's1', 1), (2, 'pear', 2.25, 's2', 1),
  (3, 'plum', 0.75, 's3', 2), (4, 'fig', 3.00, NULL, 1), (5, 'kiwi', 1.10, 's5', 1);
CREATE TABLE parts (id INT PRIMARY KEY, item_id INT NOT NULL, qty INT NOT NULL,
  FOREIGN KEY (item_id) REFERENCES items (id));
INSERT INTO parts VALUES (1, 1, 3), (2, 1, 4), (3, 2, 1);
CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(100) NOT NULL);
INSERT INTO big SELECT seq, CONCAT('a value of the big table, number ', seq, ', "quoted"')
  FROM seq_1_to_${BIG_ROWS};
`;

const POLICY = {
  roles: {
    clerk: {
      tables: {
        items: {
          read: { columns: ['id', 'name', 'price'] },
          update: { columns: ['price'] },
        },
      },
    },
  },
};

const PRECONDITION_FAILED = {
  success: false,
  message:
    "The row of 'items' no longer has the ETag given in If-Match (it changed, or is gone): nothing was changed; read it again with read(<key>,<value>)",
  code: 'PRECONDITION_FAILED',
};
const NOT_ONE_ROW = {
  success: false,
  message:
    "If-Match names one row's ETag: it applies to update(<key>,<value>) and delete(<key>,<value>) by the primary key or a unique column, not to a $filter write or a key that may match many rows; nothing was changed",
  code: 'PRECONDITION_FAILED',
};
const UPDATED = (n: number) => ({
  success: true,
  message: 'Data updated successfully',
  affectedRows: n,
});

let db: TestDatabase;
let open: TestGateway;
let guarded: TestGateway;
let dir: string;
let token: string;

interface Got {
  status: number;
  headers: Headers;
  text: string;
}

async function request(
  gateway: TestGateway,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Got> {
  const response = await fetch(`${gateway.url}${url}`, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const get = (url: string, headers: Record<string, string> = {}, gateway = open) =>
  request(gateway, url, { headers });

/** The tag a read must carry: its body's, with the headers that vary with its rows. */
function expectedTag(got: Got): string {
  const total = got.headers.get('x-total-count');
  return readTag(got.text, total === null ? null : Number(total), got.headers.get('link'));
}

async function row(id: number): Promise<mysql.RowDataPacket | undefined> {
  const [rows] = await db.admin.query<mysql.RowDataPacket[]>('SELECT * FROM items WHERE id = ?', [
    id,
  ]);
  return rows[0];
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-etags-'));
  const file = path.join(dir, 'policy.json');
  await writeFile(file, JSON.stringify(POLICY));
  db = await createTestDatabase(FIXTURE);
  open = await startTestGateway(db.name);
  guarded = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: 'etags-secret-0123456789abcdefghijklmnopqrstuv',
    policyFile: file,
  });
  const credentials = { email: 'clerk@x.test', password: 'correct horse battery' };
  const post = (url: string) =>
    fetch(`${guarded.url}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(credentials),
    });
  await post('/auth/register');
  await db.admin.query(`UPDATE ${USERS_TABLE} SET role = 'clerk' WHERE email = 'clerk@x.test'`);
  token = ((await (await post('/auth/login')).json()) as { token: string }).token;
}, 60_000);

afterAll(async () => {
  await open?.close();
  await guarded?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

const FORMS: readonly [string, string, Record<string, string>][] = [
  ['a whole table', '/table/items/read', {}],
  ['CSV', '/table/items/read', { accept: 'text/csv' }],
  ['$filter and $select', '/table/items/read?$filter=price%20gt%201&$select=id,name', {}],
  ['$expand', '/table/items/read?$expand=parts($select=qty)', {}],
  [
    '$apply',
    `/table/items/read?$apply=${encodeURIComponent('aggregate(price with sum as total)')}`,
    {},
  ],
  [
    '$apply as CSV',
    `/table/items/read?$apply=${encodeURIComponent('groupby((owner))')}`,
    { accept: 'text/csv' },
  ],
  ['a page with a Link', '/table/items/read?$orderby=id&$top=2', {}],
  ['$count', '/table/items/read?$orderby=id&$top=2&$count=true', {}],
  ['$count as CSV', '/table/items/read?$count=true', { accept: 'text/csv' }],
  ['a key read', '/table/items/read(id,2)', {}],
  ['a key read with $expand', '/table/items/read(id,1)?$expand=parts', {}],
  ['a key read as CSV', '/table/items/read(id,2)', { accept: 'text/csv' }],
  ['a streamed read', '/table/big/read?$filter=id%20le%20500', {}],
];

describe('ETag on every 200 read', () => {
  test.each(FORMS)('%s: a strong tag of exactly its body', async (_name, url, headers) => {
    const got = await get(url, headers);
    expect(got.status).toBe(200);
    const tag = got.headers.get('etag');
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(tag).toBe(expectedTag(got));
    if (got.headers.get('x-total-count') === null && got.headers.get('link') === null) {
      expect(tag).toBe(etagOf(got.text));
    }
    // The same data: the same tag and the same bytes.
    const again = await get(url, headers);
    expect(again.headers.get('etag')).toBe(tag);
    expect(again.text).toBe(got.text);
    // Its own tag back: 304, no body, the tag and Vary kept.
    const revalidated = await get(url, { ...headers, 'if-none-match': tag as string });
    expect(revalidated.status).toBe(304);
    expect(revalidated.text).toBe('');
    expect(revalidated.headers.get('etag')).toBe(tag);
    expect(revalidated.headers.get('vary')).toBe('Accept');
  });

  test('the page and the total are in the tag: a new row past the page changes the count, and the tag', async () => {
    const url = '/table/items/read?$orderby=id&$top=2&$count=true';
    const before = await get(url);
    expect(before.headers.get('x-total-count')).toBe('5');
    const tag = before.headers.get('etag') as string;
    expect(tag).not.toBe(etagOf(before.text));
    await db.admin.query("INSERT INTO items VALUES (100, 'lime', 0.5, NULL, 1)");
    try {
      const after = await get(url, { 'if-none-match': tag });
      expect(after.status).toBe(200);
      expect(after.text).toBe(before.text);
      expect(after.headers.get('x-total-count')).toBe('6');
      expect(after.headers.get('etag')).not.toBe(tag);
      expect(after.headers.get('etag')).toBe(expectedTag(after));
    } finally {
      await db.admin.query('DELETE FROM items WHERE id = 100');
    }
  });

  test('JSON and CSV of one URL have different tags', async () => {
    const json = await get('/table/items/read(id,1)');
    const csv = await get('/table/items/read(id,1)', { accept: 'text/csv' });
    expect(json.headers.get('etag')).not.toBe(csv.headers.get('etag'));
    // A tag of the other representation is no match.
    const crossed = await get('/table/items/read(id,1)', {
      accept: 'text/csv',
      'if-none-match': json.headers.get('etag') as string,
    });
    expect(crossed.status).toBe(200);
    expect(crossed.text).toBe(csv.text);
  });

  test('a row changed by the mysql client: a new tag, and the old one answers 200 with the new body', async () => {
    const before = await get('/table/items/read');
    const tag = before.headers.get('etag') as string;
    await db.admin.query("UPDATE items SET name = 'pear!' WHERE id = 2");
    try {
      const after = await get('/table/items/read', { 'if-none-match': tag });
      expect(after.status).toBe(200);
      expect(after.text).toContain('"pear!"');
      expect(after.headers.get('etag')).toBe(etagOf(after.text));
      expect(after.headers.get('etag')).not.toBe(tag);
    } finally {
      await db.admin.query("UPDATE items SET name = 'pear' WHERE id = 2");
    }
    expect((await get('/table/items/read')).headers.get('etag')).toBe(tag);
  });

  test('If-None-Match: a list, `*`, the weak form; a tag not current and garbage answer 200', async () => {
    const url = '/table/items/read(id,3)';
    const got = await get(url);
    const tag = got.headers.get('etag') as string;
    for (const header of [
      `"other", ${tag}`,
      `${tag},"other"`,
      `  ${tag}  `,
      '*',
      `W/${tag}`,
      `"x", W/${tag}`,
      `garbage, ${tag}`,
    ]) {
      const answer = await get(url, { 'if-none-match': header });
      expect([header, answer.status, answer.text]).toEqual([header, 304, '']);
    }
    for (const header of [
      '"other"',
      'W/"other"',
      'garbage',
      '',
      ',,,',
      '"unterminated',
      tag.slice(1, -1),
      `"x", *`,
      '\u00ff',
    ]) {
      const answer = await get(url, { 'if-none-match': header });
      expect([header, answer.status, answer.text]).toEqual([header, 200, got.text]);
    }
  });

  test('an error is an error whatever If-None-Match says', async () => {
    const missing = await get('/table/nothing/read', { 'if-none-match': '*' });
    expect(missing.status).toBe(404);
    const noRow = await get('/table/items/read(id,999)', { 'if-none-match': '*' });
    expect(noRow.status).toBe(404);
    expect(JSON.parse(noRow.text).code).toBe('ROW_NOT_FOUND');
  });

  test('a streamed read past the hold bound: streamed whole, with no ETag, never a 304', async () => {
    const got = await get('/table/big/read');
    expect(got.status).toBe(200);
    expect(Buffer.byteLength(got.text)).toBeGreaterThan(PAGE_HOLD_BYTES);
    const rows = JSON.parse(got.text) as { id: number; v: string }[];
    expect(rows).toHaveLength(BIG_ROWS);
    expect(rows[BIG_ROWS - 1]).toEqual({
      id: BIG_ROWS,
      v: `a value of the big table, number ${BIG_ROWS}, "quoted"`,
    });
    // Its tag would have to be known before its first byte (docs/caching.md, "How it works").
    expect(got.headers.get('etag')).toBeNull();
    const csv = await get('/table/big/read', { accept: 'text/csv' });
    expect(csv.headers.get('etag')).toBeNull();
    const asked = await get('/table/big/read', { 'if-none-match': etagOf(got.text) });
    expect(asked.status).toBe(200);
    expect(asked.text).toBe(got.text);
    // A page of the big table within the bound is tagged, its Link in the tag too.
    const page = await get('/table/big/read?$orderby=id&$top=5000');
    expect(Buffer.byteLength(page.text)).toBeLessThan(PAGE_HOLD_BYTES);
    expect(page.headers.get('link')).not.toBeNull();
    expect(page.headers.get('etag')).toBe(expectedTag(page));
  });

  test('a streamed page while another connection writes: every answer fits its tag', async () => {
    const writes = (async () => {
      for (let i = 0; i < 20; i++) {
        await db.admin.query('UPDATE big SET v = ? WHERE id = ?', [`write ${i}`, 1 + i * 200]);
      }
    })();
    const route = '/table/big/read?$orderby=id&$top=5000';
    const answers = await Promise.all([0, 1, 2].map(() => get(route)));
    await writes;
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.headers.get('etag')).toBe(expectedTag(answer));
      expect(JSON.parse(answer.text)).toHaveLength(5000);
    }
  });
});

describe('If-Match on update and delete by key', () => {
  const tagOf = async (id: number, gateway = open, headers: Record<string, string> = {}) =>
    (await get(`/table/items/read(id,${id})`, headers, gateway)).headers.get('etag') as string;

  test('the current tag: the update goes on; the same tag again is stale: 412 and the row unchanged', async () => {
    const tag = await tagOf(1);
    const first = await request(open, '/table/items/update(id,1)', {
      method: 'PUT',
      headers: { 'if-match': tag },
      body: { price: 1.75 },
    });
    expect([first.status, JSON.parse(first.text)]).toEqual([200, UPDATED(1)]);
    const stale = await request(open, '/table/items/update(id,1)', {
      method: 'PUT',
      headers: { 'if-match': tag },
      body: { price: 9.99 },
    });
    expect([stale.status, JSON.parse(stale.text)]).toEqual([412, PRECONDITION_FAILED]);
    expect(String((await row(1))?.price)).toBe('1.75');
    // The new tag, in a list, goes on.
    const fresh = await tagOf(1);
    const listed = await request(open, '/table/items/update(id,1)', {
      method: 'PUT',
      headers: { 'if-match': `"old", ${fresh}` },
      body: { price: 1.5 },
    });
    expect([listed.status, JSON.parse(listed.text)]).toEqual([200, UPDATED(1)]);
    expect(String((await row(1))?.price)).toBe('1.50');
  });

  test('a row changed by the mysql client after the read: 412', async () => {
    const tag = await tagOf(2);
    await db.admin.query("UPDATE items SET secret = 'changed' WHERE id = 2");
    const stale = await request(open, '/table/items/update(id,2)', {
      method: 'PUT',
      headers: { 'if-match': tag },
      body: { name: 'never' },
    });
    expect([stale.status, JSON.parse(stale.text)]).toEqual([412, PRECONDITION_FAILED]);
    expect((await row(2))?.name).toBe('pear');
  });

  test('delete: stale 412 and the row stays; current 200 and it is gone', async () => {
    await db.admin.query("INSERT INTO items VALUES (50, 'gone soon', 1.00, NULL, 1)");
    const tag = await tagOf(50);
    await db.admin.query('UPDATE items SET price = 2 WHERE id = 50');
    const stale = await request(open, '/table/items/delete(id,50)', {
      method: 'DELETE',
      headers: { 'if-match': tag },
    });
    expect([stale.status, JSON.parse(stale.text)]).toEqual([412, PRECONDITION_FAILED]);
    expect(await row(50)).toBeDefined();
    const current = await request(open, '/table/items/delete(id,50)', {
      method: 'DELETE',
      headers: { 'if-match': await tagOf(50) },
    });
    expect([current.status, JSON.parse(current.text)]).toEqual([
      200,
      { success: true, message: 'Data deleted successfully', affectedRows: 1 },
    ]);
    expect(await row(50)).toBeUndefined();
  });

  test('`*`: the row exists; on a missing row 412 (without If-Match: 200, affectedRows 0)', async () => {
    const any = await request(open, '/table/items/update(id,4)', {
      method: 'PUT',
      headers: { 'if-match': '*' },
      body: { price: 3 },
    });
    expect([any.status, JSON.parse(any.text)]).toEqual([200, UPDATED(1)]);
    const missing = await request(open, '/table/items/update(id,999)', {
      method: 'PUT',
      headers: { 'if-match': '*' },
      body: { price: 3 },
    });
    expect([missing.status, JSON.parse(missing.text)]).toEqual([412, PRECONDITION_FAILED]);
    const deleted = await request(open, '/table/items/delete(id,999)', {
      method: 'DELETE',
      headers: { 'if-match': '*' },
    });
    expect([deleted.status, JSON.parse(deleted.text)]).toEqual([412, PRECONDITION_FAILED]);
    const unconditional = await request(open, '/table/items/update(id,999)', {
      method: 'PUT',
      body: { price: 3 },
    });
    expect([unconditional.status, JSON.parse(unconditional.text)]).toEqual([200, UPDATED(0)]);
  });

  test('a weak tag, a CSV tag, garbage: never a match (412), never a 5xx', async () => {
    const tag = await tagOf(5);
    const csvTag = await tagOf(5, open, { accept: 'text/csv' });
    for (const header of [`W/${tag}`, csvTag, 'garbage', '', ',', tag.slice(1, -1), '"x", *']) {
      const answer = await request(open, '/table/items/update(id,5)', {
        method: 'PUT',
        headers: { 'if-match': header },
        body: { name: 'never' },
      });
      expect([header, answer.status, JSON.parse(answer.text)]).toEqual([
        header,
        412,
        PRECONDITION_FAILED,
      ]);
    }
    expect((await row(5))?.name).toBe('kiwi');
  });

  test('a $filter write or a key of many rows: 412, nothing changes', async () => {
    const filtered = await request(open, '/table/items/update?$filter=id%20eq%205', {
      method: 'PUT',
      headers: { 'if-match': '*' },
      body: { name: 'never' },
    });
    expect([filtered.status, JSON.parse(filtered.text)]).toEqual([412, NOT_ONE_ROW]);
    const byName = await request(open, "/table/items/delete(name,'kiwi')", {
      method: 'DELETE',
      headers: { 'if-match': '*' },
    });
    expect([byName.status, JSON.parse(byName.text)]).toEqual([412, NOT_ONE_ROW]);
    expect((await row(5))?.name).toBe('kiwi');
  });

  test("the request's own errors come first: 404, 400", async () => {
    const missing = await request(open, '/table/nothing/update(id,1)', {
      method: 'PUT',
      headers: { 'if-match': '"x"' },
      body: { price: 1 },
    });
    expect(missing.status).toBe(404);
    const badColumn = await request(open, '/table/items/update(id,1)', {
      method: 'PUT',
      headers: { 'if-match': '"x"' },
      body: { nope: 1 },
    });
    expect(badColumn.status).toBe(400);
  });

  test('two writers with the same tag at once: exactly one wins', async () => {
    for (let round = 0; round < 5; round++) {
      const tag = await tagOf(3);
      const answers = await Promise.all(
        [10 + round, 20 + round].map((price) =>
          request(open, '/table/items/update(id,3)', {
            method: 'PUT',
            headers: { 'if-match': tag },
            body: { price },
          }),
        ),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toEqual([200, 412]);
      const winner = answers.findIndex((answer) => answer.status === 200);
      expect(Number((await row(3))?.price)).toBe([10 + round, 20 + round][winner]);
    }
  });

  test('a role with hidden columns: its tag is its own representation’s, and only it matches', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const own = await get('/table/items/read(id,4)', auth, guarded);
    expect(JSON.parse(own.text)).toEqual({ id: 4, name: 'fig', price: 3 });
    const tag = own.headers.get('etag') as string;
    expect(tag).toBe(etagOf(own.text));
    const openTag = await tagOf(4);
    expect(openTag).not.toBe(tag);
    const wrong = await request(guarded, '/table/items/update(id,4)', {
      method: 'PUT',
      headers: { ...auth, 'if-match': openTag },
      body: { price: 4 },
    });
    expect([wrong.status, JSON.parse(wrong.text)]).toEqual([412, PRECONDITION_FAILED]);
    // A hidden column changed: the role's representation is the same, so its tag still holds.
    await db.admin.query("UPDATE items SET secret = 'hidden' WHERE id = 4");
    const right = await request(guarded, '/table/items/update(id,4)', {
      method: 'PUT',
      headers: { ...auth, 'if-match': tag },
      body: { price: 4 },
    });
    expect([right.status, JSON.parse(right.text)]).toEqual([200, UPDATED(1)]);
    expect(Number((await row(4))?.price)).toBe(4);
  });
});
