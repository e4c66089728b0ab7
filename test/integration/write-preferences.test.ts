/**
 * Writes people expect, end to end on MariaDB/MySQL over HTTP (docs/writes.md): update and
 * delete by `$filter` (composite keys, bulk) with `Prefer: max-affected`, upserts
 * (`Prefer: resolution=merge-duplicates|ignore-duplicates`), the written rows back
 * (`Prefer: return=representation`) and `Preference-Applied` — in open mode, and under a policy
 * whose every refusal is checked against what the DATABASE holds afterwards.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import { USERS_TABLE } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const FIXTURE = `
CREATE TABLE customers (id INT AUTO_INCREMENT PRIMARY KEY, email VARCHAR(100) NOT NULL UNIQUE,
  name VARCHAR(50) NOT NULL, tier VARCHAR(10) NOT NULL DEFAULT 'basic',
  since DATE NOT NULL DEFAULT '2024-01-01', name_len INT AS (CHAR_LENGTH(name)) VIRTUAL);
CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, customer_id BIGINT UNSIGNED NOT NULL,
  status VARCHAR(10) NOT NULL DEFAULT 'open', note VARCHAR(100) NULL,
  secret VARCHAR(20) NULL DEFAULT 'hidden');
CREATE TABLE order_items (order_id INT NOT NULL, line INT NOT NULL, sku VARCHAR(20) NOT NULL,
  qty INT NOT NULL DEFAULT 1, PRIMARY KEY (order_id, line));
CREATE TABLE accounts (handle VARCHAR(30) PRIMARY KEY, tenant_id BIGINT UNSIGNED NOT NULL,
  balance INT NOT NULL DEFAULT 0, label VARCHAR(30) NULL, code CHAR(4) NULL UNIQUE);
CREATE TABLE logs (at INT, msg VARCHAR(20));
CREATE TABLE handles (name VARCHAR(20) NULL UNIQUE, tenant_id BIGINT UNSIGNED NOT NULL);
CREATE TABLE parents (id INT PRIMARY KEY) ENGINE=InnoDB;
CREATE TABLE kids (id INT PRIMARY KEY, parent_id INT NOT NULL, name VARCHAR(10) NOT NULL,
  FOREIGN KEY (parent_id) REFERENCES parents (id)) ENGINE=InnoDB;
INSERT INTO parents VALUES (1);
`;

/** Rows every test starts from (the tests change them). */
const SEED = `
DELETE FROM customers; DELETE FROM orders; DELETE FROM order_items; DELETE FROM accounts;
DELETE FROM logs; DELETE FROM kids; DELETE FROM handles;
INSERT INTO handles VALUES ('ann', 1), ('bob', 2);
ALTER TABLE customers AUTO_INCREMENT = 1; ALTER TABLE orders AUTO_INCREMENT = 1;
INSERT INTO customers (id, email, name, tier) VALUES (1, 'ann@x.test', 'Ann', 'gold'),
  (2, 'bob@x.test', 'Bob', 'basic');
INSERT INTO orders (id, customer_id, status, note) VALUES (1, 1, 'open', 'a1'), (2, 1, 'open', 'a2'),
  (3, 1, 'paid', 'a3'), (4, 2, 'open', 'b1'), (5, 2, 'open', 'b2'), (6, 2, 'open', 'b3');
INSERT INTO order_items VALUES (3, 1, 'tea', 1), (3, 2, 'cup', 2), (3, 3, 'pot', 1), (4, 1, 'tea', 5);
INSERT INTO accounts VALUES ('ann-main', 1, 10, 'ann', 'AN01'), ('bob-main', 2, 99, 'bob', 'BO01');
INSERT INTO kids VALUES (1, 1, 'k1');
`;

