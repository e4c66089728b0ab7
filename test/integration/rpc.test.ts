/**
 * Stored procedures and functions at `/rpc/<name>` (docs/routines.md) on the real gateway and a
 * real MariaDB: result sets (none, one, several) typed as table rows, OUT and INOUT parameters
 * of every type family, a function per return type, SIGNAL, a procedure's own transaction
 * (committed, failed half-way, left open), what a routine leaves on its session, the time limit,
 * routines the gateway's MySQL user may not execute, routines created after start, the API
 * description, and hostile names and bodies — each checked against what the database holds.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testServer } from '../helpers/mysql-url.js';

const FIXTURE = `
CREATE TABLE kinds (
  id INT PRIMARY KEY, tiny TINYINT, big BIGINT UNSIGNED, amount DECIMAL(12,4), ratio FLOAT,
  precise DOUBLE, born YEAR, flags BIT(10), day DATE, stamp DATETIME(3), ts TIMESTAMP(2) NULL,
  span TIME(2), code CHAR(3), name VARCHAR(40), body TEXT, size ENUM('s','m','l'),
  tags SET('a','b','c'), raw VARBINARY(8), blob_value BLOB, doc JSON
);
INSERT INTO kinds VALUES (1, -5, 18446744073709551615, -12.3456, 1.1, 0.1, 2024, b'1010000001',
  '2024-02-29', '2024-02-29 23:59:58.123', '2024-01-01 00:00:01.25', '-838:59:58.25', 'abc',
  'Zoë "quoted"', 'line1\nline2', 'm', 'a,c', 0x00FF10, 0x0102, '{"k": [1, 2.5, null]}');
INSERT INTO kinds (id) VALUES (2);
CREATE TABLE ledger (id INT PRIMARY KEY, note VARCHAR(40) NOT NULL);
CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40) NOT NULL);

CREATE PROCEDURE no_results(IN n INT) BEGIN INSERT INTO audit (what) VALUES (CONCAT('n=', n)); END;
CREATE PROCEDURE one_result() BEGIN SELECT * FROM kinds ORDER BY id; END;
CREATE PROCEDURE two_results(IN lo INT)
  BEGIN SELECT id, name FROM kinds WHERE id >= lo ORDER BY id; SELECT 1 AS one, 'x' AS two, NULL AS nothing; END;
CREATE PROCEDURE empty_result() BEGIN SELECT id FROM kinds WHERE id < 0; END;
CREATE PROCEDURE expressions()
  BEGIN
    SELECT 1 + 1 AS sum_int, 9007199254740993 AS big_int, CAST(1.50 AS DECIMAL(5,2)) AS dec_value,
      1e0 / 3 AS dbl, DATE('2024-01-02') AS d, CAST('2024-01-02 03:04:05.5' AS DATETIME(1)) AS dt,
      CAST('10:11:12.5' AS TIME(1)) AS t, 0x41FF AS bin, JSON_OBJECT('a', 1, 'b', JSON_ARRAY(true, 'x')) AS j,
      CONCAT('é', 'ß') AS s, NULL AS n, b'101' AS bits, YEAR('2024-05-06') AS y,
      (SELECT flags FROM kinds WHERE id = 1) AS bit_column;
  END;
CREATE PROCEDURE outs(IN a DECIMAL(10,2), OUT doubled DECIMAL(10,2), INOUT counter INT)
  BEGIN SET doubled = a * 2; SET counter = counter + 1; END;
CREATE PROCEDURE every_type(
  IN i_int INT, IN i_big BIGINT UNSIGNED, IN i_dec DECIMAL(12,4), IN i_float FLOAT, IN i_double DOUBLE,
  IN i_year YEAR, IN i_bit BIT(10), IN i_date DATE, IN i_dt DATETIME(3), IN i_ts TIMESTAMP(2),
  IN i_time TIME(2), IN i_char CHAR(3), IN i_text TEXT, IN i_enum ENUM('s','m','l'),
  IN i_set SET('a','b','c'), IN i_bin VARBINARY(8), IN i_json JSON,
  OUT o_int INT, OUT o_big BIGINT UNSIGNED, OUT o_dec DECIMAL(12,4), OUT o_float FLOAT,
  OUT o_double DOUBLE, OUT o_year YEAR, OUT o_bit BIT(10), OUT o_date DATE, OUT o_dt DATETIME(3),
  OUT o_ts TIMESTAMP(2), OUT o_time TIME(2), OUT o_char CHAR(3), OUT o_text TEXT,
  OUT o_enum ENUM('s','m','l'), OUT o_set SET('a','b','c'), OUT o_bin VARBINARY(8), OUT o_json JSON)
  BEGIN
    SET o_int = i_int, o_big = i_big, o_dec = i_dec, o_float = i_float, o_double = i_double,
      o_year = i_year, o_bit = i_bit, o_date = i_date, o_dt = i_dt, o_ts = i_ts, o_time = i_time,
      o_char = i_char, o_text = i_text, o_enum = i_enum, o_set = i_set, o_bin = i_bin, o_json = i_json;
  END;
CREATE PROCEDURE nulls(IN a INT, INOUT b VARCHAR(10), OUT c DATE) BEGIN SET b = CONCAT(IFNULL(b, '∅'), '!'); END;

CREATE FUNCTION f_int(a INT, b INT) RETURNS INT DETERMINISTIC RETURN a + b;
CREATE FUNCTION f_big() RETURNS BIGINT UNSIGNED DETERMINISTIC RETURN 18446744073709551615;
CREATE FUNCTION f_dec(a DECIMAL(10,2)) RETURNS DECIMAL(12,3) DETERMINISTIC RETURN a * 1.5;
CREATE FUNCTION f_float() RETURNS FLOAT DETERMINISTIC RETURN 1.1;
CREATE FUNCTION f_double() RETURNS DOUBLE DETERMINISTIC RETURN 0.1;
CREATE FUNCTION f_year() RETURNS YEAR DETERMINISTIC RETURN 1999;
CREATE FUNCTION f_bit() RETURNS BIT(10) DETERMINISTIC RETURN b'1000000001';
CREATE FUNCTION f_date(d DATE) RETURNS DATE DETERMINISTIC RETURN d + INTERVAL 1 DAY;
CREATE FUNCTION f_dt() RETURNS DATETIME(3) DETERMINISTIC RETURN '2024-01-01 01:02:03.456';
CREATE FUNCTION f_time() RETURNS TIME(1) DETERMINISTIC RETURN '-01:02:03.4';
CREATE FUNCTION f_text(s VARCHAR(20)) RETURNS VARCHAR(40) DETERMINISTIC RETURN CONCAT('<', s, '>');
CREATE FUNCTION f_enum() RETURNS ENUM('s','m','l') DETERMINISTIC RETURN 'l';
CREATE FUNCTION f_bin() RETURNS VARBINARY(4) DETERMINISTIC RETURN 0x01FF;
CREATE FUNCTION f_json() RETURNS JSON DETERMINISTIC RETURN JSON_OBJECT('a', 1);
CREATE FUNCTION f_null() RETURNS INT DETERMINISTIC RETURN NULL;
CREATE FUNCTION f_tiny() RETURNS TINYINT(1) DETERMINISTIC RETURN TRUE;
CREATE FUNCTION f_small() RETURNS SMALLINT UNSIGNED DETERMINISTIC RETURN 65535;
CREATE FUNCTION f_medium() RETURNS MEDIUMINT DETERMINISTIC RETURN -8388608;
CREATE FUNCTION f_ts() RETURNS TIMESTAMP(2) DETERMINISTIC RETURN '2038-01-19 03:14:07.99';
CREATE FUNCTION f_dt0() RETURNS DATETIME DETERMINISTIC RETURN '1000-01-01 00:00:00';
CREATE FUNCTION f_char() RETURNS CHAR(4) DETERMINISTIC RETURN 'ab';
CREATE FUNCTION f_long_text() RETURNS LONGTEXT DETERMINISTIC RETURN REPEAT('é', 3);
CREATE FUNCTION f_set() RETURNS SET('a','b','c') DETERMINISTIC RETURN 'a,c';
CREATE FUNCTION f_blob() RETURNS BLOB DETERMINISTIC RETURN UNHEX('00FF');
CREATE FUNCTION f_reads() RETURNS INT READS SQL DATA RETURN (SELECT COUNT(*) FROM kinds);
CREATE FUNCTION \`now\`() RETURNS VARCHAR(10) DETERMINISTIC RETURN 'mine';

CREATE PROCEDURE refuse(IN amount INT)
  BEGIN
    IF amount > 100 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'Amount over the limit: ask a manager'; END IF;
    SELECT amount;
  END;
CREATE PROCEDURE refuse_after_rows()
  BEGIN SELECT 1 AS first; SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'late refusal', MYSQL_ERRNO = 5001; END;
CREATE FUNCTION f_refuse() RETURNS INT DETERMINISTIC
  BEGIN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'functions refuse too'; RETURN 1; END;

CREATE PROCEDURE commits(IN n INT)
  BEGIN START TRANSACTION; INSERT INTO ledger VALUES (n, 'first'); INSERT INTO ledger VALUES (n + 1, 'second'); COMMIT; END;
CREATE PROCEDURE fails_half_way(IN n INT)
  BEGIN START TRANSACTION; INSERT INTO ledger VALUES (n, 'kept?'); INSERT INTO ledger VALUES (n, 'duplicate'); COMMIT; END;
CREATE PROCEDURE autocommitted_then_fails(IN n INT)
  BEGIN INSERT INTO ledger VALUES (n, 'autocommitted'); INSERT INTO ledger VALUES (n, 'duplicate'); END;
CREATE PROCEDURE leaves_open(IN n INT) BEGIN START TRANSACTION; INSERT INTO ledger VALUES (n, 'never'); END;
CREATE PROCEDURE autocommit_off() BEGIN SET autocommit = 0; END;
CREATE PROCEDURE shifts_time_zone() BEGIN SET time_zone = '+05:00'; SELECT @@time_zone AS zone; END;
CREATE PROCEDURE slow(IN s DOUBLE) BEGIN DO SLEEP(s); INSERT INTO audit (what) VALUES ('after sleep'); SELECT 'done' AS done; END;
CREATE PROCEDURE session_zone() BEGIN SELECT @@time_zone AS zone, @@autocommit AS autocommit; END;
`;

let db: TestDatabase;
let gw: TestGateway;

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

async function call(method: string, path: string, body?: unknown, base = gw.url): Promise<Answer> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.headers = { 'content-type': 'application/json' };
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: text ? JSON.parse(text) : null,
  };
}

const post = (name: string, body?: unknown) =>
  call('POST', `/rpc/${encodeURIComponent(name)}`, body);

async function rows(sql: string): Promise<mysql.RowDataPacket[]> {
  const [found] = await db.admin.query<mysql.RowDataPacket[]>(sql);
  return found;
}

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  gw = await startTestGateway(db.name);
});

afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

describe('procedures: result sets typed as table rows', () => {
  test('no result set: results is empty, the statement ran', async () => {
    const answer = await post('no_results', { n: 7 });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('{"success":true,"results":[],"out":{}}');
    expect(await rows("SELECT what FROM audit WHERE what = 'n=7'")).toHaveLength(1);
  });

  test('one result set: every column family of a table, exactly as a read gives it', async () => {
    const answer = await post('one_result');
    expect(answer.status).toBe(200);
    const read = await call('GET', '/table/kinds/read?$orderby=id');
    expect(answer.body).toEqual({ success: true, results: [read.body], out: {} });
    expect(answer.body).toEqual({
      success: true,
      results: [
        [
          {
            id: 1,
            tiny: -5,
            big: '18446744073709551615',
            amount: -12.3456,
            ratio: 1.1,
            precise: 0.1,
            born: 2024,
            flags: 641,
            day: '2024-02-29',
            stamp: '2024-02-29 23:59:58.123',
            ts: '2024-01-01 00:00:01.25',
            span: '-838:59:58.25',
            code: 'abc',
            name: 'Zoë "quoted"',
            body: 'line1\nline2',
            size: 'm',
            tags: 'a,c',
            raw: 'AP8Q',
            blob_value: 'AQI=',
            doc: { k: [1, 2.5, null] },
          },
          {
            id: 2,
            tiny: null,
            big: null,
            amount: null,
            ratio: null,
            precise: null,
            born: null,
            flags: null,
            day: null,
            stamp: null,
            ts: null,
            span: null,
            code: null,
            name: null,
            body: null,
            size: null,
            tags: null,
            raw: null,
            blob_value: null,
            doc: null,
          },
        ],
      ],
      out: {},
    });
    // DECIMAL keeps its digits in the JSON text itself.
    expect(answer.text).toContain('"amount":-12.3456,');
  });

  test('several result sets, in order; an empty one is an empty array', async () => {
    const answer = await post('two_results', { lo: 2 });
    expect(answer.body).toEqual({
      success: true,
      results: [[{ id: 2, name: null }], [{ one: 1, two: 'x', nothing: null }]],
      out: {},
    });
    expect((await post('empty_result')).body).toEqual({ success: true, results: [[]], out: {} });
  });

  test('columns of expressions take their kind from the field metadata', async () => {
    const answer = await post('expressions');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      results: [
        [
          {
            sum_int: 2,
            big_int: '9007199254740993',
            dec_value: 1.5,
            dbl: 1 / 3,
            d: '2024-01-02',
            dt: '2024-01-02 03:04:05.5',
            t: '10:11:12.5',
            bin: 'Qf8=',
            j: { a: 1, b: [true, 'x'] },
            s: 'éß',
            n: null,
            // A b'…' literal is a binary string in MySQL; a BIT column is a number.
            bits: 'BQ==',
            y: 2024,
            bit_column: 641,
          },
        ],
      ],
      out: {},
    });
    expect(answer.text).toContain('"dec_value":1.50,');
  });
});

describe('procedures: OUT and INOUT parameters', () => {
  test('OUT and INOUT come back by name, typed as declared', async () => {
    const answer = await post('outs', { a: '12.25', counter: 41 });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('{"success":true,"results":[],"out":{"doubled":24.50,"counter":42}}');
  });

  test('NULL in, NULL out; an OUT the procedure never sets is null', async () => {
    const answer = await post('nulls', { a: null, b: null });
    expect(answer.body).toEqual({ success: true, results: [], out: { b: '∅!', c: null } });
  });

  test('the OUT variables do not outlive the call on its connection', async () => {
    await post('outs', { a: 1, counter: 1 });
    const answer = await call('POST', '/rpc/one_result');
    expect(answer.status).toBe(200);
    // A later procedure on the same pool reads the variables as never set.
    await db.admin.query(
      'CREATE OR REPLACE PROCEDURE peek() BEGIN SELECT @tablegate_p2 AS p2, @tablegate_p3 AS p3; END',
    );
    for (let i = 0; i < 6; i++) {
      expect((await post('peek')).body).toEqual({
        success: true,
        results: [[{ p2: null, p3: null }]],
        out: {},
      });
    }
  });

  test('every parameter type family, in and out again', async () => {
    const args = {
      i_int: -2147483648,
      i_big: '18446744073709551615',
      i_dec: '-12345678.1234',
      i_float: 1.1,
      i_double: 0.1,
      i_year: 2155,
      i_bit: 1023,
      i_date: '2024-02-29',
      i_dt: '2024-02-29 23:59:58.123',
      i_ts: '2038-01-19 03:14:07.25',
      i_time: '-838:59:58.25',
      i_char: 'a"c',
      i_text: "it's\nmultiline ✓ 🙂",
      i_enum: 'l',
      i_set: 'a,b',
      i_bin: 'AP8QAA==',
      i_json: '{"k": [1, "two"]}',
    };
    const answer = await post('every_type', args);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      results: [],
      out: {
        o_int: -2147483648,
        o_big: '18446744073709551615',
        o_dec: -12345678.1234,
        o_float: 1.1,
        o_double: 0.1,
        o_year: 2155,
        o_bit: 1023,
        o_date: '2024-02-29',
        o_dt: '2024-02-29 23:59:58.123',
        o_ts: '2038-01-19 03:14:07.25',
        o_time: '-838:59:58.25',
        o_char: 'a"c',
        o_text: "it's\nmultiline ✓ 🙂",
        o_enum: 'l',
        o_set: 'a,b',
        o_bin: 'AP8QAA==',
        // MariaDB's JSON is LONGTEXT: a JSON parameter is its text (docs/routines.md).
        o_json: '{"k": [1, "two"]}',
      },
    });
    expect(answer.text).toContain('"o_dec":-12345678.1234,');
  });
});

describe('functions: one value, typed as declared', () => {
  test.each([
    ['f_int?a=40&b=2', 42],
    ['f_big', '18446744073709551615'],
    ['f_dec?a=2.50', 3.75],
    ['f_float', 1.1],
    ['f_double', 0.1],
    ['f_year', 1999],
    ['f_bit', 513],
    ['f_date?d=2024-02-28', '2024-02-29'],
    ['f_dt', '2024-01-01 01:02:03.456'],
    ['f_time', '-01:02:03.4'],
    ['f_text?s=%E2%9C%93%20%27x%27', "<✓ 'x'>"],
    ['f_enum', 'l'],
    ['f_bin', 'Af8='],
    ['f_json', '{"a": 1}'],
    ['f_null', null],
    ['f_tiny', 1],
    ['f_small', 65535],
    ['f_medium', -8388608],
    ['f_ts', '2038-01-19 03:14:07.99'],
    ['f_dt0', '1000-01-01 00:00:00'],
    ['f_char', 'ab'],
    ['f_long_text', 'ééé'],
    ['f_set', 'a,c'],
    ['f_blob', 'AP8='],
    ['f_reads', 2],
    ['now', 'mine'],
  ])('GET /rpc/%s', async (path, value) => {
    const answer = await call('GET', `/rpc/${path}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ success: true, value });
  });

  test('the DECIMAL digits as declared', async () => {
    expect((await call('GET', '/rpc/f_dec?a=2.50')).text).toBe('{"success":true,"value":3.750}');
  });

  test('POST with a JSON body, NULL included', async () => {
    expect((await post('f_int', { a: 1, b: 2 })).body).toEqual({ success: true, value: 3 });
    expect((await post('f_int', { a: null, b: 2 })).body).toEqual({ success: true, value: null });
  });

  test('a parameter given twice, missing or unknown is 400', async () => {
    expect((await call('GET', '/rpc/f_int?a=1&a=2&b=3')).body).toEqual({
      success: false,
      message: "Parameter 'a' is given more than once",
      code: 'INVALID_ARGUMENTS',
    });
    expect((await call('GET', '/rpc/f_int?a=1')).body).toEqual({
      success: false,
      message:
        "Parameter 'b' of routine 'f_int' is missing: every IN and INOUT parameter is required (send null for NULL)",
      code: 'MISSING_PARAMETER',
    });
    expect((await call('GET', '/rpc/f_int?a=1&b=2&$top=1')).body).toEqual({
      success: false,
      message: "Routine 'f_int' has no parameter '$top' to send",
      code: 'UNKNOWN_PARAMETER',
    });
  });

  test('GET of a procedure is 405, naming POST', async () => {
    const answer = await call('GET', '/rpc/one_result');
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('POST');
    expect(answer.body).toEqual({
      success: false,
      message: "'one_result' is a stored procedure: call it with POST",
      code: 'PROCEDURE_NEEDS_POST',
    });
  });
});

describe('arguments: every one required, none unknown, values exact', () => {
  test.each([
    [
      { a: 1 },
      400,
      'MISSING_PARAMETER',
      "Parameter 'counter' of routine 'outs' is missing: every IN and INOUT parameter is required (send null for NULL)",
    ],
    [
      { a: 1, counter: 1, extra: 2 },
      400,
      'UNKNOWN_PARAMETER',
      "Routine 'outs' has no parameter 'extra' to send",
    ],
    [
      { a: 1, counter: 1, doubled: 2 },
      400,
      'UNKNOWN_PARAMETER',
      `Routine 'outs' has no parameter 'doubled' to send: 'doubled' is an OUT parameter, whose value comes back in "out"`,
    ],
    [
      { a: 1.005, counter: 1 },
      400,
      'INVALID_VALUE',
      "Parameter 'a' holds at most 2 digits after the decimal point; 1.005 would be rounded",
    ],
    [
      { a: 1, counter: 1.5 },
      400,
      'INVALID_VALUE',
      "Parameter 'counter' takes whole numbers; 1.5 is not one",
    ],
    [
      { a: 'abc', counter: 1 },
      400,
      'INVALID_VALUE',
      "Parameter 'a' takes a number; 'abc' is not one",
    ],
    [
      { a: [1], counter: 1 },
      400,
      'INVALID_VALUE',
      "Parameter 'a' takes a single value, not an array; objects and arrays go only into JSON columns",
    ],
    [
      [1, 2],
      400,
      'INVALID_BODY',
      "The body must be a JSON object of the routine's parameters by name, not an array",
    ],
    [
      '"text"',
      400,
      'INVALID_BODY',
      "The body must be a JSON object of the routine's parameters by name, not a string",
    ],
  ])('%j → %i %s', async (body, status, code, message) => {
    const answer = await post('outs', body);
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({ success: false, message, code });
  });

  test('a value MySQL refuses for the parameter maps as for writes', async () => {
    const answer = await post('f_text', { s: 'x'.repeat(21) });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ success: false, code: 'ER_DATA_TOO_LONG' });
    const date = await call('GET', '/rpc/f_date?d=2024-02-30');
    expect(date.status).toBe(400);
    expect(date.body).toMatchObject({ success: false, code: 'ER_TRUNCATED_WRONG_VALUE' });
    expect(date.text).not.toContain(db.name);
  });

  test('no body, or an empty one, is no arguments', async () => {
    expect((await call('POST', '/rpc/one_result')).status).toBe(200);
    const empty = await fetch(`${gw.url}/rpc/one_result`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(empty.status).toBe(200);
    expect((await post('no_results')).body).toMatchObject({ code: 'MISSING_PARAMETER' });
  });

  test('a body that is not JSON is 415', async () => {
    const answer = await fetch(`${gw.url}/rpc/no_results`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'n=1',
    });
    expect(answer.status).toBe(415);
  });
});

describe('SIGNAL and other errors', () => {
  test("SIGNAL SQLSTATE '45000' is 400 ROUTINE_ERROR with its MESSAGE_TEXT", async () => {
    expect((await post('refuse', { amount: 5 })).body).toEqual({
      success: true,
      results: [[{ amount: 5 }]],
      out: {},
    });
    const answer = await post('refuse', { amount: 500 });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      success: false,
      message: 'Amount over the limit: ask a manager',
      code: 'ROUTINE_ERROR',
    });
  });

  test('a SIGNAL after a result set, with an error number of its own, still refuses', async () => {
    const answer = await post('refuse_after_rows');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, message: 'late refusal', code: 'ROUTINE_ERROR' });
  });

  test('a function refuses the same way', async () => {
    expect((await call('GET', '/rpc/f_refuse')).body).toEqual({
      success: false,
      message: 'functions refuse too',
      code: 'ROUTINE_ERROR',
    });
  });

  test("a trigger's SIGNAL behind a table write answers the same, and nothing is written", async () => {
    await db.admin.query(`
      CREATE TABLE guarded (id INT PRIMARY KEY, qty INT NOT NULL);
      CREATE TRIGGER guarded_qty BEFORE INSERT ON guarded FOR EACH ROW
        IF NEW.qty < 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'qty may not be negative'; END IF;`);
    const answer = await call('POST', '/table/guarded/create', { id: 1, qty: -1 });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      success: false,
      message: 'qty may not be negative',
      code: 'ROUTINE_ERROR',
    });
    expect(await rows('SELECT id FROM guarded')).toEqual([]);
  });

  test('a routine with a spatial parameter or value is not served (no GeoJSON codec yet)', async () => {
    await db.admin.query(`
      CREATE PROCEDURE spatial_in(IN p POINT) SELECT ST_X(p) AS x;
      CREATE FUNCTION spatial_out() RETURNS POINT DETERMINISTIC RETURN POINT(1, 2);`);
    expect((await post('spatial_in', { p: 'POINT(1 2)' })).status).toBe(404);
    expect((await call('GET', '/rpc/spatial_out')).status).toBe(404);
    const document = (await call('GET', '/openapi.json')).body as { paths: object };
    expect(Object.keys(document.paths).filter((p) => p.includes('spatial'))).toEqual([]);
  });

  test('an unknown routine is 404, for GET and POST', async () => {
    const missing = {
      success: false,
      message: "Routine 'nope' does not exist: did you mean 'now'?",
      code: 'UNKNOWN_ROUTINE',
    };
    expect(await call('GET', '/rpc/nope')).toMatchObject({ status: 404, body: missing });
    expect(await post('nope', { a: 1 })).toMatchObject({ status: 404, body: missing });
  });

  test('an unknown routine within two edits of one served gets a "did you mean"', async () => {
    const meant = (name: string, served: string) => ({
      status: 404,
      body: {
        success: false,
        message: `Routine '${name}' does not exist: did you mean '${served}'?`,
        code: 'UNKNOWN_ROUTINE',
      },
    });
    expect(await call('GET', '/rpc/f_doubl')).toMatchObject(meant('f_doubl', 'f_double'));
    expect(await post('one_reslt', {})).toMatchObject(meant('one_reslt', 'one_result'));
  });
});

describe("a procedure's own transaction", () => {
  test('COMMIT inside the procedure keeps its rows', async () => {
    expect((await post('commits', { n: 10 })).status).toBe(200);
    expect(await rows('SELECT id, note FROM ledger WHERE id IN (10, 11) ORDER BY id')).toEqual([
      { id: 10, note: 'first' },
      { id: 11, note: 'second' },
    ]);
  });

  test('failing half-way inside its transaction: the error maps as for writes, nothing is kept', async () => {
    const answer = await post('fails_half_way', { n: 20 });
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ success: false, code: 'ER_DUP_ENTRY' });
    expect(await rows('SELECT id FROM ledger WHERE id = 20')).toEqual([]);
    // Nothing of it stays open on a pooled connection for another request to commit.
    for (let i = 0; i < 4; i++)
      expect((await post('commits', { n: 100 + 2 * i })).status).toBe(200);
    expect(await rows('SELECT id FROM ledger WHERE id = 20')).toEqual([]);
  });

  test('without a transaction of its own, what ran before the failure stays (as for any client)', async () => {
    const answer = await post('autocommitted_then_fails', { n: 30 });
    expect(answer.status).toBe(409);
    expect(await rows('SELECT note FROM ledger WHERE id = 30')).toEqual([
      { note: 'autocommitted' },
    ]);
  });

  test('a transaction left open is rolled back and answered 502', async () => {
    const answer = await post('leaves_open', { n: 40 });
    expect(answer.status).toBe(502);
    expect(answer.body).toEqual({
      success: false,
      message:
        'The procedure returned with its transaction still open (no COMMIT or ROLLBACK): the gateway rolled it back, so nothing done in that transaction was kept',
      code: 'ROUTINE_TRANSACTION_OPEN',
    });
    for (let i = 0; i < 4; i++)
      expect((await post('commits', { n: 200 + 2 * i })).status).toBe(200);
    expect(await rows('SELECT id FROM ledger WHERE id = 40')).toEqual([]);
  });
});

describe('what a routine leaves on its session does not reach other requests', () => {
  /** Every pool connection, as a procedure sees its session. */
  async function sessions(): Promise<unknown[]> {
    const seen = await Promise.all(
      Array.from({ length: 8 }, () => post('session_zone').then((a) => a.body)),
    );
    return [...new Set(seen.map((body) => JSON.stringify(body)))].map((text) => JSON.parse(text));
  }

  test('a call that changes nothing gives its connection back (no reconnect per call)', async () => {
    await db.admin.query(`
      CREATE PROCEDURE whoami(INOUT n INT, OUT id BIGINT) BEGIN SET n = n + 1, id = CONNECTION_ID(); SELECT 1 AS one; END;
      CREATE FUNCTION f_whoami() RETURNS BIGINT DETERMINISTIC RETURN CONNECTION_ID();`);
    const ids = new Set<unknown>();
    for (let i = 0; i < 10; i++) {
      const answer = (await post('whoami', { n: i })).body as { out: { id: number } };
      ids.add(answer.out.id);
      ids.add(((await call('GET', '/rpc/f_whoami')).body as { value: number }).value);
    }
    // One after another, the same few pool connections (4 at most), not 20 new ones.
    expect(ids.size).toBeLessThanOrEqual(4);
  });

  test('a changed time zone: the connection is not used again', async () => {
    const answer = await post('shifts_time_zone');
    expect(answer.body).toEqual({ success: true, results: [[{ zone: '+05:00' }]], out: {} });
    expect(await sessions()).toEqual([
      { success: true, results: [[{ zone: '+00:00', autocommit: 1 }]], out: {} },
    ]);
  });

  test('autocommit switched off: later writes still commit', async () => {
    expect((await post('autocommit_off')).status).toBe(200);
    expect(await sessions()).toEqual([
      { success: true, results: [[{ zone: '+00:00', autocommit: 1 }]], out: {} },
    ]);
    for (let i = 0; i < 4; i++) {
      expect((await call('POST', '/table/ledger/create', { id: 300 + i, note: 'w' })).status).toBe(
        200,
      );
    }
    expect(await rows('SELECT id FROM ledger WHERE id BETWEEN 300 AND 303')).toHaveLength(4);
  });
});

