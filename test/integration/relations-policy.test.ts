/**
 * Policies at every level of a read across relations (docs/relations.md "Policies"), in auth
 * mode with a policy file: a relation to a table the role may not read, or whose key columns it
 * may not read, does not exist for it (the same answer as a name that never existed); the
 * related table's where filters related rows (a hidden parent is null, hidden children are not
 * in the array, paths and lambdas see only readable rows, a user's own rows through
 * `@user.id` two levels down); hidden columns cannot be selected, filtered or ordered through a
 * relation; /openapi.json lists only the relations the role may follow. Every answer is
 * compared with hand-written SQL that applies the policy by hand.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { parseExact } from '../helpers/exact-json.js';
import { signUpAs, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import {
  oracleConnection,
  param,
  type SqlRow,
  sameAnswer,
  sqlRow,
  sqlRows,
} from '../helpers/sql-rows.js';

const SCHEMA = `
CREATE TABLE addresses (id INT PRIMARY KEY, city VARCHAR(50) NOT NULL);
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL, secret VARCHAR(50) NULL,
  billing_address_id INT NULL, FOREIGN KEY (billing_address_id) REFERENCES addresses (id));
CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NULL, status VARCHAR(10) NOT NULL,
  note VARCHAR(50) NULL, internal_code VARCHAR(20) NULL,
  FOREIGN KEY (customer_id) REFERENCES customers (id));
CREATE TABLE order_items (order_id INT NOT NULL, line INT NOT NULL, owner_id BIGINT UNSIGNED NOT NULL,
  qty INT NOT NULL, cost DECIMAL(10,2) NOT NULL, PRIMARY KEY (order_id, line),
  FOREIGN KEY (order_id) REFERENCES orders (id));
CREATE TABLE reviews (id INT PRIMARY KEY, order_id INT NOT NULL, author VARCHAR(30) NOT NULL,
  FOREIGN KEY (order_id) REFERENCES orders (id));
CREATE TABLE audit (id INT PRIMARY KEY, order_id INT NOT NULL, what VARCHAR(50) NOT NULL,
  FOREIGN KEY (order_id) REFERENCES orders (id));
INSERT INTO addresses VALUES (1, 'Paris'), (2, 'Kyoto');
INSERT INTO customers VALUES (1, 'Ann', 's1', 1), (2, 'Bo', 's2', 2), (3, 'Cy', 's3', 1);
INSERT INTO orders VALUES (10, 1, 'open', 'a', 'X1'), (11, 1, 'secret', 'b', 'X2'),
  (12, 2, 'open', NULL, 'X3'), (13, 3, 'open', 'c', 'X4'), (14, NULL, 'open', 'd', 'X5');
INSERT INTO reviews VALUES (1, 10, 'Ann'), (2, 12, 'Bo');
INSERT INTO audit VALUES (1, 10, 'created');
`;

const POLICY = {
  roles: {
    user: {
      tables: {
        customers: { read: { where: 'id ne 3', columns: ['id', 'name', 'billing_address_id'] } },
        orders: {
          read: { where: "status ne 'secret'", columns: ['id', 'customer_id', 'status', 'note'] },
        },
        order_items: {
          read: { where: 'owner_id eq @user.id', columns: ['order_id', 'line', 'owner_id', 'qty'] },
        },
        // The key column order_id hidden: no relation between reviews and orders.
        reviews: { read: { columns: ['id', 'author'] } },
        // addresses and audit: not readable.
      },
    },
    guest: { tables: { customers: { read: true }, orders: { read: true } } },
    admin: { tables: { '*': { read: true } } },
  },
};

const SECRET = 'relations-policy-secret-0123456789abcdefghij';
const PASSWORD = 'correct horse battery';

let db: TestDatabase;
let gw: TestGateway;
let oracle: mysql.Connection;
let dir: string;
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};

async function signUp(name: string, role: string): Promise<void> {
  const email = `${name}@shop.example`;
  const user = await signUpAs(gw.url, db.admin, { email, password: PASSWORD }, role);
  tokens[name] = user.token;
  ids[name] = user.id;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-relations-policy-'));
  const policyFile = path.join(dir, `${randomBytes(4).toString('hex')}-policy.json`);
  await writeFile(policyFile, JSON.stringify(POLICY));
  db = await createTestDatabase(SCHEMA);
  gw = await startTestGateway(db.name, { mode: 'auth', jwtSecret: SECRET, policyFile });
  await signUp('alice', 'user');
  await signUp('bob', 'user');
  await signUp('gus', 'guest');
  await signUp('root', 'admin');
  // Items of both users in the same orders, so that only the where tells them apart.
  await db.admin.query(
    `INSERT INTO order_items VALUES (10, 1, ?, 2, 1.50), (10, 2, ?, 3, 2.50), (12, 1, ?, 1, 9.99),
      (13, 1, ?, 4, 0.10), (14, 1, ?, 5, 0.20), (14, 2, ?, 6, 0.30)`,
    [ids.alice, ids.bob, ids.bob, ids.alice, ids.alice, ids.bob],
  );
  oracle = await oracleConnection(db.name);
}, 60_000);

afterAll(async () => {
  await oracle?.end();
  await gw?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly body: unknown;
  readonly headers: Headers;
}

async function get(who: string, route: string): Promise<Answer> {
  const response = await fetch(gw.url + encodeURI(route), {
    headers: { authorization: `Bearer ${tokens[who]}` },
  });
  const text = await response.text();
  return { status: response.status, text, body: parseExact(text), headers: response.headers };
}

async function expectRows(who: string, route: string, expected: unknown): Promise<void> {
  const answer = await get(who, route);
  expect({ route, status: answer.status }).toEqual({ route, status: 200 });
  expect({ route, problem: sameAnswer(answer.body, expected) }).toEqual({ route, problem: null });
}

const rows = (sql: string, params: readonly unknown[] = []) =>
  sqlRows(oracle, sql, params.map(param));
const row = (sql: string, params: readonly unknown[] = []) =>
  sqlRow(oracle, sql, params.map(param));

async function withRelated(
  parents: SqlRow[],
  add: (parent: SqlRow) => Promise<Record<string, unknown>>,
): Promise<SqlRow[]> {
  const out: SqlRow[] = [];
  for (const parent of parents) out.push({ ...parent, ...(await add(parent)) });
  return out;
}

// The policy of `user`, by hand.
const CUSTOMER = 'SELECT id, name, billing_address_id FROM customers WHERE id <> 3';
const ORDER = "SELECT id, customer_id, status, note FROM orders WHERE status <> 'secret'";
const ITEM = 'SELECT order_id, line, owner_id, qty FROM order_items WHERE owner_id = ?';

const missing = (table: string, name: string) =>
  `{"success":false,"message":"Relation '${name}' does not exist on table '${table}'","code":"UNKNOWN_RELATION"}`;

describe('a relation the role may not follow does not exist for it', () => {
  test.each([
    // addresses: not readable.
    ['customers', '$expand=billing_address', 'billing_address'],
    ['customers', "$filter=billing_address/city eq 'Paris'", 'billing_address'],
    ['customers', '$orderby=billing_address/city', 'billing_address'],
    ['customers', '$expand=orders($expand=customer($expand=billing_address))', 'billing_address'],
    // audit: not readable.
    ['orders', '$expand=audit', 'audit'],
    ['orders', '$filter=audit/any()', 'audit'],
    // reviews.order_id is hidden: the pairing would show it.
    ['orders', '$expand=reviews', 'reviews'],
    ['orders', "$filter=reviews/any(r: r/author eq 'Ann')", 'reviews'],
    ['reviews', '$expand=order', 'order'],
    // And a name that never existed: the same bytes.
    ['customers', '$expand=nothing', 'nothing'],
  ])('%s?%s: 400, byte for byte as an unknown name', async (table, query, name) => {
    const answer = await get('alice', `/table/${table}/read?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.text).toBe(missing(table, name));
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  test('a table the role may not read at all: its relations are unknown, for lambdas too', async () => {
    for (const query of ['$expand=order_items', '$filter=order_items/any()']) {
      const answer = await get('gus', `/table/orders/read?${query}`);
      expect({ query, status: answer.status, text: answer.text }).toEqual({
        query,
        status: 400,
        text: missing('orders', 'order_items'),
      });
    }
    // The administrator follows every one of them.
    for (const query of ['$expand=reviews,audit,order_items', '$filter=audit/any()']) {
      expect((await get('root', `/table/orders/read?${query}`)).status).toBe(200);
    }
  });
});

describe('the related table’s where filters related rows', () => {
  test('a hidden parent is null; a hidden child is not in the array', async () => {
    await expectRows(
      'alice',
      '/table/orders/read?$orderby=id&$expand=customer',
      await withRelated(await rows(`${ORDER} ORDER BY id`), async (o) => ({
        customer: await row(`${CUSTOMER} AND id = ?`, [o.customer_id]),
      })),
    );
    // Order 13 is Cy's (customer 3, hidden): its customer is null.
    const answer = await get('alice', '/table/orders/read?$filter=id eq 13&$expand=customer');
    expect(answer.text).toBe(
      '[{"id":13,"customer_id":3,"status":"open","note":"c","customer":null}]',
    );
    await expectRows(
      'alice',
      '/table/customers/read?$orderby=id&$expand=orders',
      await withRelated(await rows(`${CUSTOMER} ORDER BY id`), async (c) => ({
        orders: await rows(`${ORDER} AND customer_id = ? ORDER BY id`, [c.id]),
      })),
    );
  });

  test.each(['alice', 'bob'])('%s’s own rows only, two levels down (@user.id)', async (who) => {
    await expectRows(
      who,
      '/table/customers/read?$orderby=id&$expand=orders($expand=order_items)',
      await withRelated(await rows(`${CUSTOMER} ORDER BY id`), async (c) => ({
        orders: await withRelated(
          await rows(`${ORDER} AND customer_id = ? ORDER BY id`, [c.id]),
          async (o) => ({
            order_items: await rows(`${ITEM} AND order_id = ? ORDER BY order_id, line`, [
              ids[who],
              o.id,
            ]),
          }),
        ),
      })),
    );
  });

  test.each(['alice', 'bob'])('%s: paths and lambdas see only readable rows', async (who) => {
    // Orders with an item of the caller's.
    await expectRows(
      who,
      '/table/orders/read?$select=id&$orderby=id&$filter=order_items/any()',
      await rows(
        `SELECT id FROM orders o WHERE status <> 'secret' AND EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id AND i.owner_id = ?) ORDER BY id`,
        [ids[who]],
      ),
    );
    // Every one of the caller's items has qty ≥ 2 (another user's items do not count).
    await expectRows(
      who,
      '/table/orders/read?$select=id&$orderby=id&$filter=order_items/all(i: i/qty ge 2)',
      await rows(
        `SELECT id FROM orders o WHERE status <> 'secret' AND NOT EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id AND i.owner_id = ? AND i.qty < 2) ORDER BY id`,
        [ids[who]],
      ),
    );
    // A hidden customer is no match for its name, and null for a path.
    expect((await get(who, "/table/orders/read?$filter=customer/name eq 'Cy'")).text).toBe('[]');
    await expectRows(
      who,
      '/table/orders/read?$select=id&$orderby=id&$filter=customer/name eq null',
      await rows(
        `SELECT o.id FROM orders o LEFT JOIN customers c ON c.id = o.customer_id AND c.id <> 3 WHERE o.status <> 'secret' AND c.name IS NULL ORDER BY o.id`,
      ),
    );
    const counted = await get(
      who,
      '/table/orders/read?$count=true&$top=0&$filter=order_items/any()',
    );
    const [{ n }] = (await rows(
      `SELECT COUNT(*) AS n FROM orders o WHERE status <> 'secret' AND EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id AND i.owner_id = ?)`,
      [ids[who]],
    )) as [{ n: { text: string } }];
    expect(counted.headers.get('x-total-count')).toBe(n.text);
  });

  test('an expanded item’s own $filter is ANDed with the where, never instead of it', async () => {
    await expectRows(
      'alice',
      '/table/orders/read?$orderby=id&$select=id&$expand=order_items($filter=owner_id ne 0 or qty gt 0;$select=line,owner_id)',
      await withRelated(
        await rows(`SELECT id FROM orders WHERE status <> 'secret' ORDER BY id`),
        async (o) => ({
          order_items: await rows(
            'SELECT line, owner_id FROM order_items WHERE owner_id = ? AND order_id = ? ORDER BY order_id, line',
            [ids.alice, o.id],
          ),
        }),
      ),
    );
  });
});

describe('hidden columns stay hidden through relations', () => {
  const unknown = (column: string, table: string) =>
    `{"success":false,"message":"Column '${column}' does not exist in table '${table}'","code":"UNKNOWN_COLUMN"}`;

  test.each([
    ['orders', '$expand=customer($select=secret)', 'secret', 'customers'],
    ['orders', '$expand=customer($select=name,secret)', 'secret', 'customers'],
    ['orders', "$expand=customer($filter=secret eq 's1')", 'secret', 'customers'],
    ['orders', "$filter=customer/secret eq 's1'", 'secret', 'customers'],
    ['orders', "$filter=startswith(customer/secret, 's')", 'secret', 'customers'],
    ['orders', '$orderby=customer/secret', 'secret', 'customers'],
    ['customers', '$expand=orders($select=internal_code)', 'internal_code', 'orders'],
    ['customers', "$expand=orders($filter=internal_code eq 'X1')", 'internal_code', 'orders'],
    ['customers', '$expand=orders($orderby=internal_code)', 'internal_code', 'orders'],
    ['customers', "$filter=orders/any(o: o/internal_code eq 'X1')", 'internal_code', 'orders'],
    [
      'customers',
      '$filter=orders/all(o: o/order_items/any(i: i/cost gt 1))',
      'cost',
      'order_items',
    ],
    ['customers', '$expand=orders($expand=order_items($select=cost))', 'cost', 'order_items'],
    ['customers', '$expand=orders/order_items($orderby=cost desc)', 'cost', 'order_items'],
  ])('%s?%s: 400 as an unknown column', async (table, query, column, where) => {
    const answer = await get('alice', `/table/${table}/read?${query}`);
    expect({ status: answer.status, text: answer.text }).toEqual({
      status: 400,
      text: unknown(column, where),
    });
  });

  test('* at depth is the granted columns, in table order', async () => {
    const answer = await get(
      'alice',
      '/table/orders/read?$filter=id eq 10&$select=id&$expand=customer,order_items',
    );
    expect(answer.text).toBe(
      `[{"id":10,"customer":{"id":1,"name":"Ann","billing_address_id":1},"order_items":[{"order_id":10,"line":1,"owner_id":${ids.alice},"qty":2}]}]`,
    );
  });
});

test('/openapi.json shows each role only the relations it may follow', async () => {
  const relationsOf = async (who: string) => {
    const doc = (await (
      await fetch(`${gw.url}/openapi.json`, {
        headers: { authorization: `Bearer ${tokens[who]}` },
      })
    ).json()) as { paths: Record<string, { get?: { 'x-relations'?: object } }> };
    return Object.fromEntries(
      Object.entries(doc.paths)
        .filter(([route]) => route.endsWith('/read'))
        .map(([route, item]) => [
          route.split('/')[2],
          Object.keys(item.get?.['x-relations'] ?? {}),
        ]),
    );
  };
  expect(await relationsOf('alice')).toEqual({
    customers: ['orders'],
    order_items: ['order'],
    orders: ['customer', 'order_items'],
    reviews: [],
  });
  expect(await relationsOf('gus')).toEqual({ customers: ['orders'], orders: ['customer'] });
  expect(await relationsOf('root')).toEqual({
    addresses: ['customers'],
    audit: ['order'],
    customers: ['billing_address', 'orders'],
    order_items: ['order'],
    orders: ['customer', 'audit', 'order_items', 'reviews'],
    reviews: ['order'],
  });
});
