/**
 * Writes end to end (docs/writes.md, docs/types.md): create (one row, many rows in one
 * transaction), update(<key>,<value>) and delete(<key>,<value>) against a real MariaDB/MySQL
 * through the real server over HTTP. Every success body is checked exactly and every write is
 * checked in the database directly; every error class with its status and code.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { RowDataPacket } from 'mysql2/promise';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const FIXTURE = `
CREATE TABLE people (
  id INT AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(20) NOT NULL,
  email VARCHAR(100) UNIQUE,
  age TINYINT UNSIGNED,
  status VARCHAR(10) NOT NULL DEFAULT 'new',
  note TEXT
);
CREATE TABLE kinds (
  id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
  amount DECIMAL(18,4),
  big BIGINT,
  ubig BIGINT UNSIGNED,
  ratio DOUBLE,
  flags BIT(64),
  flag BIT(1),
  born YEAR,
  day DATE,
  at DATETIME(6),
  ts TIMESTAMP(6) NULL DEFAULT NULL,
  whole DATETIME,
  doc JSON,
  data VARBINARY(64),
  label VARCHAR(50),
  shipped TINYINT(1),
  mood ENUM('happy', 'sad'),
  twice BIGINT AS (id * 2) VIRTUAL
);
CREATE TABLE authors (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL) ENGINE=InnoDB;
CREATE TABLE books (
  id INT AUTO_INCREMENT PRIMARY KEY,
  author_id INT NOT NULL,
  title VARCHAR(100) NOT NULL,
  FOREIGN KEY (author_id) REFERENCES authors (id)
) ENGINE=InnoDB;
INSERT INTO authors VALUES (1, 'Austen'), (2, 'Brontë');
INSERT INTO books (author_id, title) VALUES (1, 'Emma');
CREATE TABLE \`order\` (\`select\` VARCHAR(50) PRIMARY KEY, \`from\` INT, \`we\`\`ird, col\` VARCHAR(10));
CREATE TABLE counters (id INT PRIMARY KEY, n INT NOT NULL, who VARCHAR(20));
INSERT INTO counters VALUES (1, 0, 'w0');
CREATE TABLE keyed (k VARCHAR(100) PRIMARY KEY, v INT NOT NULL DEFAULT 0);
CREATE TABLE plain (a INT, b VARCHAR(10));
CREATE TABLE big_ids (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, v INT) AUTO_INCREMENT = 9007199254740993;
CREATE TABLE bulk (id INT AUTO_INCREMENT PRIMARY KEY, a INT);
CREATE TABLE members (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) NOT NULL, age INT);
INSERT INTO members (name, age) VALUES ('Kid', 10), ('Max', 40), ('Max', 50);
CREATE VIEW adults AS SELECT id, name, age FROM members WHERE age >= 18;
CREATE VIEW name_counts AS SELECT name, COUNT(*) AS n FROM members GROUP BY name;
CREATE VIEW distinct_names AS SELECT DISTINCT name FROM members;
CREATE VIEW checked_adults AS SELECT id, name, age FROM members WHERE age >= 18 WITH CHECK OPTION;
CREATE TABLE users_created_by_tablegate (id INT PRIMARY KEY, email VARCHAR(254), password VARCHAR(255));
INSERT INTO users_created_by_tablegate VALUES (1, 'a@example.com', 'hash');
CREATE TABLE stock (id INT PRIMARY KEY, qty INT, CONSTRAINT qty_positive CHECK (qty > 0));
`;

const INSERTED = 'Data inserted successfully';
const UPDATED = 'Data updated successfully';
const DELETED = 'Data deleted successfully';

let db: TestDatabase;
let gateway: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  gateway = await startTestGateway(db.name);
});

afterAll(async () => {
  await gateway?.close();
  await db?.drop();
});

interface Answer {
  status: number;
  type: string | null;
  body: unknown;
  text: string;
}

async function send(
  method: string,
  path: string,
  options: {
    json?: unknown;
    body?: string | ArrayBuffer;
    headers?: Record<string, string>;
    base?: string;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  let body = options.body;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(`${options.base ?? gateway.url}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: the assertions on `body` show the text.
  }
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: parsed,
    text,
  };
}

const post = (table: string, json: unknown) => send('POST', `/table/${table}/create`, { json });
const put = (path: string, json: unknown) => send('PUT', path, { json });
const del = (path: string) => send('DELETE', path);

async function rows(sql: string, params: unknown[] = []): Promise<RowDataPacket[]> {
  const [result] = await db.admin.query<RowDataPacket[]>(sql, params);
  return result;
}

async function count(table: string): Promise<number> {
  const [row] = await rows(`SELECT COUNT(*) AS n FROM \`${table}\``);
  return Number(row?.n);
}

function error(status: number, code: string, message?: string) {
  return {
    status,
    type: 'application/json; charset=utf-8',
    body:
      message === undefined
        ? { success: false, code, message: expect.any(String) }
        : { success: false, code, message },
  };
}

/** Percent-encodes every byte but ASCII letters and digits (parentheses, quotes and commas too). */
function encodeAll(text: string): string {
  return Array.from(new TextEncoder().encode(text), (byte) =>
    /[A-Za-z0-9]/.test(String.fromCharCode(byte))
      ? String.fromCharCode(byte)
      : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
  ).join('');
}

