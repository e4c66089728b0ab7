/**
 * What a real OData client sends (docs/filters.md): `odata-query` 8 builds query
 * strings from object specs, the gateway answers them over HTTP, and every answer (ids, every
 * value, and X-Total-Count) is compared with the same query written by hand in SQL and run
 * directly on MariaDB, on a table of 3,000 rows. The gateway is the built command (dist/cli.js)
 * in a process of its own with TZ=America/St_Johns (UTC−03:30), so nothing may depend on the
 * gateway's zone (Jest's sandbox keeps its own process.env, so TZ cannot be set in-process).
 * MySQL's global time_zone is left alone (other test files share the server); the reference
 * connection changes its session zone instead, and the gateway's answers must not move.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { RowDataPacket } from 'mysql2';
import buildQuery, { raw } from 'odata-query';
import { freePort } from '../../src/demo/private-server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testServer } from '../helpers/mysql-url.js';

const TZ = 'America/St_Johns';
const CLI = path.resolve('dist/cli.js');

const ROWS = 3000;
const FIXTURE = `
CREATE TABLE items (
  id INT PRIMARY KEY,
  name VARCHAR(60) NOT NULL,
  category VARCHAR(20) NOT NULL,
  price DECIMAL(8,2) NOT NULL,
  note VARCHAR(40) NULL,
  created_at DATETIME(3) NOT NULL,
  stamped TIMESTAMP(6) NULL,
  day DATE NOT NULL,
  opens TIME(3) NOT NULL
);
INSERT INTO items
  SELECT seq,
    CONCAT(IF(seq % 3 = 0, '  ', ''), ELT(1 + seq % 4, 'Alpha', 'beta', 'GAMMA', 'Delta'),
      ' item ', seq, IF(seq % 5 = 0, '  ', '')),
    CONCAT('Cat-', seq % 20),
    (seq * 37 % 10000) / 100,
    IF(seq % 7 = 0, NULL, CONCAT('n', seq)),
    '2023-12-20 00:00:00' + INTERVAL seq * 397 MINUTE + INTERVAL (seq % 1000) * 1000 MICROSECOND,
    NULL,
    '2023-12-20' + INTERVAL seq % 60 DAY,
    SEC_TO_TIME(seq * 37 % 86400 + (seq % 2) * 0.5)
  FROM seq_1_to_${ROWS};
-- The rows the exact-time rules are about.
UPDATE items SET created_at = '2024-01-03 00:00:00' WHERE id = 1;
UPDATE items SET created_at = '2024-01-03 00:00:00.123' WHERE id = 2;
UPDATE items SET created_at = '2024-01-02 22:00:00' WHERE id = 3;
UPDATE items SET day = '2024-01-03' WHERE id IN (1, 2, 3);
-- TIMESTAMP written in UTC (the test database's session runs time_zone '+00:00').
UPDATE items SET stamped = created_at WHERE id % 2 = 1;
`;

let db: TestDatabase;
let home: string;
let gateway: ChildProcess | undefined;
let url: string;

/** The gateway as a user starts it, in its own process, with a non-UTC TZ. */
async function startGateway(): Promise<void> {
  const server = testServer();
  const port = await freePort();
  // A state directory of its own; nothing else from this environment.
  home = await mkdtemp(path.join(os.tmpdir(), 'tablegate-odata-'));
  const args = ['-h', server.host, '-u', server.user, '-p', server.password];
  args.push('-P', String(server.port), '-D', db.name, '-o', String(port));
  const child = spawn(process.execPath, [CLI, 'run', ...args], {
    env: { PATH: process.env.PATH, HOME: home, TZ },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  gateway = child;
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the gateway exited: ${stderr}`);
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`the gateway did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  await startGateway();
}, 60_000);

afterAll(async () => {
  if (gateway !== undefined && gateway.exitCode === null) {
    const exited = new Promise((r) => gateway?.on('exit', r));
    gateway.kill('SIGTERM');
    await exited;
  }
  await db?.drop();
  if (home !== undefined) await rm(home, { recursive: true, force: true });
});

type Row = Record<string, unknown>;
const COLUMNS = [
  'id',
  'name',
  'category',
  'price',
  'note',
  'created_at',
  'stamped',
  'day',
  'opens',
];

/** The gateway's answer to the query string odata-query built, sent as a client sends it. */
async function viaGateway(query: string): Promise<{ rows: Row[]; total: string | null }> {
  // odata-query leaves spaces, quotes and `+` unencoded; fetch's URL parser encodes the spaces
  // and quotes, and a raw `+` reaches the gateway as a space, as it would from a browser.
  const response = await fetch(`${url}/table/items/read${query}`);
  const text = await response.text();
  expect({ query, status: response.status, text: response.ok ? '' : text }).toEqual({
    query,
    status: 200,
    text: '',
  });
  return { rows: JSON.parse(text) as Row[], total: response.headers.get('x-total-count') };
}

/**
 * The hand-written SQL on a connection of its own (UTC session, as TIMESTAMP needs), through the
 * text protocol: it writes DATETIME(n) and TIME(n) with exactly n fractional digits, as MySQL
 * shows them and the gateway answers them ('00:04:19.500' for a TIME(3); mysql2's binary protocol
 * would give '00:04:19.5').
 */
async function viaSql(sql: string): Promise<Row[]> {
  const [rows] = await db.admin.query<RowDataPacket[]>(sql);
  // DECIMAL comes back as exact text; the gateway's JSON number has the same digits.
  return rows.map((row) =>
    'price' in row ? { ...row, price: Number(row.price as string) } : { ...row },
  );
}

const ALL = COLUMNS.join(', ');

interface Spec {
  readonly name: string;
  /** What odata-query is given. */
  readonly spec: NonNullable<Parameters<typeof buildQuery>[0]>;
  /** What odata-query must send (its filter), to keep this test honest about the client. */
  readonly sends: string;
  /** The same query by hand: everything after `FROM items`. */
  readonly sql: string;
  /** For $count: the WHERE clause alone. */
  readonly countWhere?: string;
}

const SPECS: readonly Spec[] = [
  // The 14 specs an OData client was first checked with.
  {
    name: 'eq',
    spec: { filter: { category: 'Cat-7' }, orderBy: 'id' },
    sends: "category eq 'Cat-7'",
    sql: "WHERE category = 'Cat-7' ORDER BY id",
  },
  {
    name: 'gt … and …',
    spec: { filter: { price: { gt: 50, lt: 52.5 } }, orderBy: 'id' },
    sends: 'price gt 50 and price lt 52.5',
    sql: 'WHERE price > 50 AND price < 52.5 ORDER BY id',
  },
  {
    name: 'or',
    spec: { filter: { or: [{ category: 'Cat-1' }, { category: 'Cat-2' }] }, orderBy: 'id' },
    sends: "((category eq 'Cat-1') or (category eq 'Cat-2'))",
    sql: "WHERE category = 'Cat-1' OR category = 'Cat-2' ORDER BY id",
  },
  {
    name: 'in',
    spec: { filter: { category: { in: ['Cat-1', 'Cat-4'] } }, orderBy: 'id' },
    sends: "category in ('Cat-1','Cat-4')",
    sql: "WHERE category IN ('Cat-1', 'Cat-4') ORDER BY id",
  },
  {
    name: 'contains',
    spec: { filter: { name: { contains: 'item 12' } }, orderBy: 'id' },
    sends: "contains(name,'item 12')",
    sql: "WHERE name LIKE '%item 12%' ORDER BY id",
  },
  {
    name: 'startswith',
    spec: { filter: { name: { startswith: 'beta' } }, orderBy: 'id' },
    sends: "startswith(name,'beta')",
    sql: "WHERE name LIKE 'beta%' ORDER BY id",
  },
  {
    name: 'ne null',
    spec: { filter: { note: { ne: null } }, orderBy: 'id', top: 200 },
    sends: 'note ne null',
    sql: 'WHERE note IS NOT NULL ORDER BY id LIMIT 200',
  },
  {
    name: 'not',
    spec: { filter: { not: { category: 'Cat-5' } }, orderBy: 'id', top: 300 },
    sends: "not (category eq 'Cat-5')",
    sql: "WHERE NOT (category = 'Cat-5') ORDER BY id LIMIT 300",
  },
  {
    name: '$select + $count',
    spec: { select: ['id', 'name'], count: true, filter: { category: 'Cat-9' }, orderBy: 'id' },
    sends: "category eq 'Cat-9'",
    sql: "WHERE category = 'Cat-9' ORDER BY id",
    countWhere: "WHERE category = 'Cat-9'",
  },
  {
    name: '$skip',
    spec: { filter: { category: 'Cat-3' }, orderBy: 'id', skip: 40, top: 25 },
    sends: "category eq 'Cat-3'",
    sql: "WHERE category = 'Cat-3' ORDER BY id LIMIT 25 OFFSET 40",
  },
  {
    name: 'a Date: gt',
    spec: { filter: { created_at: { gt: new Date(Date.UTC(2024, 0, 3)) } }, orderBy: 'id' },
    sends: 'created_at gt 2024-01-03T00:00:00.000Z',
    sql: "WHERE created_at > '2024-01-03 00:00:00' ORDER BY id",
  },
  {
    name: 'a Date range: ge … lt',
    spec: {
      filter: {
        created_at: {
          ge: new Date(Date.UTC(2024, 0, 2, 6)),
          lt: new Date(Date.UTC(2024, 0, 9, 12, 30)),
        },
      },
      orderBy: 'id',
    },
    sends: 'created_at ge 2024-01-02T06:00:00.000Z and created_at lt 2024-01-09T12:30:00.000Z',
    sql: "WHERE created_at >= '2024-01-02 06:00:00' AND created_at < '2024-01-09 12:30:00' ORDER BY id",
  },
  {
    name: 'contains(tolower(category))',
    spec: { filter: { 'tolower(category)': { contains: 'cat-7' } }, orderBy: 'id' },
    sends: "contains(tolower(category),'cat-7')",
    sql: "WHERE LOWER(category) LIKE '%cat-7%' ORDER BY id",
  },
  {
    name: 'year(created_at) eq 2024',
    spec: { filter: { 'year(created_at)': 2024 }, orderBy: 'id', top: 500 },
    sends: 'year(created_at) eq 2024',
    sql: 'WHERE YEAR(created_at) = 2024 ORDER BY id LIMIT 500',
  },
  // The functions and literals beyond them.
  {
    name: 'toupper',
    spec: { filter: { 'toupper(name)': { startswith: 'BETA ITEM 1' } }, orderBy: 'id' },
    sends: "startswith(toupper(name),'BETA ITEM 1')",
    sql: "WHERE UPPER(name) LIKE 'BETA ITEM 1%' ORDER BY id",
  },
  {
    name: 'trim',
    spec: { filter: { 'trim(name)': { in: ['GAMMA item 15', 'Alpha item 20'] } }, orderBy: 'id' },
    sends: "trim(name) in ('GAMMA item 15','Alpha item 20')",
    sql: "WHERE TRIM(name) IN ('GAMMA item 15', 'Alpha item 20') ORDER BY id",
  },
  {
    name: 'length',
    spec: { filter: { 'length(name)': { ge: 17 } }, orderBy: 'id' },
    sends: 'length(name) ge 17',
    sql: 'WHERE CHAR_LENGTH(name) >= 17 ORDER BY id',
  },
  {
    name: 'month',
    spec: { filter: { 'month(created_at)': 2, 'day(created_at)': { le: 3 } }, orderBy: 'id' },
    sends: 'month(created_at) eq 2 and day(created_at) le 3',
    sql: 'WHERE MONTH(created_at) = 2 AND DAYOFMONTH(created_at) <= 3 ORDER BY id',
  },
  {
    name: 'hour, minute, second on TIME',
    spec: {
      filter: { 'hour(opens)': 5, 'minute(opens)': { lt: 30 }, 'second(opens)': { ge: 10 } },
      orderBy: 'id',
    },
    sends: 'hour(opens) eq 5 and minute(opens) lt 30 and second(opens) ge 10',
    sql: 'WHERE HOUR(opens) = 5 AND MINUTE(opens) < 30 AND SECOND(opens) >= 10 ORDER BY id',
  },
  {
    name: 'a date literal on a DATE column',
    spec: { filter: { day: raw('2024-01-03') }, orderBy: 'id' },
    sends: 'day eq 2024-01-03',
    sql: "WHERE day = '2024-01-03' ORDER BY id",
  },
  {
    name: 'date literals on a DATETIME column: that day at 00:00:00',
    spec: {
      filter: { created_at: { ge: raw('2024-01-03'), lt: raw('2024-01-04') } },
      orderBy: 'id',
    },
    sends: 'created_at ge 2024-01-03 and created_at lt 2024-01-04',
    sql: "WHERE created_at >= '2024-01-03 00:00:00' AND created_at < '2024-01-04 00:00:00' ORDER BY id",
  },
  {
    name: 'date(created_at)',
    spec: { filter: { 'date(created_at)': raw('2024-01-05') }, orderBy: 'id' },
    sends: 'date(created_at) eq 2024-01-05',
    sql: "WHERE DATE(created_at) = '2024-01-05' ORDER BY id",
  },
  {
    name: 'a timeofday on a TIME column',
    spec: { filter: { opens: { lt: raw('00:30:00.5') } }, orderBy: 'id' },
    sends: 'opens lt 00:30:00.5',
    sql: "WHERE opens < '00:30:00.5' ORDER BY id",
  },
  {
    name: 'an offset +02:00 (sent with a raw +)',
    spec: { filter: { created_at: { le: raw('2024-01-03T02:00:00+02:00') } }, orderBy: 'id' },
    sends: 'created_at le 2024-01-03T02:00:00+02:00',
    sql: "WHERE created_at <= '2024-01-03 00:00:00' ORDER BY id",
  },
  {
    name: 'a negative offset, across midnight',
    spec: { filter: { created_at: { lt: raw('2024-01-02T20:30:00-05:30') } }, orderBy: 'id' },
    sends: 'created_at lt 2024-01-02T20:30:00-05:30',
    sql: "WHERE created_at < '2024-01-03 02:00:00' ORDER BY id",
  },
  {
    name: 'a fractional second',
    spec: { filter: { created_at: new Date(Date.UTC(2024, 0, 3, 0, 0, 0, 123)) }, orderBy: 'id' },
    sends: 'created_at eq 2024-01-03T00:00:00.123Z',
    sql: "WHERE created_at = '2024-01-03 00:00:00.123' ORDER BY id",
  },
  {
    name: 'a TIMESTAMP column with a Date',
    spec: { filter: { stamped: { ge: new Date(Date.UTC(2024, 0, 10, 7)) } }, orderBy: 'id' },
    sends: 'stamped ge 2024-01-10T07:00:00.000Z',
    sql: "WHERE stamped >= '2024-01-10 07:00:00' ORDER BY id",
  },
  {
    name: 'a DATE column with a Date (that day at 00:00:00 UTC)',
    spec: { filter: { day: { lt: new Date(Date.UTC(2024, 0, 3, 10)) } }, orderBy: 'id' },
    sends: 'day lt 2024-01-03T10:00:00.000Z',
    sql: "WHERE day < '2024-01-03 10:00:00' ORDER BY id",
  },
];

describe('odata-query specs answered exactly as the same SQL', () => {
  test.each(SPECS.map((s): [string, Spec] => [s.name, s]))('%s', async (_name, s) => {
    const query = buildQuery(s.spec);
    // As sent, percent-decoded: odata-query encodes string values only, so its `+` stays raw
    // (URLSearchParams would read that as a space, as the gateway does).
    const sent = query
      .slice(1)
      .split('&')
      .find((p) => p.startsWith('$filter='));
    expect(decodeURIComponent(sent ?? '')).toBe(`$filter=${s.sends}`);
    const { rows, total } = await viaGateway(query);
    const select = Array.isArray(s.spec.select) ? (s.spec.select as string[]).join(', ') : ALL;
    const expected = await viaSql(`SELECT ${select} FROM items ${s.sql}`);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows).toEqual(expected);
    if (s.countWhere !== undefined) {
      const [counted] = await viaSql(`SELECT COUNT(*) AS n FROM items ${s.countWhere}`);
      expect(total).toBe(String(counted?.n));
    }
  });
});

