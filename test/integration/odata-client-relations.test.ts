/**
 * What a real OData client sends across relations: `odata-query` 8 builds `$expand` (nested
 * options, paths) and `any`/`all` lambdas (with its own habit of naming the lambda variable
 * after the relation: `order_items/any(order_items:order_items/qty gt 5)`); the test checks what
 * it builds, sends it to the gateway as a client would, and compares every answer (values, key
 * order, X-Total-Count) with hand-written SQL run directly on MariaDB. What it can build that
 * the gateway does not take (`$count` inside `$expand`) is a 400 naming it.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import buildQuery from 'odata-query';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { type ExactNumber, parseExact } from '../helpers/exact-json.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import {
  oracleConnection,
  param,
  type SqlRow,
  sameAnswer,
  sqlRow,
  sqlRows,
} from '../helpers/sql-rows.js';

const SCHEMA = `
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, country VARCHAR(20) NULL);
CREATE TABLE products (sku VARCHAR(10) PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,3) NOT NULL);
CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NULL, note VARCHAR(40) NULL,
  FOREIGN KEY (customer_id) REFERENCES customers (id));
CREATE TABLE order_items (order_id INT NOT NULL, line INT NOT NULL, product VARCHAR(10) NOT NULL,
  qty INT NULL, PRIMARY KEY (order_id, line), FOREIGN KEY (order_id) REFERENCES orders (id),
  FOREIGN KEY (product) REFERENCES products (sku));
INSERT INTO customers VALUES (1, 'Ann', 'France'), (2, 'O''Brien', 'Japan'), (3, 'Cy', NULL);
INSERT INTO products VALUES ('tea', 'Tea', 3.500), ('cup', 'Cup', 12.000), ('pot', 'Pot', 0.125);
INSERT INTO orders VALUES (10, 1, NULL), (11, 2, 'gift'), (12, NULL, NULL), (13, 1, 'rush'), (14, 3, NULL);
INSERT INTO order_items VALUES (10, 1, 'tea', 2), (10, 2, 'cup', 7), (10, 3, 'tea', 1), (11, 1, 'cup', 1),
  (13, 1, 'pot', NULL), (13, 2, 'tea', 5), (14, 1, 'cup', 6), (14, 2, 'pot', 6);
`;

let db: TestDatabase;
let gw: TestGateway;
let oracle: mysql.Connection;

beforeAll(async () => {
  db = await createTestDatabase(SCHEMA);
  gw = await startTestGateway(db.name);
  oracle = await oracleConnection(db.name);
}, 60_000);

afterAll(async () => {
  await oracle?.end();
  await gw?.close();
  await db?.drop();
});

const rows = (sql: string, params: readonly unknown[] = []) =>
  sqlRows(oracle, sql, params.map(param));
const row = (sql: string, params: readonly unknown[] = []) =>
  sqlRow(oracle, sql, params.map(param));

async function each(parents: SqlRow[], add: (p: SqlRow) => Promise<Record<string, unknown>>) {
  const out: SqlRow[] = [];
  for (const parent of parents) out.push({ ...parent, ...(await add(parent)) });
  return out;
}

const items = (o: SqlRow, tail = 'ORDER BY order_id, line', columns = '*') =>
  rows(`SELECT ${columns} FROM order_items WHERE order_id = ? ${tail}`, [o.id]);

interface Spec {
  readonly name: string;
  readonly table: string;
  readonly spec: NonNullable<Parameters<typeof buildQuery>[0]>;
  /** What odata-query must build: the query string, decoded. */
  readonly sends: string;
  readonly expected: () => Promise<unknown>;
  /** For `count: true`: the number of rows the filter matches, by hand. */
  readonly count?: string;
}