describe('POST /table/<t>/create', () => {
  test('one object: exact body, row in the database, DEFAULT for what it leaves out', async () => {
    const answer = await post('people', { name: 'Ann', email: 'ann@example.com', age: 30 });
    expect(answer.status).toBe(200);
    expect(answer.type).toBe('application/json; charset=utf-8');
    expect(answer.text).toBe(
      '{"success":true,"message":"Data inserted successfully","insertId":1,"affectedRows":1}',
    );
    expect(await rows('SELECT * FROM people WHERE id = 1')).toEqual([
      { id: 1, name: 'Ann', email: 'ann@example.com', age: 30, status: 'new', note: null },
    ]);
  });

  test('an array: one multi-row INSERT, the first id, DEFAULT per missing key', async () => {
    const answer = await post('people', [
      { name: 'Bob', status: 'old' },
      { name: 'Cy', note: 'has a note' },
      { email: 'di@example.com', name: 'Di', age: 41 },
    ]);
    expect(answer).toMatchObject({
      status: 200,
      body: { success: true, message: INSERTED, insertId: 2, affectedRows: 3 },
    });
    expect(
      await rows('SELECT id, name, email, age, status, note FROM people WHERE id >= 2 ORDER BY id'),
    ).toEqual([
      { id: 2, name: 'Bob', email: null, age: null, status: 'old', note: null },
      { id: 3, name: 'Cy', email: null, age: null, status: 'new', note: 'has a note' },
      { id: 4, name: 'Di', email: 'di@example.com', age: 41, status: 'new', note: null },
    ]);
  });

  test('a one-element array works like one object', async () => {
    expect((await post('plain', [{ a: 1 }])).body).toEqual({
      success: true,
      message: INSERTED,
      insertId: null,
      affectedRows: 1,
    });
  });

  test('insertId is null for a table without AUTO_INCREMENT', async () => {
    expect(await post('plain', { a: 2, b: 'x' })).toMatchObject({
      type: 'application/json; charset=utf-8',
      text: '{"success":true,"message":"Data inserted successfully","insertId":null,"affectedRows":1}',
    });
  });

  test('insertId beyond 2^53 is a string', async () => {
    expect(await post('big_ids', { v: 1 })).toMatchObject({
      type: 'application/json; charset=utf-8',
      text: '{"success":true,"message":"Data inserted successfully","insertId":"9007199254740993","affectedRows":1}',
    });
  });

  test('every type stored byte-exact, and read back as sent', async () => {
    const bytes = Buffer.from([0, 1, 2, 0x27, 0x5c, 0x22, 253, 254, 255]);
    const row = {
      amount: '12345678901234.5678',
      big: '-9223372036854775808',
      ubig: '18446744073709551615',
      ratio: 0.1,
      flags: '18446744073709551615',
      flag: true,
      born: 2024,
      day: '2024-02-29',
      at: '2024-02-29 13:45:59.123456',
      ts: '2038-01-19 03:14:07.999999',
      whole: '1999-12-31 23:59:59',
      doc: { a: [1, 'ü', null, 1.5], b: { c: true }, 'quote"d': "it's" },
      data: bytes.toString('base64'),
      label: 'ü 日本 🎉 "q" \'s \\ %_',
      shipped: true,
      mood: 'sad',
    };
    const answer = await post('kinds', row);
    expect(answer.body).toEqual({ success: true, message: INSERTED, insertId: 1, affectedRows: 1 });
    const [stored] = await rows(
      `SELECT CAST(amount AS CHAR) AS amount, CAST(big AS CHAR) AS big, CAST(ubig AS CHAR) AS ubig,
              ratio, CAST(flags + 0 AS CHAR) AS flags, CAST(flag + 0 AS CHAR) AS flag, born, day, at, ts, whole,
              CAST(doc AS CHAR) AS doc, HEX(data) AS data, label, HEX(label) AS labelHex, shipped, mood, twice
         FROM kinds WHERE id = 1`,
    );
    expect({ ...stored, doc: JSON.parse(String(stored?.doc)) }).toEqual({
      amount: '12345678901234.5678',
      big: '-9223372036854775808',
      ubig: '18446744073709551615',
      ratio: 0.1,
      flags: '18446744073709551615',
      flag: '1',
      born: 2024,
      day: '2024-02-29',
      at: '2024-02-29 13:45:59.123456',
      ts: '2038-01-19 03:14:07.999999',
      whole: '1999-12-31 23:59:59',
      doc: row.doc,
      data: bytes.toString('hex').toUpperCase(),
      label: row.label,
      labelHex: Buffer.from(row.label, 'utf8').toString('hex').toUpperCase(),
      shipped: 1,
      mood: 'sad',
      twice: '2',
    });
    // The read serializer is the inverse: what was sent comes back (DECIMAL as an exact number).
    const read = await send('GET', '/table/kinds/read?$filter=id eq 1');
    expect(read.status).toBe(200);
    expect(read.text).toContain('"amount":12345678901234.5678,');
    expect(read.text).toContain('"big":"-9223372036854775808",');
    expect(read.text).toContain('"flags":"18446744073709551615",');
    const [readRow] = read.body as Record<string, unknown>[];
    expect(readRow).toMatchObject({
      ubig: '18446744073709551615',
      ratio: 0.1,
      flag: 1,
      born: 2024,
      day: row.day,
      at: row.at,
      ts: row.ts,
      whole: row.whole,
      doc: row.doc,
      data: row.data,
      label: row.label,
      shipped: 1,
      mood: 'sad',
    });
  });

  test('binary: an empty value, and invalid base64 → 400 with nothing written', async () => {
    expect((await post('kinds', { data: '' })).status).toBe(200);
    const before = await count('kinds');
    expect(await post('kinds', { data: 'not base64!' })).toMatchObject(
      error(
        400,
        'INVALID_VALUE',
        "Column 'data' is binary and takes standard base64 text (A–Z, a–z, 0–9, +, /, = padding); 'not base64!' is not valid base64",
      ),
    );
    expect(await count('kinds')).toBe(before);
  });

  test('a big integer as a JSON number → 400 asking for a string', async () => {
    const answer = await send('POST', '/table/kinds/create', {
      body: '{"big": 9007199254740993}',
      headers: { 'content-type': 'application/json' },
    });
    expect(answer).toMatchObject(error(400, 'INVALID_VALUE'));
    expect((answer.body as { message: string }).message).toContain(
      'send the exact value as a string',
    );
  });

  test('values that MySQL would change silently → 400, nothing written', async () => {
    const before = await count('kinds');
    expect(await post('kinds', { amount: '1.00005' })).toMatchObject(
      error(
        400,
        'INVALID_VALUE',
        "Column 'amount' holds at most 4 digits after the decimal point; '1.00005' would be rounded",
      ),
    );
    expect(await post('kinds', { big: 1.5 })).toMatchObject(
      error(400, 'INVALID_VALUE', "Column 'big' takes whole numbers; 1.5 is not one"),
    );
    expect(await post('kinds', { whole: '2024-01-01 10:00:00.5' })).toMatchObject(
      error(
        400,
        'INVALID_VALUE',
        "Column 'whole' keeps 0 digits of fractional seconds; '2024-01-01 10:00:00.5' would be cut to whole seconds",
      ),
    );
    // Strict mode lets this pass with a Note (1265); the write is rolled back and refused.
    expect(await post('kinds', { day: '2024-02-29 10:00:00' })).toMatchObject(
      error(400, 'WARN_DATA_TRUNCATED', "Data truncated for column 'day' at row 1"),
    );
    expect(await count('kinds')).toBe(before);
  });

  test('objects and arrays only for JSON columns', async () => {
    expect(await post('kinds', { label: { a: 1 } })).toMatchObject(
      error(
        400,
        'INVALID_VALUE',
        "Column 'label' takes a single value, not an object; objects and arrays go only into JSON columns",
      ),
    );
    expect(await post('kinds', { doc: [1, [2]], label: 'json array' })).toMatchObject({
      status: 200,
    });
    const [stored] = await rows(
      "SELECT CAST(doc AS CHAR) AS doc FROM kinds WHERE label = 'json array'",
    );
    expect(JSON.parse(String(stored?.doc))).toEqual([1, [2]]);
  });

  test('a generated column → 400 naming it', async () => {
    expect(await post('kinds', { twice: 4 })).toMatchObject(
      error(
        400,
        'GENERATED_COLUMN',
        "Column 'twice' of table 'kinds' is generated by MySQL and cannot be written",
      ),
    );
  });

  test('many rows: all or none', async () => {
    const before = await count('people');
    const nullName = await post('people', [{ name: 'Ok1' }, { name: null }, { name: 'Ok3' }]);
    expect(nullName).toMatchObject(error(400, 'ER_BAD_NULL_ERROR', "Column 'name' cannot be null"));
    const missing = await post('people', [{ name: 'Ok1' }, { age: 5 }]);
    expect(missing).toMatchObject(
      error(400, 'ER_NO_DEFAULT_FOR_FIELD', "Field 'name' doesn't have a default value"),
    );
    const duplicate = await post('people', [
      { name: 'Ok1', email: 'dup@example.com' },
      { name: 'Ok2', email: 'dup@example.com' },
    ]);
    expect(duplicate).toMatchObject(error(409, 'ER_DUP_ENTRY'));
    expect(await count('people')).toBe(before);
  });

  test('10,000 rows in one request; 10,001 → 400', async () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ({ a: i }));
    expect((await post('bulk', many)).body).toEqual({
      success: true,
      message: INSERTED,
      insertId: 1,
      affectedRows: 10_000,
    });
    expect(await count('bulk')).toBe(10_000);
    expect(await post('bulk', [...many, { a: 0 }])).toMatchObject(
      error(
        400,
        'LIMIT_EXCEEDED',
        'At most 10000 rows can be inserted in one request; the body has 10001',
      ),
    );
    expect(await count('bulk')).toBe(10_000);
  });

  test.each<[string, unknown, string, string]>([
    [
      'an empty object',
      {},
      'INVALID_BODY',
      'The row is empty: give at least one column and its value',
    ],
    ['an empty array', [], 'INVALID_BODY', 'The array is empty: send at least one row'],
    [
      'a string',
      'Ann',
      'INVALID_BODY',
      'The body must be a JSON object (one row) or a non-empty array of objects, not a string',
    ],
    [
      'a number',
      5,
      'INVALID_BODY',
      'The body must be a JSON object (one row) or a non-empty array of objects, not a number',
    ],
    [
      'null',
      null,
      'INVALID_BODY',
      'The body must be a JSON object (one row) or a non-empty array of objects, not null',
    ],
    [
      'an array of non-objects',
      [{ name: 'x' }, 'y'],
      'INVALID_BODY',
      'Row 2 is a string, not a JSON object',
    ],
    [
      'an unknown column',
      { name: 'x', nope: 1 },
      'UNKNOWN_COLUMN',
      "Column 'nope' does not exist in table 'people': did you mean 'note'?",
    ],
  ])('%s → 400', async (_label, json, code, message) => {
    expect(await post('people', json)).toMatchObject(error(400, code, message));
  });
});

