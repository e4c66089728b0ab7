/**
 * The autocommit fast path of one-statement writes (plan/exact-write.ts): every value
 * the plan calls exact leaves no data warning on a real server in the gateway's strict session
 * (it is stored or it is an error), the values that do warn keep the transaction, and so do
 * tables whose triggers, generated columns or expression defaults could warn. Over HTTP, a
 * refused write stores nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { SESSION_SQL_MODE } from '../../src/db/pool.js';
import { readSchema } from '../../src/db/schema.js';
import type { TableInfo } from '../../src/db/schema-types.js';
import { openDatabase } from '../../src/execute/database.js';
import { insertIsExact, updateIsExact } from '../../src/plan/exact-write.js';
import { planInsert, planUpdate } from '../../src/plan/write-plan.js';
import { type KeyValue, parseWriteAction } from '../../src/query/key-value.js';
import { compileInsert } from '../../src/sql/compile-write.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testServer } from '../helpers/mysql-url.js';

const FIXTURE = `
CREATE TABLE edge (
  id INT AUTO_INCREMENT PRIMARY KEY,
  v VARCHAR(3), t TINYTEXT, d DATE, dt DATETIME, dt6 DATETIME(6), ts TIMESTAMP NULL DEFAULT NULL,
  n DECIMAL(5,2), i INT, f FLOAT, b VARBINARY(3), e ENUM('a','b'), tm TIME, j JSON
);
CREATE TABLE log (v VARCHAR(10));
CREATE TABLE logged (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10));
CREATE TRIGGER logged_copy AFTER INSERT ON logged FOR EACH ROW INSERT INTO log VALUES (NEW.v);
CREATE TABLE derived (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10), g VARCHAR(3) AS (v) STORED);
CREATE TABLE defaults (id INT AUTO_INCREMENT PRIMARY KEY, v INT, d DATE DEFAULT (NOW()));
`;

let db: TestDatabase;
let gateway: TestGateway;
let tables: Map<string, TableInfo>;

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  await db.admin.query(`SET sql_mode = '${SESSION_SQL_MODE}'`);
  const reader = await openDatabase(
    { ...testServer(), database: db.name, poolSize: 1 },
    { statementTimeoutMs: 10_000, stallTimeoutMs: 10_000 },
  );
  try {
    tables = await readSchema(reader, db.name);
  } finally {
    await reader.close();
  }
  gateway = await startTestGateway(db.name);
});

afterAll(async () => {
  await gateway?.close();
  await db?.drop();
});

function table(name: string): TableInfo {
  const found = tables.get(name);
  if (!found) throw new Error(`no table ${name}`);
  return found;
}

function keyOf(action: string): KeyValue {
  const parsed = parseWriteAction(action);
  if (parsed?.kind !== 'update' || parsed.match === null) throw new Error(action);
  return parsed.match;
}

/** Runs the plan's INSERT as the gateway would under autocommit: its warnings, or 'error'. */
async function warningsOf(body: Record<string, unknown>): Promise<number | 'error'> {
  const [result] = await db.admin
    .execute<ResultSetHeader>(...statement(body))
    .catch(() => [null] as const);
  return result === null ? 'error' : result.warningStatus;
}

function statement(body: Record<string, unknown>): [string, never[]] {
  const { sql, params } = compileInsert(planInsert(table('edge'), body));
  return [sql, params as never[]];
}

/** The plan's verdict, or 'refused' when the value codec refuses the value before any SQL. */
function verdict(body: Record<string, unknown>): boolean | 'refused' {
  try {
    return insertIsExact(planInsert(table('edge'), body));
  } catch {
    return 'refused';
  }
}

const EDGES: Record<string, unknown>[] = [
  { v: 'abc' },
  { v: 'ab ' },
  { v: 'abc  ' },
  { v: 'abcd' },
  { v: 'ééé' },
  { v: 'éééé' },
  { v: '😀😀' },
  { t: 'x'.repeat(255) },
  { t: 'é'.repeat(128) },
  { d: '2024-02-29' },
  { d: '2023-02-29' },
  { d: '2024-02-29 10:00:00' },
  { d: '2024-02-29T00:00:00' },
  { dt: '2024-01-01 10:00:00' },
  { dt: '2024-01-01T10:00:00' },
  { dt: '2024-01-01 10:00' },
  { dt: '2024-01-01' },
  { dt: '2024-01-01 25:00:00' },
  { dt: '2024-01-01 10:00:00Z' },
  { dt: '2024-01-01 10:00:00.000' },
  { dt6: '2024-01-01 10:00:00.123456' },
  { ts: '1970-01-01 00:00:01' },
  { ts: '2040-01-01 00:00:00' },
  { n: '123.45' },
  { n: 999.99 },
  { n: '1000' },
  { n: '1.005' },
  { i: 2147483647 },
  { i: 2147483648 },
  { i: '1e3' },
  { f: 1e300 },
  { f: 0.1 },
  { b: 'YWJj' },
  { b: 'YWJjZA==' },
  { e: 'a' },
  { e: 'a ' },
  { e: 'c' },
  { tm: '10:00:00.5' },
  { j: { a: [1, 2] } },
  { v: null, i: null },
];