const POLICY = {
  roles: {
    user: {
      tables: {
        orders: {
          read: {
            where: 'customer_id eq @user.id',
            columns: ['id', 'customer_id', 'status', 'note'],
          },
          create: { where: 'customer_id eq @user.id' },
          update: { where: "customer_id eq @user.id and (note ne 'locked' or note eq null)" },
          delete: { where: 'customer_id eq @user.id' },
        },
        accounts: {
          read: { where: 'tenant_id eq @user.id' },
          create: { where: 'tenant_id eq @user.id' },
          update: { where: 'tenant_id eq @user.id' },
        },
      },
    },
    // Creates any order but reads only its own; creates accounts, updates nothing.
    writer: {
      tables: {
        orders: { read: { where: 'customer_id eq @user.id' }, create: true },
        handles: { read: { where: 'tenant_id eq @user.id' }, create: true },
        accounts: {
          read: { where: 'tenant_id eq @user.id' },
          create: { where: 'tenant_id eq @user.id' },
        },
      },
    },
  },
};

const SECRET = 'write-preferences-secret-0123456789abcdefghijkl';
const PASSWORD = 'correct horse battery';

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

let db: TestDatabase;
let open: TestGateway;
let guarded: TestGateway;
let dir: string;
const tokens: Record<string, string> = {};
const ids: Record<string, number> = {};

async function call(
  gateway: TestGateway,
  method: string,
  url: string,
  options: { json?: unknown; token?: string; prefer?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.prefer) headers.prefer = options.prefer;
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(`${gateway.url}${url}`, { method, headers, body });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : null,
  };
}

const as = (name: string) => ({ token: tokens[name] });
const q = (filter: string) => `?$filter=${encodeURIComponent(filter)}`;

async function rows(sql: string): Promise<mysql.RowDataPacket[]> {
  const [found] = await db.admin.query<mysql.RowDataPacket[]>(sql);
  return found;
}

async function signUp(name: string, email: string, role = 'user'): Promise<void> {
  const registered = await call(guarded, 'POST', '/auth/register', {
    json: { email, password: PASSWORD },
  });
  expect(registered.status).toBe(200);
  await db.admin.query(`UPDATE ${USERS_TABLE} SET role = ? WHERE email = ?`, [role, email]);
  const [user] = await rows(`SELECT id FROM ${USERS_TABLE} WHERE email = '${email}'`);
  ids[name] = Number(user?.id);
  const login = await call(guarded, 'POST', '/auth/login', { json: { email, password: PASSWORD } });
  tokens[name] = (login.body as { token: string }).token;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-prefer-'));
  const file = path.join(dir, 'policy.json');
  await writeFile(file, JSON.stringify(POLICY));
  db = await createTestDatabase(FIXTURE);
  open = await startTestGateway(db.name);
  guarded = await startTestGateway(db.name, { mode: 'auth', jwtSecret: SECRET, policyFile: file });
  // Users 1 and 2: the ids the orders and accounts of the seed belong to.
  await signUp('ann', 'ann@x.test');
  await signUp('bob', 'bob@x.test');
  await signUp('writer', 'writer@x.test', 'writer');
  expect(ids).toMatchObject({ ann: 1, bob: 2 });
});

beforeEach(async () => {
  await db.admin.query(SEED);
});