const SPECS: readonly Spec[] = [
  {
    name: 'a to-one relation',
    table: 'orders',
    spec: { expand: 'customer', orderBy: 'id' },
    sends: '$expand=customer&$orderby=id',
    expected: async () =>
      each(await rows('SELECT * FROM orders ORDER BY id'), async (o) => ({
        customer: await row('SELECT * FROM customers WHERE id = ?', [o.customer_id]),
      })),
  },
  {
    name: 'two relations, a list',
    table: 'orders',
    spec: { expand: ['customer', 'order_items'], orderBy: 'id' },
    sends: '$expand=customer,order_items&$orderby=id',
    expected: async () =>
      each(await rows('SELECT * FROM orders ORDER BY id'), async (o) => ({
        customer: await row('SELECT * FROM customers WHERE id = ?', [o.customer_id]),
        order_items: await items(o),
      })),
  },
  {
    name: 'a path, as odata-query nests it',
    table: 'orders',
    spec: { expand: 'order_items/products', orderBy: 'id', select: ['id'] },
    sends: '$select=id&$expand=order_items($expand=products)&$orderby=id',
    expected: async () =>
      each(await rows('SELECT id FROM orders ORDER BY id'), async (o) => ({
        order_items: await each(await items(o), async (i) => ({
          products: await row('SELECT * FROM products WHERE sku = ?', [i.product]),
        })),
      })),
  },
  {
    name: 'every nested option',
    table: 'orders',
    spec: {
      select: ['id'],
      orderBy: 'id',
      expand: {
        order_items: {
          select: ['line', 'qty'],
          top: 2,
          skip: 1,
          orderBy: [['qty', 'desc'], 'line'],
          filter: { qty: { gt: 1 } },
          expand: { products: { select: ['name', 'price'] } },
        },
      },
    },
    sends:
      '$select=id&$expand=order_items($select=line,qty;$top=2;$skip=1;$orderby=qty desc,line;$filter=qty gt 1;$expand=products($select=name,price))&$orderby=id',
    expected: async () =>
      each(await rows('SELECT id FROM orders ORDER BY id'), async (o) => ({
        order_items: (
          await each(
            await items(o, 'AND qty > 1 ORDER BY qty DESC, line LIMIT 2 OFFSET 1'),
            async (i) => ({
              products: await row('SELECT name, price FROM products WHERE sku = ?', [i.product]),
            }),
          )
        ).map(({ line, qty, products }) => ({ line, qty, products })),
      })),
  },
  {
    name: 'three levels of nested objects',
    table: 'customers',
    spec: {
      select: ['name'],
      orderBy: 'id',
      expand: { orders: { select: ['id'], expand: { order_items: { expand: 'products' } } } },
    },
    sends:
      '$select=name&$expand=orders($select=id;$expand=order_items($expand=products))&$orderby=id',
    expected: async () =>
      each(await rows('SELECT name, id FROM customers ORDER BY id'), async (c) => ({
        orders: await each(
          await rows('SELECT id FROM orders WHERE customer_id = ? ORDER BY id', [c.id]),
          async (o) => ({
            order_items: await each(await items(o), async (i) => ({
              products: await row('SELECT * FROM products WHERE sku = ?', [i.product]),
            })),
          }),
        ),
      })).then((list) => list.map(({ id: _, ...rest }) => rest)),
  },
  {
    name: 'any with a condition',
    table: 'orders',
    spec: { select: ['id'], filter: { order_items: { any: { qty: { gt: 5 } } } }, orderBy: 'id' },
    sends: '$select=id&$filter=order_items/any(order_items:order_items/qty gt 5)&$orderby=id',
    expected: () =>
      rows(
        'SELECT id FROM orders WHERE id IN (SELECT order_id FROM order_items WHERE qty > 5) ORDER BY id',
      ),
  },
  {
    name: 'all (true for an order without items, false for a NULL)',
    table: 'orders',
    spec: { select: ['id'], filter: { order_items: { all: { qty: { gt: 1 } } } }, orderBy: 'id' },
    sends: '$select=id&$filter=order_items/all(order_items:order_items/qty gt 1)&$orderby=id',
    expected: () =>
      rows(
        'SELECT id FROM orders WHERE id NOT IN (SELECT order_id FROM order_items WHERE qty <= 1 OR qty IS NULL) ORDER BY id',
      ),
  },
  {
    name: 'any() and not',
    table: 'orders',
    spec: { select: ['id'], filter: { not: { order_items: { any: {} } } }, orderBy: 'id' },
    sends: '$select=id&$filter=not (order_items/any())&$orderby=id',
    expected: () =>
      rows('SELECT id FROM orders WHERE id NOT IN (SELECT order_id FROM order_items) ORDER BY id'),
  },
  {
    name: 'a lambda with a path inside, two conditions',
    table: 'orders',
    spec: {
      select: ['id'],
      filter: { order_items: { any: [{ products: { name: 'Cup' } }, { qty: { ge: 6 } }] } },
      orderBy: 'id',
    },
    sends:
      "$select=id&$filter=order_items/any(order_items:order_items/products/name eq 'Cup' and order_items/qty ge 6)&$orderby=id",
    expected: () =>
      rows(
        "SELECT id FROM orders WHERE id IN (SELECT order_id FROM order_items i JOIN products p ON p.sku = i.product WHERE p.name = 'Cup' AND i.qty >= 6) ORDER BY id",
      ),
  },
  {
    name: 'nested lambdas',
    table: 'customers',
    spec: {
      select: ['id'],
      filter: { orders: { any: { order_items: { any: { product: 'pot' } } } } },
      orderBy: 'id',
    },
    sends:
      "$select=id&$filter=orders/any(orders:orders/order_items/any(order_items:order_items/product eq 'pot'))&$orderby=id",
    expected: () =>
      rows(
        "SELECT id FROM customers WHERE id IN (SELECT customer_id FROM orders o JOIN order_items i ON i.order_id = o.id WHERE i.product = 'pot') ORDER BY id",
      ),
  },
  {
    name: 'a path in $filter (a string with a quote) and in $orderby',
    table: 'orders',
    spec: {
      select: ['id'],
      filter: { customer: { name: { startswith: "O'B" } } },
      orderBy: [['customer/name', 'desc'], 'id'],
    },
    sends: "$select=id&$filter=startswith(customer/name,'O''B')&$orderby=customer/name desc,id",
    expected: () =>
      rows(
        "SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.name LIKE 'O''B%' ORDER BY c.name DESC, o.id",
      ),
  },
  {
    name: 'a lambda inside an expansion, with $count of the top rows',
    table: 'customers',
    spec: {
      select: ['id'],
      count: true,
      top: 2,
      orderBy: 'id',
      filter: { country: { ne: null } },
      expand: { orders: { select: ['id'], filter: { order_items: { any: { qty: { gt: 5 } } } } } },
    },
    sends:
      '$select=id&$filter=country ne null&$expand=orders($select=id;$filter=order_items/any(order_items:order_items/qty gt 5))&$orderby=id&$count=true&$top=2',
    expected: async () =>
      each(
        await rows('SELECT id FROM customers WHERE country IS NOT NULL ORDER BY id LIMIT 2'),
        async (c) => ({
          orders: await rows(
            'SELECT id FROM orders o WHERE customer_id = ? AND EXISTS (SELECT 1 FROM order_items WHERE order_id = o.id AND qty > 5) ORDER BY id',
            [c.id],
          ),
        }),
      ),
    count: 'SELECT COUNT(*) AS n FROM customers WHERE country IS NOT NULL',
  },
];