describe('hostile names and bodies', () => {
  test('a routine whose name needs quoting is called by that name', async () => {
    await db.admin.query(
      'CREATE PROCEDURE `we"ird``name; DROP TABLE ledger` (IN `p``q` VARCHAR(40)) SELECT `p``q` AS echoed',
    );
    const answer = await post('we"ird`name; DROP TABLE ledger', {
      'p`q': "'); DROP TABLE ledger; --",
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      results: [[{ echoed: "'); DROP TABLE ledger; --" }]],
      out: {},
    });
    expect(await rows("SHOW TABLES LIKE 'ledger'")).toHaveLength(1);
  });

  test.each([
    ['one_result`; DROP TABLE ledger; --'],
    ["one_result'"],
    ['one_result()'],
    ['ONE_RESULT'],
    ['../table/kinds/read'],
    ['%00'],
  ])('%s is 404', async (name) => {
    const answer = await post(name);
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ success: false, code: 'UNKNOWN_ROUTINE' });
    expect(await rows("SHOW TABLES LIKE 'ledger'")).toHaveLength(1);
  });

  test('hostile keys and values are refused or bound, never SQL', async () => {
    expect((await post('refuse', { 'amount) ; DROP TABLE ledger; --': 1, amount: 1 })).status).toBe(
      400,
    );
    expect(
      (await call('POST', '/rpc/refuse', '{"__proto__": {"amount": 1}, "amount": 1}')).status,
    ).toBe(400);
    const text = await post('f_text', { s: "x'); DROP TABLE ledger; --" });
    expect(text.status).toBe(400); // too long for VARCHAR(20): refused, not cut
    expect((await post('f_text', { s: "'||'" })).body).toEqual({ success: true, value: "<'||'>" });
    expect((await call('GET', '/rpc/f_int?a=1%20OR%201%3D1&b=1')).status).toBe(400);
    expect(await rows("SHOW TABLES LIKE 'ledger'")).toHaveLength(1);
  });
});