describe('the exact-time rules (docs/filters.md)', () => {
  async function ids(filter: string): Promise<number[]> {
    const { rows } = await viaGateway(
      `?$select=id&$orderby=id&$filter=${encodeURIComponent(filter)}`,
    );
    return rows.map((r) => r.id as number);
  }

  test(`a Node process with TZ=${TZ} really is off UTC (03:30 behind in January)`, () => {
    const probe = spawnSync(
      process.execPath,
      ['-e', 'process.stdout.write(String(new Date(Date.UTC(2024, 0, 3)).getHours()))'],
      { env: { TZ }, encoding: 'utf8' },
    );
    expect(probe.stdout).toBe('20');
  });

  test('a DATETIME 2024-01-03 00:00:00 equals Z and +01:00 spellings of that instant', async () => {
    for (const literal of [
      '2024-01-03T00:00:00Z',
      '2024-01-03T00:00:00.000Z',
      '2024-01-03T01:00:00+01:00',
      '2024-01-02T20:30:00-03:30',
      '2024-01-03',
    ]) {
      expect({ literal, ids: await ids(`created_at eq ${literal}`) }).toEqual({
        literal,
        ids: [1],
      });
    }
  });

  test('the same for TIMESTAMP, whatever the session zone of the reader of the table', async () => {
    for (const literal of ['2024-01-03T00:00:00Z', '2024-01-03T01:00:00+01:00', '2024-01-03']) {
      expect({ literal, ids: await ids(`stamped eq ${literal}`) }).toEqual({ literal, ids: [1] });
    }
    // Stored in UTC: a reader in another session zone sees another wall time, the gateway not.
    await db.admin.query("SET time_zone = '+05:00'");
    try {
      const [[row]] = await db.admin.query<RowDataPacket[]>(
        'SELECT CAST(stamped AS CHAR) AS s FROM items WHERE id = 1',
      );
      expect(row?.s).toBe('2024-01-03 05:00:00.000000');
      expect(await ids('stamped eq 2024-01-03T00:00:00Z')).toEqual([1]);
    } finally {
      await db.admin.query("SET time_zone = '+00:00'");
    }
  });

  test('fractional seconds are exact: .123 is not .1229 nor .1231', async () => {
    expect(await ids('created_at eq 2024-01-03T00:00:00.123Z')).toEqual([2]);
    expect(await ids('created_at eq 2024-01-03T00:00:00.123000Z')).toEqual([2]);
    expect(await ids('created_at eq 2024-01-03T00:00:00.1229Z')).toEqual([]);
    expect(await ids('created_at eq 2024-01-03T00:00:00.1231Z')).toEqual([]);
    expect(
      await ids(
        'created_at gt 2024-01-03T00:00:00.1229Z and created_at lt 2024-01-03T00:00:00.1231Z',
      ),
    ).toEqual([2]);
  });

  test('a DATE column meets a datetime as that day at 00:00:00', async () => {
    const day3 = (await viaSql("SELECT id FROM items WHERE day = '2024-01-03' ORDER BY id")).map(
      (r) => r.id,
    );
    expect(day3).toEqual(expect.arrayContaining([1, 2, 3]));
    expect(await ids('day eq 2024-01-03T00:00:00Z')).toEqual(day3);
    expect(await ids('day eq 2024-01-03T01:00:00+01:00')).toEqual(day3);
    expect(await ids('day eq 2024-01-03T10:00:00Z')).toEqual([]);
  });

  test('type errors and bad values are 400s that say what and where', async () => {
    const cases: [string, number, string, string][] = [
      [
        'name eq 2024-01-03',
        400,
        'FILTER_TYPE',
        "Invalid $filter at position 6: the date 2024-01-03 cannot be compared with column 'name' (varchar), which is text; a date is compared with a DATE, DATETIME or TIMESTAMP column or date()",
      ],
      [
        'year(name) eq 2024',
        400,
        'FILTER_TYPE',
        "Invalid $filter at position 1: year() takes a DATE, DATETIME or TIMESTAMP column, and column 'name' (varchar) is not one",
      ],
      [
        'created_at eq 2024-13-01',
        400,
        'FILTER_SYNTAX',
        "Invalid $filter at position 15: expected a column or a value, found an invalid date '2024-13-01' (month 13; months are 01 to 12)",
      ],
    ];
    for (const [filter, status, code, message] of cases) {
      const response = await fetch(`${url}/table/items/read?$filter=${encodeURIComponent(filter)}`);
      expect({ filter, status: response.status, body: await response.json() }).toEqual({
        filter,
        status,
        body: { success: false, code, message },
      });
    }
  });
});