describe('PUT /table/<t>/update(<key>,<value>)', () => {
  test('sets the columns; affectedRows counts matched rows, also unchanged ones', async () => {
    const path = '/table/people/update(id,1)';
    expect(await put(path, { note: 'updated', age: 31 })).toMatchObject({
      status: 200,
      text: '{"success":true,"message":"Data updated successfully","affectedRows":1}',
    });
    expect(await rows('SELECT note, age FROM people WHERE id = 1')).toEqual([
      { note: 'updated', age: 31 },
    ]);
    // Same values again: nothing changes, one row still matches (CLIENT_FOUND_ROWS).
    expect((await put(path, { note: 'updated', age: 31 })).body).toEqual({
      success: true,
      message: UPDATED,
      affectedRows: 1,
    });
  });

  test('no matching row: 200 with affectedRows 0', async () => {
    expect(await put('/table/people/update(id,999)', { note: 'x' })).toMatchObject({
      status: 200,
      body: { success: true, message: UPDATED, affectedRows: 0 },
    });
  });

  test('several matching rows; null matches NULL', async () => {
    const nulls = Number((await rows('SELECT COUNT(*) AS n FROM people WHERE age IS NULL'))[0]?.n);
    expect(nulls).toBeGreaterThan(1);
    expect((await put('/table/people/update(age,null)', { age: 77 })).body).toEqual({
      success: true,
      message: UPDATED,
      affectedRows: nulls,
    });
    expect(await count('people')).toBe(
      Number((await rows('SELECT COUNT(*) AS n FROM people WHERE age IS NOT NULL'))[0]?.n),
    );
  });

  test('a big integer key is compared exactly', async () => {
    await db.admin.query(
      'INSERT INTO kinds (big, label) VALUES (9007199254740992, ?), (9007199254740993, ?)',
      ['lo', 'hi'],
    );
    expect(
      (await put('/table/kinds/update(big,9007199254740993)', { mood: 'happy' })).body,
    ).toEqual({
      success: true,
      message: UPDATED,
      affectedRows: 1,
    });
    expect(await rows("SELECT label FROM kinds WHERE mood = 'happy'")).toEqual([{ label: 'hi' }]);
  });

  test('a text key written as a bare number means that text', async () => {
    await db.admin.query("INSERT INTO keyed (k) VALUES ('007'), ('7')");
    expect((await put('/table/keyed/update(k,007)', { v: 1 })).body).toMatchObject({
      affectedRows: 1,
    });
    expect(await rows("SELECT k, v FROM keyed WHERE k IN ('007', '7') ORDER BY k")).toEqual([
      { k: '007', v: 1 },
      { k: '7', v: 0 },
    ]);
  });

  test.each<[string, unknown, string, string]>([
    [
      'an empty object',
      {},
      'INVALID_BODY',
      'The body has no columns: give at least one column and its new value',
    ],
    [
      'an array',
      [{ note: 'x' }],
      'INVALID_BODY',
      'The body must be a JSON object of the columns to change, not an array',
    ],
    [
      'a string',
      'x',
      'INVALID_BODY',
      'The body must be a JSON object of the columns to change, not a string',
    ],
    [
      'null',
      null,
      'INVALID_BODY',
      'The body must be a JSON object of the columns to change, not null',
    ],
    [
      'an unknown column',
      { nope: 1 },
      'UNKNOWN_COLUMN',
      "Column 'nope' does not exist in table 'people': did you mean 'note'?",
    ],
  ])('body that is %s → 400', async (_label, json, code, message) => {
    expect(await put('/table/people/update(id,1)', json)).toMatchObject(error(400, code, message));
  });

  test('unknown key column → 400; malformed call → 400; unknown action → 404', async () => {
    expect(await put('/table/people/update(nope,1)', { note: 'x' })).toMatchObject(
      error(
        400,
        'UNKNOWN_COLUMN',
        "Column 'nope' does not exist in table 'people': did you mean 'note'?",
      ),
    );
    expect(await put('/table/people/update(id,abc)', { note: 'x' })).toMatchObject(
      error(400, 'INVALID_VALUE', "The key value for column 'id' takes a number; 'abc' is not one"),
    );
    expect(await put('/table/people/update(id,1', { note: 'x' })).toMatchObject(
      error(
        400,
        'INVALID_QUERY',
        "Write update(<key>,<value>): 'update(id,1' has no closing parenthesis",
      ),
    );
    expect(await put('/table/people/update', { note: 'x' })).toMatchObject(
      error(400, 'INVALID_QUERY'),
    );
    expect(await put("/table/people/update(name,'x)", { note: 'x' })).toMatchObject(
      error(400, 'INVALID_QUERY'),
    );
    expect(await put('/table/people/upsert(id,1)', { note: 'x' })).toMatchObject(
      error(404, 'NOT_FOUND'),
    );
    // Another action's path: 405 with the method it takes.
    expect(await put('/table/people/delete(id,1)', { note: 'x' })).toMatchObject(
      error(405, 'METHOD_NOT_ALLOWED'),
    );
    expect(await put('/table/people/create', { note: 'x' })).toMatchObject(
      error(405, 'METHOD_NOT_ALLOWED'),
    );
  });

  test('20 concurrent updates of one row leave one of them, whole', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        put('/table/counters/update(id,1)', { n: i + 1, who: `w${i + 1}` }),
      ),
    );
    for (const answer of answers) {
      expect(answer).toMatchObject({
        status: 200,
        body: { success: true, message: UPDATED, affectedRows: 1 },
      });
    }
    const [row] = await rows('SELECT n, who FROM counters WHERE id = 1');
    expect(row?.n).toBeGreaterThanOrEqual(1);
    expect(row?.who).toBe(`w${row?.n}`);
    expect(await count('counters')).toBe(1);
  });
});