describe('the schema cache', () => {
  test('a routine created after start is served; one dropped is 404', async () => {
    expect((await call('GET', '/rpc/late')).status).toBe(404);
    await db.admin.query('CREATE FUNCTION late() RETURNS INT DETERMINISTIC RETURN 7');
    expect((await call('GET', '/rpc/late')).body).toEqual({ success: true, value: 7 });
    await db.admin.query('DROP FUNCTION late');
    const gone = await call('GET', '/rpc/late');
    expect(gone.status).toBe(404);
  });

  test('a changed signature is seen by the API description', async () => {
    await db.admin.query('CREATE FUNCTION grows(a INT) RETURNS INT DETERMINISTIC RETURN a');
    const before = (await call('GET', '/openapi.json')).body as { paths: Record<string, unknown> };
    expect(JSON.stringify(before.paths['/rpc/grows'])).not.toContain('"b"');
    await db.admin.query(
      'DROP FUNCTION grows; CREATE FUNCTION grows(a INT, b INT) RETURNS INT DETERMINISTIC RETURN a + b',
    );
    const after = (await call('GET', '/openapi.json')).body as { paths: Record<string, unknown> };
    expect(JSON.stringify(after.paths['/rpc/grows'])).toContain('"b"');
  });
});

describe('the API description', () => {
  test('lists every routine with its parameters and types', async () => {
    const document = (await call('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      tags: { name: string }[];
    };
    expect(document.tags.map((t) => t.name)).toContain('rpc');
    const outs = document.paths['/rpc/outs'];
    expect(Object.keys(outs ?? {})).toEqual(['post']);
    const request = outs?.post?.requestBody as { content: Record<string, { schema: unknown }> };
    const body = request.content['application/json']?.schema;
    expect(body).toEqual({
      type: 'object',
      properties: {
        a: { type: ['number', 'null'], description: 'decimal(10,2); exactly the stored digits' },
        counter: {
          type: ['integer', 'null'],
          minimum: -2147483648,
          maximum: 2147483647,
          description: 'int(11); INOUT',
        },
      },
      required: ['a', 'counter'],
      additionalProperties: false,
    });
    expect(Object.keys(document.paths['/rpc/f_int'] ?? {})).toEqual(['get', 'post']);
    const get = document.paths['/rpc/f_int']?.get as { parameters: { name: string }[] };
    expect(get.parameters.map((p) => p.name)).toEqual(['a', 'b']);
  });
});

describe('--query-timeout', () => {
  let short: TestGateway;
  beforeAll(async () => {
    short = await startTestGateway(db.name, { queryTimeoutMs: 1000 });
  });
  afterAll(async () => {
    await short?.close();
  });

  test('a slow routine is cut at the limit (504) and stops', async () => {
    const started = Date.now();
    const answer = await call('POST', '/rpc/slow', { s: 3 }, short.url);
    const took = Date.now() - started;
    expect(answer.status).toBe(504);
    expect(answer.body).toEqual({
      success: false,
      message: 'The query took longer than the configured time limit',
      code: 'QUERY_TIMEOUT',
    });
    // Not before the limit; and cut by it (the 504), the routine's 3 s being under no other.
    expect(took).toBeGreaterThanOrEqual(900);
    // The routine was stopped, not just its SLEEP: its INSERT, due at 3 s, never ran.
    await new Promise((resolve) => setTimeout(resolve, 3500 - took));
    expect(await rows("SELECT id FROM audit WHERE what = 'after sleep'")).toEqual([]);
    // The gateway serves on.
    expect((await call('POST', '/rpc/slow', { s: 0 }, short.url)).status).toBe(200);
  });
});

describe('--anonymous-query-timeout', () => {
  let anonymous: TestGateway;
  beforeAll(async () => {
    // Open mode: every request is without a token, under the anonymous limit.
    anonymous = await startTestGateway(db.name, { anonymousQueryTimeoutMs: 1000 });
  });
  afterAll(async () => {
    await anonymous?.close();
  });

  test("a call runs under its caller's limit, not the query timeout's", async () => {
    // Under the query timeout (30 s) its 3 s would be served: the 504 is the 1 s limit's.
    const answer = await call('POST', '/rpc/slow', { s: 3 }, anonymous.url);
    expect(answer.status).toBe(504);
  });
});

describe('results too large to answer', () => {
  test('the routine is stopped and the call is 400, past 32 Mi characters of JSON', async () => {
    await db.admin.query(
      "CREATE PROCEDURE huge() BEGIN SELECT REPEAT('x', 7340032) AS chunk FROM kinds, kinds AS k2, kinds AS k3; END",
    );
    const answer = await post('huge');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      success: false,
      message:
        "The routine's results are more than 33554432 characters of JSON, the most one answer carries: it was stopped (what it wrote before may stay)",
      code: 'ROUTINE_RESULT_TOO_LARGE',
    });
    expect((await post('one_result')).status).toBe(200);
  });
});