describe('odata-query builds it, the gateway answers it, SQL agrees', () => {
  test.each(SPECS.map((s) => [s.name, s] as const))('%s', async (_, spec) => {
    const query = buildQuery(spec.spec);
    expect(decodeURIComponent(query)).toBe(`?${spec.sends}`);
    // As a client sends it: fetch encodes what odata-query left as is (spaces, quotes).
    const response = await fetch(`${gw.url}/table/${spec.table}/read${query}`);
    const text = await response.text();
    expect({ query, status: response.status, text: response.ok ? '' : text }).toEqual({
      query,
      status: 200,
      text: '',
    });
    expect({ query, problem: sameAnswer(parseExact(text), await spec.expected()) }).toEqual({
      query,
      problem: null,
    });
    if (spec.count !== undefined) {
      const [{ n }] = (await rows(spec.count)) as [{ n: ExactNumber }];
      expect(response.headers.get('x-total-count')).toBe(n.text);
    }
  });
});

test('what odata-query builds that the gateway does not take is a 400 naming it', async () => {
  for (const [spec, message] of [
    [
      { expand: { order_items: { count: true } } },
      "Unknown option '$count' in $expand 'order_items'; the options are $select, $filter, $orderby, $top, $skip, $expand",
    ],
    [
      { expand: { order_items: { levels: 2 } } },
      "Unknown option '$levels' in $expand 'order_items'; the options are $select, $filter, $orderby, $top, $skip, $expand",
    ],
  ] as const) {
    const query = buildQuery(spec);
    const response = await fetch(`${gw.url}/table/orders/read${query}`);
    expect({ query, status: response.status, body: await response.json() }).toEqual({
      query,
      status: 400,
      body: { success: false, message, code: 'INVALID_QUERY' },
    });
  }
});