describe('DELETE /table/<t>/delete(<key>,<value>)', () => {
  test('deletes matching rows; none matching is 200 with 0', async () => {
    await db.admin.query("INSERT INTO plain (a, b) VALUES (10, 'd'), (10, 'd'), (11, 'e')");
    expect(await del('/table/plain/delete(a,10)')).toMatchObject({
      status: 200,
      text: '{"success":true,"message":"Data deleted successfully","affectedRows":2}',
    });
    expect(await rows('SELECT a FROM plain WHERE a IN (10, 11)')).toEqual([{ a: 11 }]);
    expect((await del('/table/plain/delete(a,10)')).body).toEqual({
      success: true,
      message: DELETED,
      affectedRows: 0,
    });
  });

  test('null matches NULL', async () => {
    await db.admin.query("INSERT INTO plain (a, b) VALUES (NULL, 'n1'), (NULL, 'n2')");
    expect((await del('/table/plain/delete(a,null)')).body).toEqual({
      success: true,
      message: DELETED,
      affectedRows: 2,
    });
    expect(await rows('SELECT * FROM plain WHERE a IS NULL')).toEqual([]);
  });

  test('a JSON Content-Type with an empty body is fine; the body is ignored', async () => {
    await db.admin.query("INSERT INTO plain (a, b) VALUES (20, 'x'), (21, 'y')");
    const empty = await send('DELETE', '/table/plain/delete(a,20)', {
      headers: { 'content-type': 'application/json' },
    });
    expect(empty.body).toEqual({ success: true, message: DELETED, affectedRows: 1 });
    const withBody = await send('DELETE', '/table/plain/delete(a,21)', { json: { ignored: true } });
    expect(withBody.body).toEqual({ success: true, message: DELETED, affectedRows: 1 });
  });

  test('unknown key column → 400; another action → 405; unknown action → 404', async () => {
    expect(await del('/table/plain/delete(nope,1)')).toMatchObject(error(400, 'UNKNOWN_COLUMN'));
    expect(await del('/table/plain/update(a,1)')).toMatchObject(error(405, 'METHOD_NOT_ALLOWED'));
    expect(await del('/table/plain/remove(a,1)')).toMatchObject(error(404, 'NOT_FOUND'));
  });
});