describe("a routine the gateway's MySQL user may not execute", () => {
  const name = `tg_${randomBytes(4).toString('hex')}`;
  const account = `'${name}'@'%'`;
  const password = randomBytes(12).toString('hex');
  let narrow: TestGateway;

  beforeAll(async () => {
    await db.admin.query(`CREATE USER ${account} IDENTIFIED BY '${password}'`);
    // CREATE ROUTINE shows it every routine of the database in information_schema; EXECUTE is
    // granted on one function only.
    await db.admin.query(`GRANT SELECT, CREATE ROUTINE ON \`${db.name}\`.* TO ${account}`);
    await db.admin.query(`GRANT EXECUTE ON FUNCTION \`${db.name}\`.f_int TO ${account}`);
    const server = testServer();
    narrow = await startTestGateway(db.name, {
      db: { ...server, user: name, password, database: db.name, poolSize: 2 },
    });
  });
  afterAll(async () => {
    await narrow?.close();
    await db.admin.query(`DROP USER IF EXISTS ${account}`);
  });

  test('is not served — 404, and not described — though information_schema lists it', async () => {
    const own = await mysql.createConnection({ ...testServer(), user: name, password });
    const [visible] = await own.query<mysql.RowDataPacket[]>(
      'SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?',
      [db.name],
    );
    await own.end();
    expect(visible.map((row) => row.ROUTINE_NAME)).toEqual(
      expect.arrayContaining(['one_result', 'f_date', 'f_int']),
    );
    expect((await call('GET', '/rpc/f_int?a=1&b=2', undefined, narrow.url)).body).toEqual({
      success: true,
      value: 3,
    });
    expect((await call('GET', '/rpc/f_date?d=2024-01-01', undefined, narrow.url)).status).toBe(404);
    expect((await call('POST', '/rpc/one_result', undefined, narrow.url)).status).toBe(404);
    const document = (await call('GET', '/openapi.json', undefined, narrow.url)).body as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/rpc/'))).toEqual([
      '/rpc/f_int',
    ]);
  });

  test('EXECUTE granted after start: served at the first call that names it', async () => {
    await db.admin.query(`GRANT EXECUTE ON PROCEDURE \`${db.name}\`.two_results TO ${account}`);
    const answer = await call('POST', '/rpc/two_results', { lo: 2 }, narrow.url);
    expect(answer.status).toBe(200);
    expect((answer.body as { results: unknown[] }).results).toHaveLength(2);
  });
});