afterAll(async () => {
  await open?.close();
  await guarded?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

/** BIGINT values come back as strings; these are small. */
const numbered = (found: mysql.RowDataPacket[], column: string) =>
  found.map((row) => ({ ...row, [column]: Number(row[column]) }));
const ordersInDb = async () =>
  numbered(
    await rows('SELECT id, customer_id, status, note FROM orders ORDER BY id'),
    'customer_id',
  );

describe('update and delete by $filter', () => {
  test('one line of a composite key, updated then deleted; the other lines untouched', async () => {
    const updated = await call(
      open,
      'PUT',
      `/table/order_items/update${q('order_id eq 3 and line eq 2')}`,
      {
        json: { qty: 9 },
      },
    );
    expect(updated).toMatchObject({
      status: 200,
      body: { success: true, message: 'Data updated successfully', affectedRows: 1 },
    });
    const deleted = await call(
      open,
      'DELETE',
      `/table/order_items/delete${q('order_id eq 3 and line eq 1')}`,
    );
    expect(deleted.body).toEqual({
      success: true,
      message: 'Data deleted successfully',
      affectedRows: 1,
    });
    expect(
      await rows('SELECT order_id, line, qty FROM order_items ORDER BY order_id, line'),
    ).toEqual([
      { order_id: 3, line: 2, qty: 9 },
      { order_id: 3, line: 3, qty: 1 },
      { order_id: 4, line: 1, qty: 5 },
    ]);
    // The old form still takes one column: every line of order 3 (what a new user ran into).
    const all = await call(open, 'DELETE', '/table/order_items/delete(order_id,3)');
    expect(all.body).toMatchObject({ affectedRows: 2 });
  });

  test('bulk: every row the filter matches; a hostile value is only a value', async () => {
    const bulk = await call(
      open,
      'PUT',
      `/table/orders/update${q("status eq 'open' and customer_id eq 2")}`,
      {
        json: { status: 'held' },
      },
    );
    expect(bulk.body).toMatchObject({ affectedRows: 3 });
    const hostile = await call(
      open,
      'DELETE',
      `/table/orders/delete${q("note eq 'x'' OR 1=1 -- '")}`,
    );
    expect(hostile.body).toMatchObject({ affectedRows: 0 });
    expect((await ordersInDb()).map((row) => row.status)).toEqual([
      'open',
      'open',
      'paid',
      'held',
      'held',
      'held',
    ]);
  });

  test.each<[string, string, string]>([
    ['PUT', '/table/orders/update(id,1)?$filter=id%20eq%201', 'not both'],
    ['PUT', '/table/orders/update', 'name the rows with a key'],
    ['DELETE', '/table/orders/delete?$filter=', '$filter is empty'],
    ['DELETE', '/table/orders/delete?$filter=id%20eq%201&$top=1', "Unknown query option '$top'"],
    ['DELETE', `/table/orders/delete${q("customer/name eq 'x'")}`, 'names columns of table'],
    ['PUT', `/table/orders/update${q('nope eq 1')}`, "Column 'nope' does not exist"],
  ])('%s %s: 400 and nothing changed', async (method, url, message) => {
    const before = await ordersInDb();
    const answer = await call(open, method, url, {
      json: method === 'PUT' ? { note: 'z' } : undefined,
    });
    expect(answer.status).toBe(400);
    expect((answer.body as { message: string }).message).toContain(message);
    expect(await ordersInDb()).toEqual(before);
  });

  test('an option without its $ is refused, not taken for every row', async () => {
    const answer = await call(open, 'DELETE', '/table/orders/delete?filter=id%20eq%201');
    expect(answer).toMatchObject({ status: 400, body: { code: 'OPTION_WITHOUT_DOLLAR' } });
    expect(await ordersInDb()).toHaveLength(6);
  });
});

describe('Prefer: max-affected', () => {
  test('more rows than allowed: 400 TOO_MANY_ROWS and nothing changed', async () => {
    const before = await ordersInDb();
    const update = await call(open, 'PUT', `/table/orders/update${q("status eq 'open'")}`, {
      json: { note: 'bulk' },
      prefer: 'max-affected=4',
    });
    expect(update).toMatchObject({ status: 400 });
    expect(update.body).toEqual({
      success: false,
      message:
        'The request would change 5 rows, more than Prefer: max-affected=4; nothing was changed',
      code: 'TOO_MANY_ROWS',
    });
    const remove = await call(open, 'DELETE', `/table/orders/delete${q('id gt 0')}`, {
      prefer: 'return=minimal, max-affected=0',
    });
    expect(remove).toMatchObject({ status: 400, body: { code: 'TOO_MANY_ROWS' } });
    expect(await ordersInDb()).toEqual(before);
  });

  test('within the limit: done, and echoed in Preference-Applied', async () => {
    const answer = await call(open, 'PUT', `/table/orders/update${q('customer_id eq 1')}`, {
      json: { note: 'ok' },
      prefer: 'max-affected=3',
    });
    expect(answer).toMatchObject({ status: 200, body: { affectedRows: 3 } });
    expect(answer.headers.get('preference-applied')).toBe('max-affected=3');
    const keyed = await call(open, 'DELETE', '/table/orders/delete(id,6)', {
      prefer: 'max-affected=1',
    });
    expect(keyed.body).toMatchObject({ affectedRows: 1 });
    expect(keyed.headers.get('preference-applied')).toBe('max-affected=1');
  });

  test('a malformed max-affected is refused; unknown preferences are ignored (RFC 7240)', async () => {
    const bad = await call(open, 'DELETE', '/table/orders/delete(id,1)', {
      prefer: 'max-affected=lots',
    });
    expect(bad).toMatchObject({ status: 400, body: { code: 'INVALID_PREFERENCE' } });
    const ignored = await call(open, 'DELETE', '/table/orders/delete(id,1)', {
      prefer: 'handling=strict, wait=10, return=headers-only, frobnicate',
    });
    expect(ignored).toMatchObject({ status: 200, body: { affectedRows: 1 } });
    expect(ignored.headers.get('preference-applied')).toBeNull();
    expect(await ordersInDb()).toHaveLength(5);
  });
});

describe('under a policy', () => {
  test('a bulk update whose filter matches other tenants’ rows changes only the caller’s', async () => {
    const answer = await call(guarded, 'PUT', `/table/orders/update${q("status eq 'open'")}`, {
      ...as('ann'),
      json: { note: 'mine' },
      prefer: 'max-affected=2',
    });
    // Bob's three open orders match the filter but not the policy: not counted, not changed.
    expect(answer).toMatchObject({ status: 200, body: { affectedRows: 2 } });
    expect(await ordersInDb()).toEqual([
      { id: 1, customer_id: 1, status: 'open', note: 'mine' },
      { id: 2, customer_id: 1, status: 'open', note: 'mine' },
      { id: 3, customer_id: 1, status: 'paid', note: 'a3' },
      { id: 4, customer_id: 2, status: 'open', note: 'b1' },
      { id: 5, customer_id: 2, status: 'open', note: 'b2' },
      { id: 6, customer_id: 2, status: 'open', note: 'b3' },
    ]);
    const removed = await call(guarded, 'DELETE', `/table/orders/delete${q('id gt 0')}`, as('bob'));
    expect(removed.body).toMatchObject({ affectedRows: 3 });
    expect((await ordersInDb()).map((row) => row.id)).toEqual([1, 2, 3]);
  });

  test('rows a bulk update moves outside the where are re-checked by key: 403, nothing changed', async () => {
    const before = await ordersInDb();
    const locked = await call(guarded, 'PUT', `/table/orders/update${q('id le 3')}`, {
      ...as('ann'),
      json: { note: 'locked' },
    });
    expect(locked).toMatchObject({ status: 403, body: { code: 'POLICY_VIOLATION' } });
    const moved = await call(guarded, 'PUT', `/table/orders/update${q('id le 3')}`, {
      ...as('ann'),
      json: { customer_id: 2 },
    });
    expect(moved).toMatchObject({ status: 403, body: { code: 'POLICY_VIOLATION' } });
    expect(await ordersInDb()).toEqual(before);
  });

  test('a hidden column cannot be probed through an update filter', async () => {
    const answer = await call(
      guarded,
      'DELETE',
      `/table/orders/delete${q("secret eq 'hidden'")}`,
      as('ann'),
    );
    expect(answer).toMatchObject({
      status: 400,
      body: { code: 'UNKNOWN_COLUMN', message: "Column 'secret' does not exist in table 'orders'" },
    });
    expect(await ordersInDb()).toHaveLength(6);
  });
});

describe('upserts: Prefer: resolution', () => {
  const customers = () => rows('SELECT id, email, name, tier FROM customers ORDER BY id');

  test('merge-duplicates updates the row a unique key meets with the given columns only', async () => {
    const answer = await call(open, 'POST', '/table/customers/create', {
      prefer: 'resolution=merge-duplicates',
      json: [
        { email: 'ann@x.test', name: 'Annie' },
        { email: 'cy@x.test', name: 'Cy', tier: 'gold' },
        { id: 2, email: 'bob@x.test', name: 'Robert', tier: 'silver' },
      ],
    });
    expect(answer.status).toBe(200);
    // MySQL's count: 2 for each row updated, 1 for each inserted.
    expect(answer.body).toMatchObject({ success: true, affectedRows: 5 });
    expect(answer.headers.get('preference-applied')).toBe('resolution=merge-duplicates');
    expect(await customers()).toEqual([
      { id: 1, email: 'ann@x.test', name: 'Annie', tier: 'gold' },
      { id: 2, email: 'bob@x.test', name: 'Robert', tier: 'silver' },
      { id: expect.any(Number), email: 'cy@x.test', name: 'Cy', tier: 'gold' },
    ]);
  });

  test('ignore-duplicates leaves the row a key meets as it is and inserts the others', async () => {
    const answer = await call(open, 'POST', '/table/customers/create', {
      prefer: 'resolution=ignore-duplicates',
      json: [
        { email: 'ann@x.test', name: 'Annie' },
        { email: 'di@x.test', name: 'Di' },
      ],
    });
    expect(answer).toMatchObject({ status: 200, body: { affectedRows: 2 } });
    expect(answer.headers.get('preference-applied')).toBe('resolution=ignore-duplicates');
    expect((await customers()).map((row) => row.name)).toEqual(['Ann', 'Bob', 'Di']);
  });

  test('ignore-duplicates is not INSERT IGNORE: any other error still fails the whole request', async () => {
    const nulls = await call(open, 'POST', '/table/customers/create', {
      prefer: 'resolution=ignore-duplicates',
      json: [
        { email: 'ed@x.test', name: 'Ed' },
        { email: 'fay@x.test', name: null },
      ],
    });
    expect(nulls).toMatchObject({ status: 400, body: { code: 'ER_BAD_NULL_ERROR' } });
    const orphan = await call(open, 'POST', '/table/kids/create', {
      prefer: 'resolution=ignore-duplicates',
      json: [
        { id: 1, parent_id: 1, name: 'k1' },
        { id: 2, parent_id: 99, name: 'k2' },
      ],
    });
    expect(orphan).toMatchObject({ status: 409, body: { code: 'ER_NO_REFERENCED_ROW_2' } });
    const tooLong = await call(open, 'POST', '/table/kids/create', {
      prefer: 'resolution=ignore-duplicates',
      json: { id: 3, parent_id: 1, name: 'far too long a name' },
    });
    expect(tooLong).toMatchObject({ status: 400, body: { code: 'ER_DATA_TOO_LONG' } });
    expect(await customers()).toHaveLength(2);
    expect(await rows('SELECT id FROM kids')).toEqual([{ id: 1 }]);
  });

  test('a row hitting another tenant’s row: 403, and nothing of the request is written', async () => {
    const accounts = () => rows('SELECT * FROM accounts ORDER BY handle');
    const before = await accounts();
    for (const body of [
      // by its primary key …
      [
        { handle: 'ann-new', tenant_id: 1, balance: 5 },
        { handle: 'bob-main', tenant_id: 1, balance: 0 },
      ],
      // … or by another unique key, written with a trailing space (CHAR drops it when stored)
      [{ handle: 'ann-2', tenant_id: 1, code: 'BO01 ' }],
    ]) {
      const answer = await call(guarded, 'POST', '/table/accounts/create', {
        ...as('ann'),
        prefer: 'resolution=merge-duplicates',
        json: body,
      });
      expect(answer).toMatchObject({ status: 403, body: { code: 'POLICY_VIOLATION' } });
    }
    // A new row for the other tenant: refused before any SQL.
    const theirs = await call(guarded, 'POST', '/table/accounts/create', {
      ...as('ann'),
      prefer: 'resolution=merge-duplicates',
      json: { handle: 'bob-2', tenant_id: 2 },
    });
    expect(theirs).toMatchObject({ status: 403, body: { code: 'POLICY_VIOLATION' } });
    // Two rows with one key: the second meets a row the check did not foresee.
    const twice = await call(guarded, 'POST', '/table/accounts/create', {
      ...as('ann'),
      prefer: 'resolution=merge-duplicates',
      json: [
        { handle: 'ann-x', tenant_id: 1, balance: 1 },
        { handle: 'ann-x', tenant_id: 1, balance: 2 },
      ],
    });
    expect(twice).toMatchObject({ status: 403, body: { code: 'POLICY_VIOLATION' } });
    expect(await accounts()).toEqual(before);
  });

  test('a merge of the caller’s own rows, and a new one: done, and read back as it reads them', async () => {
    const answer = await call(guarded, 'POST', '/table/accounts/create', {
      ...as('ann'),
      prefer: 'resolution=merge-duplicates, return=representation',
      json: [
        { handle: 'ann-main', tenant_id: 1, balance: 11 },
        { handle: 'ann-new', tenant_id: 1 },
      ],
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('preference-applied')).toBe(
      'return=representation, resolution=merge-duplicates',
    );
    expect(answer.body).toEqual({
      success: true,
      message: 'Data inserted successfully',
      insertId: null,
      affectedRows: 3,
      rows: [
        { handle: 'ann-main', tenant_id: 1, balance: 11, label: 'ann', code: 'AN01' },
        { handle: 'ann-new', tenant_id: 1, balance: 0, label: null, code: null },
      ],
    });
  });

  test('merge needs the update grant; ignore only create, and leaves the caller’s own row alone', async () => {
    const merge = await call(guarded, 'POST', '/table/accounts/create', {
      ...as('writer'),
      prefer: 'resolution=merge-duplicates',
      json: { handle: 'w-1', tenant_id: ids.writer },
    });
    expect(merge).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    await db.admin.query('INSERT INTO accounts (handle, tenant_id, balance) VALUES (?, ?, 7)', [
      'w-0',
      ids.writer,
    ]);
    const ignore = await call(guarded, 'POST', '/table/accounts/create', {
      ...as('writer'),
      prefer: 'resolution=ignore-duplicates',
      json: [
        { handle: 'w-0', tenant_id: ids.writer, balance: 0 },
        { handle: 'w-1', tenant_id: ids.writer },
      ],
    });
    expect(ignore).toMatchObject({ status: 200, body: { affectedRows: 2 } });
    expect(
      await numbered(
        await rows('SELECT handle, tenant_id, balance FROM accounts ORDER BY handle'),
        'tenant_id',
      ),
    ).toEqual([
      { handle: 'ann-main', tenant_id: 1, balance: 10 },
      { handle: 'bob-main', tenant_id: 2, balance: 99 },
      { handle: 'w-0', tenant_id: ids.writer, balance: 7 },
      { handle: 'w-1', tenant_id: ids.writer, balance: 0 },
    ]);
  });
});

describe('ignore-duplicates under a policy: another tenant’s row is 403, as for a merge', () => {
  const IGNORED = {
    success: false,
    code: 'POLICY_VIOLATION',
    message:
      "A row of the upsert meets a row outside this role's policy for read on 'accounts', or would not satisfy its policy for create (or two rows give the same key); nothing was written",
  };
  const accounts = () => rows('SELECT * FROM accounts ORDER BY handle');

  test.each<[string, string, unknown]>([
    // ann: read, create and update wheres; by the primary key …
    [
      'ann',
      'by its primary key',
      [
        { handle: 'ann-new', tenant_id: 1, balance: 5 },
        { handle: 'bob-main', tenant_id: 1, balance: 0 },
      ],
    ],
    // … or by another unique key, written with a trailing space (CHAR drops it when stored)
    ['ann', 'by a unique key', [{ handle: 'ann-2', tenant_id: 1, code: 'BO01 ' }]],
    // writer: read and create wheres, no update grant
    ['writer', 'without an update grant', { handle: 'bob-main', tenant_id: 3 }],
  ])('%s, %s: 403 POLICY_VIOLATION, nothing written', async (who, _how, json) => {
    expect(ids[who]).toBe({ ann: 1, writer: 3 }[who]);
    const before = await accounts();
    const answer = await call(guarded, 'POST', '/table/accounts/create', {
      ...as(who),
      prefer: 'resolution=ignore-duplicates',
      json,
    });
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 403, body: IGNORED });
    expect(await accounts()).toEqual(before);
  });

  test('a role with no create where: its read where still tells its own rows', async () => {
    // writer creates any order but reads only its own (customer_id = its id).
    const before = await ordersInDb();
    const theirs = await call(guarded, 'POST', '/table/orders/create', {
      ...as('writer'),
      prefer: 'resolution=ignore-duplicates',
      json: [
        { id: 7, customer_id: ids.writer, note: 'w' },
        { id: 4, customer_id: ids.writer, note: 'w' },
      ],
    });
    expect(theirs).toEqual({
      status: 403,
      headers: expect.anything(),
      body: { ...IGNORED, message: IGNORED.message.replace("'accounts'", "'orders'") },
    });
    expect(await ordersInDb()).toEqual(before);
    await db.admin.query("INSERT INTO orders (id, customer_id, note) VALUES (7, ?, 'mine')", [
      ids.writer,
    ]);
    const mine = await call(guarded, 'POST', '/table/orders/create', {
      ...as('writer'),
      prefer: 'resolution=ignore-duplicates',
      json: [
        { id: 7, customer_id: ids.writer, note: 'w' },
        { id: 8, customer_id: 5, note: 'w' },
      ],
    });
    expect(mine.body).toEqual({
      success: true,
      message: 'Data inserted successfully',
      insertId: null,
      affectedRows: 2,
    });
    expect((await ordersInDb()).slice(6)).toEqual([
      { id: 7, customer_id: ids.writer, status: 'open', note: 'mine' },
      { id: 8, customer_id: 5, status: 'open', note: 'w' },
    ]);
  });

  test('a table without a primary key: the rows met are looked up all the same', async () => {
    await db.admin.query("INSERT INTO handles VALUES ('w', ?)", [ids.writer]);
    const handles = async () =>
      numbered(await rows('SELECT name, tenant_id FROM handles ORDER BY name'), 'tenant_id');
    const before = await handles();
    const theirs = await call(guarded, 'POST', '/table/handles/create', {
      ...as('writer'),
      prefer: 'resolution=ignore-duplicates',
      json: [
        { name: 'w2', tenant_id: ids.writer },
        { name: 'bob', tenant_id: ids.writer },
      ],
    });
    expect(theirs.body).toEqual({
      ...IGNORED,
      message: IGNORED.message.replace("'accounts'", "'handles'"),
    });
    expect(await handles()).toEqual(before);
    const mine = await call(guarded, 'POST', '/table/handles/create', {
      ...as('writer'),
      prefer: 'resolution=ignore-duplicates',
      json: [
        { name: 'w', tenant_id: 9 },
        { name: 'w2', tenant_id: 9 },
      ],
    });
    expect(mine).toMatchObject({ status: 200, body: { success: true, affectedRows: 2 } });
    expect(await handles()).toEqual([...before, { name: 'w2', tenant_id: 9 }]);
  });

  test('a duplicate of the caller’s own row is left unchanged; its new rows are written', async () => {
    const answer = await call(guarded, 'POST', '/table/accounts/create', {
      ...as('ann'),
      prefer: 'resolution=ignore-duplicates',
      json: [
        { handle: 'ann-main', tenant_id: 1, balance: 0, label: 'changed' },
        { handle: 'ann-new', tenant_id: 1 },
      ],
    });
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 200,
      body: {
        success: true,
        message: 'Data inserted successfully',
        insertId: null,
        affectedRows: 2,
      },
    });
    expect(answer.headers.get('preference-applied')).toBe('resolution=ignore-duplicates');
    expect(
      await numbered(
        await rows('SELECT handle, tenant_id, balance, label FROM accounts ORDER BY handle'),
        'tenant_id',
      ),
    ).toEqual([
      { handle: 'ann-main', tenant_id: 1, balance: 10, label: 'ann' },
      { handle: 'ann-new', tenant_id: 1, balance: 0, label: null },
      { handle: 'bob-main', tenant_id: 2, balance: 99, label: 'bob' },
    ]);
  });
});