describe('keys and values in the path', () => {
  const values = [
    "O'Brien, Jo",
    'a(b)c',
    '(x, y)',
    '50%',
    '%27',
    '%2527',
    'x y',
    '  padded  ',
    'ü 日本 🎉',
    'a,b',
    'a/b',
    'q?x#h',
    "''",
    '+plus+',
    'back\\slash',
    'null',
    '5',
  ];
  const quoted = (value: string) => `'${value.replaceAll("'", "''")}'`;

  test.each(values)('%j: raw and percent-encoded, update and delete', async (value) => {
    await db.admin.query('INSERT INTO keyed (k) VALUES (?)', [value]);
    // Raw: only what a URL cannot carry is encoded (fetch itself encodes spaces and non-ASCII;
    // a URL parser reads `\\` as `/` in an http path).
    const raw = `update(k,${quoted(value)})`
      .replaceAll('%', '%25')
      .replaceAll('\\', '%5C')
      .replaceAll('/', '%2F')
      .replaceAll('?', '%3F')
      .replaceAll('#', '%23');
    expect((await put(`/table/keyed/${raw}`, { v: 1 })).body).toEqual({
      success: true,
      message: UPDATED,
      affectedRows: 1,
    });
    const encoded = encodeAll(`update(k,${quoted(value)})`);
    expect((await put(`/table/keyed/${encoded}`, { v: 2 })).body).toEqual({
      success: true,
      message: UPDATED,
      affectedRows: 1,
    });
    expect(await rows('SELECT v FROM keyed WHERE k = ?', [value])).toEqual([{ v: 2 }]);
    expect((await del(`/table/keyed/${encodeAll(`delete(k,${quoted(value)})`)}`)).body).toEqual({
      success: true,
      message: DELETED,
      affectedRows: 1,
    });
    expect(await rows('SELECT v FROM keyed WHERE k = ?', [value])).toEqual([]);
  });

  test('bare values: commas, quotes inside, spaces around, non-ASCII', async () => {
    await db.admin.query("INSERT INTO keyed (k) VALUES ('a,b'), ('O''Brien'), ('ü 日本'), ('x y')");
    for (const path of [
      'update(k,a,b)',
      "update(k,O'Brien)",
      `update(k,${encodeURIComponent('ü 日本')})`,
      'update(k,%20x%20y%20)',
      encodeAll('update(k,a,b)'),
    ]) {
      expect((await put(`/table/keyed/${path}`, { v: 9 })).body).toEqual({
        success: true,
        message: UPDATED,
        affectedRows: 1,
      });
    }
    expect(await rows('SELECT k FROM keyed WHERE v = 9 ORDER BY k')).toEqual([
      { k: 'a,b' },
      { k: "O'Brien" },
      { k: 'ü 日本' },
      { k: 'x y' },
    ]);
  });

  test('a raw % that is no percent-encoding → 400 (Fastify cannot decode the path)', async () => {
    for (const path of ["update(k,'50%')", "update(k,'%ZZ')", 'update(k,%E0%A4%A)']) {
      expect((await put(`/table/keyed/${path}`, { v: 1 })).status).toBe(400);
    }
  });

  test('reserved words as table and column names; a backtick-quoted key with a comma', async () => {
    expect((await post('order', { select: 'a', from: 1, 'we`ird, col': 'w' })).body).toEqual({
      success: true,
      message: INSERTED,
      insertId: null,
      affectedRows: 1,
    });
    expect((await put("/table/order/update(select,'a')", { from: 2 })).body).toEqual({
      success: true,
      message: UPDATED,
      affectedRows: 1,
    });
    expect((await put("/table/order/update(`we``ird, col`,'w')", { from: 3 })).body).toEqual({
      success: true,
      message: UPDATED,
      affectedRows: 1,
    });
    expect(await rows('SELECT * FROM `order`')).toEqual([
      { select: 'a', from: 3, 'we`ird, col': 'w' },
    ]);
    expect((await del('/table/order/delete(from,3)')).body).toEqual({
      success: true,
      message: DELETED,
      affectedRows: 1,
    });
    expect(await count('order')).toBe(0);
  });
});

describe('hostile input', () => {
  test('hostile keys and names answer 400/404 and every table stays intact', async () => {
    const tablesBefore = await rows('SHOW TABLES');
    const counts = async () =>
      Promise.all(tablesBefore.map((t) => count(String(Object.values(t)[0]))));
    const countsBefore = await counts();
    const hostile = 'id` = 1; DROP TABLE people; --';
    expect(await post('people', { [hostile]: 1, name: 'x' })).toMatchObject(
      error(400, 'UNKNOWN_COLUMN', `Column '${hostile}' does not exist in table 'people'`),
    );
    expect(
      await post('people', [{ name: 'x' }, { "name`) VALUES ('a'); DROP TABLE books; --": 1 }]),
    ).toMatchObject(error(400, 'UNKNOWN_COLUMN'));
    expect(await put('/table/people/update(id,1)', { [hostile]: 1 })).toMatchObject(
      error(400, 'UNKNOWN_COLUMN'),
    );
    expect(
      await put(`/table/people/${encodeAll(`update(${hostile},1)`)}`, { note: 'x' }),
    ).toMatchObject(error(400, 'UNKNOWN_COLUMN'));
    expect(await del(`/table/people/${encodeAll('delete(id,1 OR 1=1)')}`)).toMatchObject(
      error(400, 'INVALID_VALUE'),
    );
    expect(await del(`/table/people/${encodeAll("delete(name,'x' OR '1'='1')")}`)).toMatchObject(
      error(400, 'INVALID_QUERY'),
    );
    expect(await post(encodeAll('people`; DROP TABLE people; --'), { name: 'x' })).toMatchObject(
      error(404, 'UNKNOWN_TABLE'),
    );
    expect(await rows('SHOW TABLES')).toEqual(tablesBefore);
    expect(await counts()).toEqual(countsBefore);
  });

  // A 10 KB body nesting arrays 5,000 deep was a 500 (RangeError).
  test('a body nested deeper than 64 levels is a 400, whatever the column', async () => {
    // As text: the test's own JSON.stringify would overflow on them too.
    const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
    const raw = (method: string, path: string, body: string) =>
      send(method, path, { body, headers: { 'content-type': 'application/json' } });
    const tooDeep = error(
      400,
      'BODY_TOO_DEEP',
      'The JSON body nests arrays and objects deeper than 64 levels',
    );
    expect(await raw('POST', '/table/kinds/create', `{"doc":${deep(5000)}}`)).toMatchObject(
      tooDeep,
    );
    expect(await raw('POST', '/table/kinds/create', `[{"doc":${deep(5000)}}]`)).toMatchObject(
      tooDeep,
    );
    expect(await raw('POST', '/table/people/create', `{"name":${deep(5000)}}`)).toMatchObject(
      tooDeep,
    );
    expect(await raw('PUT', '/table/kinds/update(id,1)', `{"doc":${deep(64)}}`)).toMatchObject(
      tooDeep,
    );
    // Every route that parses a body, and a body sent to no route at all.
    expect(await raw('DELETE', '/table/kinds/delete(id,1)', deep(65))).toMatchObject(tooDeep);
    expect(await raw('POST', '/no/such/route', deep(65))).toMatchObject(tooDeep);
    expect(await raw('PATCH', '/table/kinds/read', deep(65))).toMatchObject(tooDeep);
    expect((await raw('POST', '/no/such/route', deep(64))).status).toBe(404);
    const objects = `[${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}]`;
    expect(await raw('POST', '/table/kinds/create', objects)).toMatchObject(tooDeep);
    // Within the limit the value reaches MySQL: stored, or refused by its own JSON depth limit.
    expect((await raw('POST', '/table/kinds/create', `{"doc":${deep(20)}}`)).status).toBe(200);
    expect((await raw('POST', '/table/kinds/create', `{"doc":${deep(63)}}`)).status).toBe(400);
  });
});