describe("the README's example", () => {
  /** The section's text: its SQL, and the answers its curl lines print. */
  const section =
    readFileSync('README.md', 'utf8')
      .split('\n## Stored procedures and functions: `/rpc/<name>`\n')[1]
      ?.split('\n## ')[0] ?? '';
  const sql = /```sql\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const printed = [...section.matchAll(/^# (?:(\d{3}) )?(\{.*\})$/gm)].map((m) => ({
    status: Number(m[1] ?? 200),
    text: m[2],
  }));
  let shop: TestDatabase;
  let shopGateway: TestGateway;

  beforeAll(async () => {
    shop = await createTestDatabase(`
      CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, customer_id INT NOT NULL,
        product_id INT NOT NULL) AUTO_INCREMENT = 41;
      CREATE TABLE payments (id INT AUTO_INCREMENT PRIMARY KEY, customer_id INT NOT NULL,
        amount DECIMAL(10,2) NOT NULL, paid_on DATE NOT NULL);
      INSERT INTO payments (customer_id, amount, paid_on) VALUES
        (7, 100.25, '2024-05-01'), (7, 20.25, '2024-06-30'), (7, 99, '2024-07-01'), (8, 5, '2024-01-01');
      ${sql}`);
    shopGateway = await startTestGateway(shop.name);
  });
  afterAll(async () => {
    await shopGateway?.close();
    await shop?.drop();
  });

  test('answers what it prints', async () => {
    expect(sql).toContain('CREATE PROCEDURE place_order');
    const asked = [
      await call(
        'POST',
        '/rpc/place_order',
        { customer: 7, product: 3, stock: 5 },
        shopGateway.url,
      ),
      await call(
        'GET',
        '/rpc/customer_balance?customer=7&day=2024-06-30',
        undefined,
        shopGateway.url,
      ),
      await call(
        'POST',
        '/rpc/place_order',
        { customer: 7, product: 3, stock: 0 },
        shopGateway.url,
      ),
    ];
    expect(asked.map(({ status, text }) => ({ status, text }))).toEqual(printed);
  });
});