describe('the autocommit fast path', () => {
  test('every value the plan calls exact is stored without a warning or refused with an error', async () => {
    const exact: string[] = [];
    for (const body of EDGES) {
      if (verdict(body) !== true) continue;
      exact.push(JSON.stringify(body));
      const warnings = await warningsOf(body);
      expect({ body, warnings }).toEqual({
        body,
        warnings: warnings === 'error' ? 'error' : 0,
      });
    }
    // Not vacuous: these are the cases the fast path takes (the rest keep the transaction).
    expect(exact).toEqual([
      '{"v":"abc"}',
      '{"v":"ab "}',
      `{"t":"${'x'.repeat(255)}"}`,
      '{"d":"2024-02-29"}',
      '{"d":"2023-02-29"}',
      '{"dt":"2024-01-01 10:00:00"}',
      '{"dt":"2024-01-01T10:00:00"}',
      '{"dt":"2024-01-01 10:00"}',
      '{"dt":"2024-01-01"}',
      '{"dt":"2024-01-01 25:00:00"}',
      // ISO 8601 with a zone: converted to UTC wall time before MySQL sees it.
      '{"dt":"2024-01-01 10:00:00Z"}',
      '{"dt":"2024-01-01 10:00:00.000"}',
      '{"dt6":"2024-01-01 10:00:00.123456"}',
      '{"ts":"1970-01-01 00:00:01"}',
      '{"ts":"2040-01-01 00:00:00"}',
      '{"n":"123.45"}',
      '{"n":999.99}',
      '{"n":"1000"}',
      '{"i":2147483647}',
      '{"i":2147483648}',
      '{"i":"1e3"}',
      '{"f":1e+300}',
      '{"f":0.1}',
      '{"b":"YWJj"}',
      '{"j":{"a":[1,2]}}',
      '{"v":null,"i":null}',
    ]);
  });

  test('the values MySQL stores changed with only a Note keep the transaction', async () => {
    const warners = [
      { v: 'abc  ' },
      { d: '2024-02-29 10:00:00' },
      { e: 'a ' },
      { tm: '10:00:00.5' },
      { t: 'é'.repeat(128) },
    ];
    for (const body of warners)
      expect({ body, exact: verdict(body) }).toEqual({ body, exact: false });
    // Why: on the server each of the first two is stored changed with a warning.
    expect(await warningsOf({ v: 'abc  ' })).toBe(1);
    expect(await warningsOf({ d: '2024-02-29 10:00:00' })).toBe(1);
  });

  test('a refused write stores nothing: trailing spaces cut, a DATE given a time', async () => {
    await db.admin.query('DELETE FROM edge');
    for (const body of [{ v: 'abc  ' }, { d: '2024-02-29 10:00:00' }]) {
      const response = await fetch(`${gateway.url}/table/edge/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ success: false, code: 'WARN_DATA_TRUNCATED' });
    }
    const [rows] = await db.admin.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM edge');
    expect(Number(rows[0]?.n)).toBe(0);
  });

  test('triggers, generated columns and expression defaults keep the transaction', async () => {
    expect(table('logged').hasTriggers).toBe(true);
    expect(table('edge').hasTriggers).toBe(false);
    expect(insertIsExact(planInsert(table('logged'), { v: 'abc' }))).toBe(false);
    expect(insertIsExact(planInsert(table('derived'), { v: 'abc' }))).toBe(false);
    expect(insertIsExact(planInsert(table('defaults'), { v: 1 }))).toBe(false);
    expect(insertIsExact(planInsert(table('defaults'), { v: 1, d: '2024-01-01' }))).toBe(true);
    expect(updateIsExact(planUpdate(table('logged'), keyOf('update(id,1)'), { v: 'a' }))).toBe(
      false,
    );
  });

  test('a fast-path create, update and delete answer as before', async () => {
    const create = await fetch(`${gateway.url}/table/edge/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ v: 'xyz', n: '1.5', dt: '2024-01-01 10:00:00' }),
    });
    const created = (await create.json()) as { insertId: number };
    expect(create.status).toBe(200);
    expect(created).toEqual({
      success: true,
      message: 'Data inserted successfully',
      insertId: expect.any(Number),
      affectedRows: 1,
    });
    const update = await fetch(`${gateway.url}/table/edge/update(id,${created.insertId})`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ i: 7 }),
    });
    expect(await update.json()).toEqual({
      success: true,
      message: 'Data updated successfully',
      affectedRows: 1,
    });
    const [rows] = await db.admin.query<RowDataPacket[]>(
      'SELECT v, n, dt, i FROM edge WHERE id = ?',
      [created.insertId],
    );
    expect(rows).toEqual([{ v: 'xyz', n: '1.50', dt: '2024-01-01 10:00:00', i: 7 }]);
    const gone = await fetch(`${gateway.url}/table/edge/delete(id,${created.insertId})`, {
      method: 'DELETE',
    });
    expect(await gone.json()).toEqual({
      success: true,
      message: 'Data deleted successfully',
      affectedRows: 1,
    });
  });
});