describe('errors', () => {
  test('unknown table → 404 for every method', async () => {
    const notFound = error(404, 'UNKNOWN_TABLE', "Table 'nope' does not exist");
    expect(await post('nope', { a: 1 })).toMatchObject(notFound);
    expect(await put('/table/nope/update(a,1)', { a: 1 })).toMatchObject(notFound);
    expect(await del('/table/nope/delete(a,1)')).toMatchObject(notFound);
  });

  test('the users table of auth mode cannot be written: 404 as if it did not exist', async () => {
    const table = 'users_created_by_tablegate';
    const notFound = error(404, 'UNKNOWN_TABLE', `Table '${table}' does not exist`);
    expect(await post(table, { id: 2, email: 'b@example.com', password: 'x' })).toMatchObject(
      notFound,
    );
    expect(await put(`/table/${table}/update(id,1)`, { password: 'x' })).toMatchObject(notFound);
    expect(await del(`/table/${table}/delete(id,1)`)).toMatchObject(notFound);
    expect(await rows(`SELECT * FROM ${table}`)).toEqual([
      { id: 1, email: 'a@example.com', password: 'hash' },
    ]);
  });

  test('unknown action → 404; the read action → 405', async () => {
    expect(await send('POST', '/table/people/insert', { json: { name: 'x' } })).toMatchObject(
      error(404, 'NOT_FOUND'),
    );
    expect(await send('POST', '/table/people/read', { json: { name: 'x' } })).toMatchObject(
      error(405, 'METHOD_NOT_ALLOWED', 'POST is not allowed here; this path answers GET, HEAD'),
    );
  });

  test('duplicate key → 409 ER_DUP_ENTRY', async () => {
    expect(await post('people', { name: 'Dup', email: 'ann@example.com' })).toMatchObject(
      error(409, 'ER_DUP_ENTRY', "Duplicate entry 'ann@example.com' for key 'email'"),
    );
    expect(await put('/table/people/update(id,2)', { email: 'ann@example.com' })).toMatchObject(
      error(409, 'ER_DUP_ENTRY'),
    );
  });

  test('foreign keys → 409 on insert and on delete of a referenced row', async () => {
    expect(await post('books', { author_id: 99, title: 'Ghost' })).toMatchObject(
      error(
        409,
        'ER_NO_REFERENCED_ROW_2',
        'A referenced row does not exist (foreign key constraint)',
      ),
    );
    expect(await del('/table/authors/delete(id,1)')).toMatchObject(
      error(
        409,
        'ER_ROW_IS_REFERENCED_2',
        'The row is referenced by another table (foreign key constraint)',
      ),
    );
    expect(await count('authors')).toBe(2);
    expect((await del('/table/authors/delete(id,2)')).body).toEqual({
      success: true,
      message: DELETED,
      affectedRows: 1,
    });
  });

  test('null, too long, out of range, bad date, bad enum → 400 with the MySQL name', async () => {
    expect(await post('people', { name: null })).toMatchObject(
      error(400, 'ER_BAD_NULL_ERROR', "Column 'name' cannot be null"),
    );
    expect(await post('people', { age: 5 })).toMatchObject(
      error(400, 'ER_NO_DEFAULT_FOR_FIELD', "Field 'name' doesn't have a default value"),
    );
    expect(await post('people', { name: 'x'.repeat(21) })).toMatchObject(
      error(400, 'ER_DATA_TOO_LONG', "Data too long for column 'name' at row 1"),
    );
    expect(await post('people', { name: 'x', age: 300 })).toMatchObject(
      error(400, 'ER_WARN_DATA_OUT_OF_RANGE', "Out of range value for column 'age' at row 1"),
    );
    expect(await post('people', { name: 'x', age: -1 })).toMatchObject(
      error(400, 'ER_WARN_DATA_OUT_OF_RANGE', "Out of range value for column 'age' at row 1"),
    );
    expect(await put('/table/people/update(id,1)', { name: null })).toMatchObject(
      error(400, 'ER_BAD_NULL_ERROR', "Column 'name' cannot be null"),
    );
    const badDate = await post('kinds', { day: '2024-02-30' });
    expect(badDate).toMatchObject(error(400, 'ER_TRUNCATED_WRONG_VALUE'));
    expect((badDate.body as { message: string }).message).toMatch(
      /^Incorrect date value: '2024-02-30' for column /,
    );
    // MariaDB says `db`.`kinds`.`day`; the database's name is not passed on.
    expect((badDate.body as { message: string }).message).not.toContain(db.name);
    expect(await post('kinds', { mood: 'angry' })).toMatchObject(
      error(400, 'INVALID_VALUE', "Column 'mood' must be one of 'happy', 'sad'; 'angry' is not"),
    );
    expect(await post('kinds', { flag: 2 })).toMatchObject(
      error(400, 'ER_DATA_TOO_LONG', "Data too long for column 'flag' at row 1"),
    );
    expect(await post('kinds', { ubig: '18446744073709551616' })).toMatchObject(
      error(400, 'ER_WARN_DATA_OUT_OF_RANGE', "Out of range value for column 'ubig' at row 1"),
    );
  });

  test('a CHECK constraint → 400 (MariaDB and MySQL name it differently)', async () => {
    const answer = await post('stock', { id: 1, qty: 0 });
    expect(answer.status).toBe(400);
    expect(['ER_CONSTRAINT_FAILED', 'ER_CHECK_CONSTRAINT_VIOLATED']).toContain(
      (answer.body as { code: string }).code,
    );
    expect((answer.body as { message: string }).message).toContain('qty_positive');
    expect((answer.body as { message: string }).message).not.toContain(db.name);
    expect(await count('stock')).toBe(0);
  });

  test('Content-Type: text/plain, none, or another type → 415; bad JSON → 400', async () => {
    const unsupported = error(
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      "Content-Type must be 'application/json'",
    );
    const json = '{"name":"x"}';
    expect(
      await send('POST', '/table/people/create', {
        body: json,
        headers: { 'content-type': 'text/plain' },
      }),
    ).toMatchObject(unsupported);
    expect(
      await send('PUT', '/table/people/update(id,1)', {
        body: json,
        headers: { 'content-type': 'text/plain' },
      }),
    ).toMatchObject(unsupported);
    // An ArrayBuffer body: fetch sends it without a Content-Type.
    expect(
      await send('POST', '/table/people/create', {
        body: new TextEncoder().encode(json).buffer as ArrayBuffer,
      }),
    ).toMatchObject(unsupported);
    expect(await send('POST', '/table/people/create')).toMatchObject(unsupported);
    expect(await send('PUT', '/table/people/update(id,1)')).toMatchObject(unsupported);
    expect(
      await send('POST', '/table/people/create', {
        body: json,
        headers: { 'content-type': 'application/xml' },
      }),
    ).toMatchObject(unsupported);
    expect(
      await send('POST', '/table/people/create', {
        body: json,
        headers: { 'content-type': 'application/json; charset=utf-8' },
      }),
    ).toMatchObject({ status: 200 });
    const jsonType = { 'content-type': 'application/json' };
    expect(
      await send('POST', '/table/people/create', { body: '{"name":', headers: jsonType }),
    ).toMatchObject(error(400, 'INVALID_JSON', 'Request body is not valid JSON'));
    expect(
      await send('POST', '/table/people/create', { body: '', headers: jsonType }),
    ).toMatchObject(error(400, 'INVALID_BODY'));
    expect(
      await send('PUT', '/table/people/update(id,1)', { body: "{'a':1}", headers: jsonType }),
    ).toMatchObject(error(400, 'INVALID_JSON'));
  });

  test('body over the limit → 413', async () => {
    const small = await startTestGateway(db.name, { bodyLimit: 1024 });
    try {
      const big = { name: 'x', note: 'y'.repeat(2000) };
      expect(
        await send('POST', '/table/people/create', { json: big, base: small.url }),
      ).toMatchObject(error(413, 'BODY_TOO_LARGE'));
      expect(
        await send('PUT', '/table/people/update(id,1)', { json: big, base: small.url }),
      ).toMatchObject(error(413, 'BODY_TOO_LARGE'));
      expect(
        await send('POST', '/table/plain/create', { json: { a: 1 }, base: small.url }),
      ).toMatchObject({ status: 200 });
    } finally {
      await small.close();
    }
  });

  test('a MySQL user with only SELECT → 403 for every write', async () => {
    const user = `tg_ro_${randomBytes(6).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    await db.admin.query(`CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`);
    let readOnly: TestGateway | null = null;
    try {
      await db.admin.query(`GRANT SELECT ON \`${db.name}\`.* TO '${user}'@'%'`);
      readOnly = await startTestGateway(db.name, { db: { ...gateway.config.db, user, password } });
      const base = readOnly.url;
      expect((await send('GET', '/table/authors/read', { base })).status).toBe(200);
      const denied = error(403, 'ER_TABLEACCESS_DENIED_ERROR');
      expect(await send('POST', '/table/plain/create', { json: { a: 1 }, base })).toMatchObject(
        denied,
      );
      expect(
        await send('PUT', '/table/plain/update(a,11)', { json: { a: 1 }, base }),
      ).toMatchObject(denied);
      expect(await send('DELETE', '/table/plain/delete(a,11)', { base })).toMatchObject(denied);
      expect(await rows('SELECT a FROM plain WHERE a = 11')).toEqual([{ a: 11 }]);
    } finally {
      await readOnly?.close();
      await db.admin.query(`DROP USER '${user}'@'%'`);
    }
  });

  test('MySQL unreachable → 503 Database unavailable', async () => {
    const { host, port } = gateway.config.db;
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((client) => {
      const upstream = net.connect(port, host);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => {});
        socket.on('close', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyPort = (proxy.address() as net.AddressInfo).port;
    const viaProxy = await startTestGateway(db.name, {
      db: { ...gateway.config.db, host: '127.0.0.1', port: proxyPort },
    });
    try {
      expect(
        (await send('POST', '/table/plain/create', { json: { a: 30 }, base: viaProxy.url })).status,
      ).toBe(200);
      await new Promise<void>((resolve) => {
        proxy.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      const unavailable = error(503, 'DATABASE_UNAVAILABLE', 'Database unavailable');
      expect(
        await send('POST', '/table/plain/create', { json: { a: 31 }, base: viaProxy.url }),
      ).toMatchObject(unavailable);
      expect(
        await send('PUT', '/table/plain/update(a,30)', { json: { a: 32 }, base: viaProxy.url }),
      ).toMatchObject(unavailable);
      expect(
        await send('DELETE', '/table/plain/delete(a,30)', { base: viaProxy.url }),
      ).toMatchObject(unavailable);
    } finally {
      await viaProxy.close();
    }
  });
});

describe('views', () => {
  test('a simple view: create, update and delete through it', async () => {
    const created = await post('adults', { name: 'Via', age: 33 });
    expect(created).toMatchObject({
      status: 200,
      body: { success: true, message: INSERTED, affectedRows: 1 },
    });
    expect(await rows("SELECT name, age FROM members WHERE name = 'Via'")).toEqual([
      { name: 'Via', age: 33 },
    ]);
    expect((await put("/table/adults/update(name,'Via')", { age: 34 })).body).toEqual({
      success: true,
      message: UPDATED,
      affectedRows: 1,
    });
    // The view only shows adults: the child is not matched through it.
    expect((await put("/table/adults/update(name,'Kid')", { age: 11 })).body).toMatchObject({
      affectedRows: 0,
    });
    expect((await del("/table/adults/delete(name,'Max')")).body).toEqual({
      success: true,
      message: DELETED,
      affectedRows: 2,
    });
    expect(await rows('SELECT name, age FROM members ORDER BY name')).toEqual([
      { name: 'Kid', age: 10 },
      { name: 'Via', age: 34 },
    ]);
  });

  test('a view WITH CHECK OPTION refuses rows it would not show → 400', async () => {
    expect(await post('checked_adults', { name: 'Young', age: 5 })).toMatchObject(
      error(
        400,
        'ER_VIEW_CHECK_FAILED',
        'The row would not be visible through the view afterwards, and the view has WITH CHECK OPTION',
      ),
    );
    expect(await put("/table/checked_adults/update(name,'Via')", { age: 5 })).toMatchObject(
      error(400, 'ER_VIEW_CHECK_FAILED'),
    );
    expect(await rows("SELECT age FROM members WHERE name IN ('Young', 'Via')")).toEqual([
      { age: 34 },
    ]);
  });

  test.each(['name_counts', 'distinct_names'])(
    '%s cannot be written: 405, an empty Allow and a clear message',
    async (view) => {
      // information_schema.VIEWS.IS_UPDATABLE says so: refused before MySQL is asked.
      const refused = error(
        405,
        'VIEW_NOT_WRITABLE',
        `View '${view}' cannot be written: MySQL writes only through simple views (no GROUP BY, DISTINCT, aggregate functions, UNION or subqueries in the select list); read it with GET /table/<view>/read`,
      );
      expect(await post(view, { name: 'x' })).toMatchObject(refused);
      expect(await put(`/table/${view}/update(name,'Kid')`, { name: 'y' })).toMatchObject(refused);
      expect(await del(`/table/${view}/delete(name,'Kid')`)).toMatchObject(refused);
      expect(await count('members')).toBe(2);
    },
  );
});

// The handlers answer from the driver's callback when the schema knows the table and columns; a
// table or column the gateway has not seen yet makes them wait for a schema read first.
describe('schema changes after start', () => {
  test('a table created after start: create, update and delete on first use', async () => {
    await db.admin.query(
      'CREATE TABLE late_c (id INT PRIMARY KEY, v INT); CREATE TABLE late_u (id INT PRIMARY KEY, v INT); ' +
        'CREATE TABLE late_d (id INT PRIMARY KEY, v INT); INSERT INTO late_u VALUES (1, 1); ' +
        'INSERT INTO late_d VALUES (1, 1), (2, 2)',
    );
    const [created, updated, deleted] = await Promise.all([
      post('late_c', { id: 7, v: 70 }),
      put('/table/late_u/update(id,1)', { v: 10 }),
      del('/table/late_d/delete(id,2)'),
    ]);
    expect(created).toMatchObject({ status: 200, type: 'application/json; charset=utf-8' });
    expect(created.text).toBe(
      `{"success":true,"message":"${INSERTED}","insertId":null,"affectedRows":1}`,
    );
    expect(updated.text).toBe(`{"success":true,"message":"${UPDATED}","affectedRows":1}`);
    expect(deleted.text).toBe(`{"success":true,"message":"${DELETED}","affectedRows":1}`);
    expect(await rows('SELECT * FROM late_c')).toEqual([{ id: 7, v: 70 }]);
    expect(await rows('SELECT * FROM late_u')).toEqual([{ id: 1, v: 10 }]);
    expect(await rows('SELECT * FROM late_d')).toEqual([{ id: 1, v: 1 }]);
  });

  test('a table created after start: a refused first write is the same 4xx', async () => {
    await db.admin.query(
      'CREATE TABLE late_bad (id INT PRIMARY KEY, v INT); CREATE TABLE late_dup (id INT PRIMARY KEY); ' +
        'INSERT INTO late_dup VALUES (1)',
    );
    expect(await post('late_bad', { nope: 1 })).toMatchObject(error(400, 'UNKNOWN_COLUMN'));
    expect(await post('late_dup', { id: 1 })).toMatchObject(error(409, 'ER_DUP_ENTRY'));
    expect(await rows('SELECT * FROM late_bad')).toEqual([]);
  });

  test('a column added after start: create, update and delete naming it on first use', async () => {
    await db.admin.query(
      'CREATE TABLE grows (id INT PRIMARY KEY, v INT); INSERT INTO grows VALUES (1, 1), (2, 2)',
    );
    // The gateway learns the table as it is now.
    expect((await post('grows', { id: 3, v: 3 })).status).toBe(200);
    await db.admin.query(
      'ALTER TABLE grows ADD COLUMN c1 INT NULL, ADD COLUMN c2 INT NULL, ADD COLUMN c3 INT NULL',
    );
    expect((await post('grows', { id: 4, c1: 40 })).text).toBe(
      `{"success":true,"message":"${INSERTED}","insertId":null,"affectedRows":1}`,
    );
    await db.admin.query('ALTER TABLE grows ADD COLUMN c4 INT NULL');
    expect((await put('/table/grows/update(id,1)', { c4: 14 })).text).toBe(
      `{"success":true,"message":"${UPDATED}","affectedRows":1}`,
    );
    await db.admin.query('ALTER TABLE grows ADD COLUMN c5 INT NULL; UPDATE grows SET c5 = id');
    expect((await del('/table/grows/delete(c5,2)')).text).toBe(
      `{"success":true,"message":"${DELETED}","affectedRows":1}`,
    );
    expect(await rows('SELECT id, v, c1, c4 FROM grows ORDER BY id')).toEqual([
      { id: 1, v: 1, c1: null, c4: 14 },
      { id: 3, v: 3, c1: null, c4: null },
      { id: 4, v: null, c1: 40, c4: null },
    ]);
  });
});
