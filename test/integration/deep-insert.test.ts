/**
 * Deep insert (docs/writes.md, "Deep insert"): `POST /table/<t>/create` with rows of a to-many
 * relation creates the row and its children in one transaction, the children's foreign keys
 * filled from the parent's key (an AUTO_INCREMENT id, a given key, a composite one), nested
 * levels too; a policy is checked on every row (a child table the role may not create, a
 * child's row condition) and a refusal anywhere leaves nothing written.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SCHEMA = `
CREATE TABLE customers (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL);
CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, customer_id INT NULL, note VARCHAR(50) NULL,
  FOREIGN KEY (customer_id) REFERENCES customers (id));
CREATE TABLE order_items (id INT AUTO_INCREMENT PRIMARY KEY, order_id INT NOT NULL,
  sku VARCHAR(20) NOT NULL, qty INT NOT NULL, FOREIGN KEY (order_id) REFERENCES orders (id));
CREATE TABLE item_notes (id INT AUTO_INCREMENT PRIMARY KEY, item_id INT NOT NULL,
  text VARCHAR(50) NOT NULL, FOREIGN KEY (item_id) REFERENCES order_items (id));
CREATE TABLE shelves (room CHAR(2) NOT NULL, num INT NOT NULL, label VARCHAR(20) NULL,
  PRIMARY KEY (room, num));
CREATE TABLE boxes (id INT AUTO_INCREMENT PRIMARY KEY, room CHAR(2) NOT NULL, num INT NOT NULL,
  what VARCHAR(20) NOT NULL, FOREIGN KEY (room, num) REFERENCES shelves (room, num));
`;

const POLICY = {
  roles: {
    anonymous: {
      tables: {
        orders: { read: true, create: true },
        order_items: { read: true, create: { where: 'qty gt 0' } },
        // Readable, not creatable: an order with notes is refused whole.
        item_notes: { read: true },
      },
    },
  },
};

let db: TestDatabase;
let open: TestGateway;
let guarded: TestGateway;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-deep-insert-'));
  const policyFile = path.join(dir, `${randomBytes(4).toString('hex')}-policy.json`);
  await writeFile(policyFile, JSON.stringify(POLICY));
  db = await createTestDatabase(SCHEMA);
  open = await startTestGateway(db.name);
  guarded = await startTestGateway(db.name, { policyFile });
}, 60_000);

afterAll(async () => {
  await guarded?.close();
  await open?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function create(gw: TestGateway, table: string, body: unknown, prefer?: string) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (prefer !== undefined) headers.Prefer = prefer;
  const response = await fetch(`${gw.url}/table/${table}/create`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

async function rows(sql: string): Promise<unknown[]> {
  const [found] = await db.admin.query(sql);
  return found as unknown[];
}

async function counts(): Promise<number[]> {
  const [found] = await db.admin.query(
    `SELECT (SELECT COUNT(*) FROM orders) AS o, (SELECT COUNT(*) FROM order_items) AS i,
      (SELECT COUNT(*) FROM item_notes) AS n`,
  );
  const row = (found as { o: number; i: number; n: number }[])[0] as {
    o: number;
    i: number;
    n: number;
  };
  return [Number(row.o), Number(row.i), Number(row.n)];
}

async function nextId(table: string): Promise<number> {
  const [found] = await db.admin.query(
    'SELECT AUTO_INCREMENT AS next FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?',
    [db.name, table],
  );
  return Number((found as { next: number }[])[0]?.next);
}

describe('deep insert', () => {
  test('an order and its items: one transaction, the items keyed by the new id', async () => {
    const order = await nextId('orders');
    const item = await nextId('order_items');
    const answer = await create(open, 'orders', {
      note: 'first',
      order_items: [
        { sku: 'A-1', qty: 2 },
        { sku: 'B-2', qty: 1 },
      ],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      message: 'Data inserted successfully',
      insertId: order,
      affectedRows: 1,
      related: {
        order_items: [
          { insertId: item, affectedRows: 1 },
          { insertId: item + 1, affectedRows: 1 },
        ],
      },
    });
    expect(
      await rows(`SELECT id, order_id, sku, qty FROM order_items WHERE order_id = ${order}`),
    ).toEqual([
      { id: item, order_id: order, sku: 'A-1', qty: 2 },
      { id: item + 1, order_id: order, sku: 'B-2', qty: 1 },
    ]);
  });

  test('nested levels, an empty array, and the rows read back with return=representation', async () => {
    const order = await nextId('orders');
    const item = await nextId('order_items');
    const note = await nextId('item_notes');
    const answer = await create(
      open,
      'orders',
      {
        note: 'nested',
        order_items: [{ sku: 'C-3', qty: 5, item_notes: [{ text: 'fragile' }, { text: 'gift' }] }],
      },
      'return=representation',
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('preference-applied')).toBe('return=representation');
    expect(answer.body).toEqual({
      success: true,
      message: 'Data inserted successfully',
      insertId: order,
      affectedRows: 1,
      rows: [{ id: order, customer_id: null, note: 'nested' }],
      related: {
        order_items: [
          {
            insertId: item,
            affectedRows: 1,
            rows: [{ id: item, order_id: order, sku: 'C-3', qty: 5 }],
            related: {
              item_notes: [
                {
                  insertId: note,
                  affectedRows: 1,
                  rows: [{ id: note, item_id: item, text: 'fragile' }],
                },
                {
                  insertId: note + 1,
                  affectedRows: 1,
                  rows: [{ id: note + 1, item_id: item, text: 'gift' }],
                },
              ],
            },
          },
        ],
      },
    });
    const empty = await create(open, 'orders', { note: 'none', order_items: [] });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({
      success: true,
      message: 'Data inserted successfully',
      insertId: order + 1,
      affectedRows: 1,
      related: { order_items: [] },
    });
  });

  test('a composite key given by the parent fills both columns', async () => {
    const box = await nextId('boxes');
    const answer = await create(open, 'shelves', {
      room: 'B7',
      num: 3,
      boxes: [{ what: 'cables' }, { what: 'tools', room: 'B7', num: '3' }],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      message: 'Data inserted successfully',
      insertId: null,
      affectedRows: 1,
      related: {
        boxes: [
          { insertId: box, affectedRows: 1 },
          { insertId: box + 1, affectedRows: 1 },
        ],
      },
    });
    expect(await rows("SELECT room, num, what FROM boxes WHERE room = 'B7' ORDER BY id")).toEqual([
      { room: 'B7', num: 3, what: 'cables' },
      { room: 'B7', num: 3, what: 'tools' },
    ]);
  });

  test('a child giving another key than its parent: 400, nothing written', async () => {
    const before = await counts();
    const made = await create(open, 'orders', {
      note: 'x',
      order_items: [
        { sku: 'A', qty: 1 },
        { sku: 'B', qty: 1, order_id: 999999 },
      ],
    });
    expect(made.status).toBe(400);
    expect(made.body).toEqual({
      success: false,
      code: 'DEEP_INSERT_KEY_MISMATCH',
      message:
        "A row of 'order_items' gives 'order_id' a value other than its parent's key: leave it out, the parent's key fills it",
    });
    const given = await create(open, 'shelves', {
      room: 'C1',
      num: 1,
      boxes: [{ what: 'a', num: 2 }],
    });
    expect(given.status).toBe(400);
    expect((given.body as { code: string }).code).toBe('DEEP_INSERT_KEY_MISMATCH');
    expect(await counts()).toEqual(before);
    expect(await rows("SELECT * FROM shelves WHERE room = 'C1'")).toEqual([]);
  });

  test('a failing child rolls the parent back (MySQL refusal in the second row)', async () => {
    const before = await counts();
    const answer = await create(open, 'orders', {
      note: 'rolled back',
      order_items: [
        { sku: 'ok', qty: 1 },
        { sku: 'this sku is far too long for the column', qty: 1 },
      ],
    });
    expect(answer.status).toBe(400);
    expect(await counts()).toEqual(before);
  });

  test('refused up front: a to-one object, an array body with children, an upsert, a non-array', async () => {
    const before = await counts();
    const toOne = await create(open, 'orders', { note: 'x', customer: { name: 'Ann' } });
    expect(toOne.status).toBe(400);
    expect(toOne.body).toEqual({
      success: false,
      code: 'DEEP_INSERT_UNSUPPORTED',
      message:
        "'customer' is a to-one relation: a create makes only the rows of to-many relations; create the 'customers' row first and give its key",
    });
    const array = await create(open, 'orders', [
      { note: 'a', order_items: [{ sku: 'A', qty: 1 }] },
    ]);
    expect(array.status).toBe(400);
    expect((array.body as { code: string }).code).toBe('DEEP_INSERT_UNSUPPORTED');
    const upsert = await create(
      open,
      'orders',
      { id: 1, note: 'a', order_items: [] },
      'resolution=merge-duplicates',
    );
    expect(upsert.status).toBe(400);
    expect((upsert.body as { code: string }).code).toBe('DEEP_INSERT_UNSUPPORTED');
    const notArray = await create(open, 'orders', { note: 'a', order_items: { sku: 'A' } });
    expect(notArray.status).toBe(400);
    expect(notArray.body).toEqual({
      success: false,
      code: 'DEEP_INSERT_UNSUPPORTED',
      message: "'order_items' must be an array of rows to create",
    });
    const notRow = await create(open, 'orders', { note: 'a', order_items: [1] });
    expect(notRow.status).toBe(400);
    expect((notRow.body as { code: string }).code).toBe('DEEP_INSERT_UNSUPPORTED');
    // An unknown property is still the create's own 400.
    const unknown = await create(open, 'orders', { note: 'a', nothing: [] });
    expect(unknown.status).toBe(400);
    expect((unknown.body as { code: string }).code).toBe('UNKNOWN_COLUMN');
    expect(await counts()).toEqual(before);
  });

  test('policies on every row: a child table the role may not create, a child outside its where', async () => {
    const before = await counts();
    const notes = await create(guarded, 'orders', {
      note: 'p',
      order_items: [{ sku: 'A', qty: 1, item_notes: [{ text: 'no' }] }],
    });
    expect(notes.status).toBe(403);
    expect(notes.body).toEqual({ success: false, message: 'Forbidden', code: 'FORBIDDEN' });
    const outside = await create(guarded, 'orders', {
      note: 'p',
      order_items: [
        { sku: 'A', qty: 1 },
        { sku: 'B', qty: 0 },
      ],
    });
    expect(outside.status).toBe(403);
    expect((outside.body as { code: string }).code).toBe('POLICY_VIOLATION');
    expect(await counts()).toEqual(before);
    const order = await nextId('orders');
    const allowed = await create(guarded, 'orders', {
      note: 'p',
      order_items: [{ sku: 'A', qty: 1 }],
    });
    expect(allowed.status).toBe(200);
    expect((allowed.body as { insertId: number }).insertId).toBe(order);
    expect(await rows(`SELECT sku FROM order_items WHERE order_id = ${order}`)).toEqual([
      { sku: 'A' },
    ]);
  });
});