describe('Prefer: return=representation', () => {
  test('a created row with its defaults, generated column and new id', async () => {
    const answer = await call(open, 'POST', '/table/customers/create', {
      prefer: 'return=representation',
      json: { email: 'gil@x.test', name: 'Gil' },
    });
    expect(answer.headers.get('preference-applied')).toBe('return=representation');
    expect(answer.body).toEqual({
      success: true,
      message: 'Data inserted successfully',
      insertId: 3,
      affectedRows: 1,
      rows: [
        {
          id: 3,
          email: 'gil@x.test',
          name: 'Gil',
          tier: 'basic',
          since: '2024-01-01',
          name_len: 3,
        },
      ],
    });
  });

  test('a batch, by the keys it gives (a composite key), in key order', async () => {
    const answer = await call(open, 'POST', '/table/order_items/create', {
      prefer: 'return=representation',
      json: [
        { order_id: 9, line: 2, sku: 'b' },
        { order_id: 9, line: 1, sku: 'a', qty: 4 },
      ],
    });
    expect((answer.body as { rows: unknown }).rows).toEqual([
      { order_id: 9, line: 1, sku: 'a', qty: 4 },
      { order_id: 9, line: 2, sku: 'b', qty: 1 },
    ]);
  });

  test('the rows an update by $filter changed', async () => {
    const answer = await call(
      open,
      'PUT',
      `/table/order_items/update${q('order_id eq 3 and qty eq 1')}`,
      {
        prefer: 'return=representation, max-affected=2',
        json: { qty: 7 },
      },
    );
    expect(answer.headers.get('preference-applied')).toBe('return=representation, max-affected=2');
    expect(answer.body).toEqual({
      success: true,
      message: 'Data updated successfully',
      affectedRows: 2,
      rows: [
        { order_id: 3, line: 1, sku: 'tea', qty: 7 },
        { order_id: 3, line: 3, sku: 'pot', qty: 7 },
      ],
    });
  });

  test('a table whose rows cannot be found again by key: not honoured, not echoed', async () => {
    const answer = await call(open, 'POST', '/table/logs/create', {
      prefer: 'return=representation',
      json: { at: 1, msg: 'hi' },
    });
    expect(answer.body).toEqual({
      success: true,
      message: 'Data inserted successfully',
      insertId: null,
      affectedRows: 1,
    });
    expect(answer.headers.get('preference-applied')).toBeNull();
  });

  test('only what the caller may read: its columns, and none of the rows outside its where', async () => {
    const created = await call(guarded, 'POST', '/table/orders/create', {
      ...as('ann'),
      prefer: 'return=representation',
      json: { customer_id: 1, note: 'new' },
    });
    expect((created.body as { rows: unknown }).rows).toEqual([
      { id: 7, customer_id: 1, status: 'open', note: 'new' },
    ]);
    const updated = await call(guarded, 'PUT', `/table/orders/update${q('id lt 3')}`, {
      ...as('ann'),
      prefer: 'return=representation',
      json: { note: 'n' },
    });
    expect((updated.body as { rows: unknown }).rows).toEqual([
      { id: 1, customer_id: 1, status: 'open', note: 'n' },
      { id: 2, customer_id: 1, status: 'open', note: 'n' },
    ]);
    const blind = await call(guarded, 'POST', '/table/orders/create', {
      ...as('writer'),
      prefer: 'return=representation',
      json: { customer_id: 5, note: 'w' },
    });
    expect(blind.body).toMatchObject({ affectedRows: 1, rows: [] });
    expect(blind.headers.get('preference-applied')).toBe('return=representation');
  });
});
