/**
 * Related rows (docs/relations.md) against MariaDB, every rule on a schema with several foreign
 * keys: two keys to one table (billing and shipping address), a self-reference
 * (employee.manager_id), a composite key (order_items (order_id, line) referenced by shipments),
 * a NULL key and one that matches nothing, a key not ending in _id (order_items.product), the
 * naming collisions (employee.store / store_by_manager_employee_id, a to-one named like a column,
 * a to-many named like a column), a column name with a space, and a table of every value type.
 * Every answer is compared with what plain SELECTs, written by hand here and run through mysql2,
 * say it must be (test/helpers/sql-rows.ts), digits and key order included; lambdas are
 * evaluated in JavaScript over plain reads of both tables.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { ExactNumber, num, parseExact } from '../helpers/exact-json.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import {
  FloatValue,
  oracleConnection,
  param,
  type SqlRow,
  sameAnswer,
  sqlRow,
  sqlRows,
} from '../helpers/sql-rows.js';

const SCHEMA = `
CREATE TABLE addresses (id INT PRIMARY KEY, city VARCHAR(50) NOT NULL, \`zip code\` VARCHAR(10) NULL);
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL, country VARCHAR(30) NULL,
  billing_address_id INT NULL, shipping_address_id INT NULL, tickets INT NOT NULL DEFAULT 0,
  FOREIGN KEY (billing_address_id) REFERENCES addresses (id),
  FOREIGN KEY (shipping_address_id) REFERENCES addresses (id));
CREATE TABLE products (sku VARCHAR(20) PRIMARY KEY, name VARCHAR(50) NOT NULL, price DECIMAL(12,4) NOT NULL);
CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NULL, placed DATETIME(3) NOT NULL,
  note VARCHAR(50) NULL, FOREIGN KEY (customer_id) REFERENCES customers (id));
CREATE TABLE order_items (order_id INT NOT NULL, line INT NOT NULL, product VARCHAR(20) NOT NULL,
  qty INT NULL, PRIMARY KEY (order_id, line),
  FOREIGN KEY (order_id) REFERENCES orders (id), FOREIGN KEY (product) REFERENCES products (sku));
CREATE TABLE shipments (id INT PRIMARY KEY, order_id INT NOT NULL, line INT NOT NULL, carrier VARCHAR(20) NULL,
  FOREIGN KEY (order_id, line) REFERENCES order_items (order_id, line));
CREATE TABLE store (id INT PRIMARY KEY, name VARCHAR(30) NOT NULL, manager_employee_id INT NULL);
CREATE TABLE employee (id INT PRIMARY KEY, name VARCHAR(30) NOT NULL, manager_id INT NULL, store_id INT NULL,
  FOREIGN KEY (manager_id) REFERENCES employee (id), FOREIGN KEY (store_id) REFERENCES store (id));
ALTER TABLE store ADD FOREIGN KEY (manager_employee_id) REFERENCES employee (id);
CREATE TABLE tickets (id INT PRIMARY KEY, owner VARCHAR(30) NOT NULL, owner_id INT NULL,
  FOREIGN KEY (owner_id) REFERENCES customers (id));
CREATE TABLE kind_owners (id INT PRIMARY KEY);
CREATE TABLE kinds (id INT PRIMARY KEY, owner_id INT NULL, d DECIMAL(30,10), dt DATETIME(3), tm TIME(3),
  big BIGINT UNSIGNED, neg BIGINT, bin VARBINARY(100), blb BLOB, f FLOAT, db DOUBLE, b BIT(64), b1 BIT(1),
  j JSON, e ENUM('a','b c'), s SET('x','y'), y YEAR, da DATE, ts TIMESTAMP(6) NULL,
  txt TEXT, lat VARCHAR(20) CHARACTER SET latin1, ti TINYINT, bo BOOLEAN,
  FOREIGN KEY (owner_id) REFERENCES kind_owners (id));
CREATE TABLE kind_refs (id INT PRIMARY KEY, kind_id INT NULL, FOREIGN KEY (kind_id) REFERENCES kinds (id));

INSERT INTO addresses VALUES (1, 'Paris', '75001'), (2, 'Lyon', NULL), (3, 'Kyoto', '600-0001'),
  (4, 'Zürich "Nord"', '8000');
INSERT INTO customers VALUES (1, 'Ann', 'France', 1, 2, 0), (2, 'Bo', 'Japan', 3, NULL, 1),
  (3, 'Cy', NULL, NULL, NULL, 0), (4, 'Di', 'France', 4, 4, 2);
INSERT INTO products VALUES ('tea', 'Tea', 3.5000), ('cup', 'Cup', 12.0000), ('pot', 'Pot', 0.0001);
INSERT INTO orders VALUES (10, 1, '2024-01-01 10:00:00.100', NULL), (11, 2, '2024-01-02 00:00:00.000', 'x'),
  (12, NULL, '2024-01-03 00:00:00.000', NULL), (13, 1, '2024-01-04 12:30:00.999', 'rush'),
  (14, 4, '2024-01-05 08:00:00.000', 'O''Brien');
INSERT INTO order_items VALUES (10, 1, 'tea', 2), (10, 2, 'cup', 7), (10, 3, 'tea', 1), (11, 1, 'cup', 1),
  (13, 1, 'pot', NULL), (13, 2, 'tea', 5), (14, 1, 'cup', 6), (14, 2, 'cup', 6);
INSERT INTO shipments VALUES (1, 10, 1, 'DHL'), (2, 10, 2, 'UPS'), (3, 14, 2, NULL);
INSERT INTO store VALUES (1, 'North', NULL), (2, 'South', NULL);
INSERT INTO employee VALUES (1, 'Boss', NULL, 1), (2, 'Mid', 1, 1), (3, 'Low', 2, 2), (4, 'Lone', NULL, NULL);
UPDATE store SET manager_employee_id = 1 WHERE id = 1;
UPDATE store SET manager_employee_id = 3 WHERE id = 2;
INSERT INTO tickets VALUES (1, 'Ann herself', 1), (2, 'someone', 2), (3, 'nobody', NULL), (4, 'again', 1);
-- A key that matches nothing (the foreign key checks off for this one row).
SET foreign_key_checks = 0;
INSERT INTO orders VALUES (15, 99, '2024-01-06 00:00:00.000', 'dangling');
SET foreign_key_checks = 1;

INSERT INTO kind_owners VALUES (1), (2), (3);
INSERT INTO kinds VALUES
 (1, 1, 12345678901234567890.0123456789, '2024-01-02 03:04:05.000', '10:00:00.500', 18446744073709551615,
  -9223372036854775808, X'00FF10', REPEAT(X'AB', 100), 1.1, 0.30000000000000004,
  b'1111111111111111111111111111111111111111111111111111111111111111', b'1',
  '{"a": 1.10, "big": 12345678901234567890, "s": "é\\\\u0000"}', 'b c', 'x,y', 2024, '2024-02-29',
  '2024-01-01 00:00:00.000001', 'line\\nnew "q" \\\\ tab\\t😀', 'café', -128, TRUE),
 (2, 1, -0.0000000001, '1000-01-01 00:00:00.999', '-838:59:59.000', 9007199254740993, 9007199254740992,
  X'', NULL, 3.4028234e38, 1e308, b'0', b'0', '[1, "two", null, true, -0.0]', 'a', '', 1901, '1000-01-01',
  NULL, '', NULL, 127, FALSE),
 (3, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL),
 (4, NULL, 0.5, '2024-06-30 23:59:59.001', '00:00:00.000', 0, -1, X'FF', X'', -2.5, -1.5e-300, b'101',
  b'1', '"just a string"', 'a', 'y', 2155, '2024-06-30', '2038-01-19 03:14:07.999999', 'x', 'ÿ', 0, NULL),
 (5, 2, 1e-30, '2024-01-01 00:00:00.000', '838:59:59.999', 9007199254740991, -9007199254740991,
  REPEAT(X'00', 100), X'0A', 1e-45, -0.0, b'0', b'0', '{"q": "\\\\"", "n": -0.0e0, "u": "\\\\u00e9"}',
  'b c', 'x,y', 1901, '9999-12-31', '1970-01-01 00:00:01.000000',
  CONCAT('a', CHAR(0 USING utf8mb4), CHAR(1 USING utf8mb4), CHAR(31 USING utf8mb4),
    CHAR(127 USING utf8mb4), _utf8mb4 0xE280A8, '"', '\\\\', '/', CHAR(13 USING utf8mb4)),
  CONCAT('\\\\', '"'), -1, TRUE);
INSERT INTO kind_refs VALUES (1, 1), (2, 2), (3, 3), (4, NULL), (5, 4), (6, 1), (7, 5);
`;

const KIND_JSON = ['j'];

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

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly body: unknown;
}

/** GET `path` (query written as a human would; encoded here), the body parsed without losing digits. */
async function get(path: string): Promise<Answer> {
  const response = await fetch(gw.url + encodeURI(path).replaceAll('#', '%23'));
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: parseExact(text) };
}

/** The rows `path` answers, which must be exactly `expected` (values, digits and key order). */
async function expectRows(path: string, expected: unknown): Promise<unknown> {
  const answer = await get(path);
  expect({ path, status: answer.status }).toEqual({ path, status: 200 });
  expect({ path, problem: sameAnswer(answer.body, expected) }).toEqual({ path, problem: null });
  return answer.body;
}

const rows = (sql: string, params: readonly unknown[] = [], json: readonly string[] = []) =>
  sqlRows(oracle, sql, params.map(param), json);
const row = (sql: string, params: readonly unknown[] = [], json: readonly string[] = []) =>
  sqlRow(oracle, sql, params.map(param), json);

/** `rows` with `add(row)`'s keys appended to each, in order (what an expansion adds). */
async function withRelated(
  parents: SqlRow[],
  add: (parent: SqlRow) => Promise<Record<string, unknown>>,
): Promise<SqlRow[]> {
  const out: SqlRow[] = [];
  for (const parent of parents) out.push({ ...parent, ...(await add(parent)) });
  return out;
}

/** Only the keys named, in that order. */
const pick = (r: SqlRow | null, ...keys: string[]) =>
  r === null ? null : Object.fromEntries(keys.map((k) => [k, r[k]]));

const customerOf = (o: SqlRow) => row('SELECT * FROM customers WHERE id = ?', [o.customer_id]);
const itemsOf = (o: SqlRow, tail = 'ORDER BY order_id, line') =>
  rows(`SELECT * FROM order_items WHERE order_id = ? ${tail}`, [o.id]);

describe('relation names from foreign keys', () => {
  /** Each table's relations: name → [to-one or to-many, target]. */
  const NAMES: Record<string, Record<string, [string, string]>> = {
    addresses: {
      customers_by_billing_address_id: ['many', 'customers'],
      customers_by_shipping_address_id: ['many', 'customers'],
    },
    customers: {
      billing_address: ['one', 'addresses'],
      shipping_address: ['one', 'addresses'],
      orders: ['many', 'orders'],
      // `tickets` is a column of customers.
      tickets_by_owner_id: ['many', 'tickets'],
    },
    orders: { customer: ['one', 'customers'], order_items: ['many', 'order_items'] },
    order_items: {
      order: ['one', 'orders'],
      // A key not ending in _id: the referenced table's name.
      products: ['one', 'products'],
      shipments: ['many', 'shipments'],
    },
    products: { order_items: ['many', 'order_items'] },
    shipments: { order_items: ['one', 'order_items'] },
    employee: {
      manager: ['one', 'employee'],
      store: ['one', 'store'],
      employee: ['many', 'employee'],
      // `store` is employee's to-one already.
      store_by_manager_employee_id: ['many', 'store'],
    },
    store: { manager_employee: ['one', 'employee'], employee: ['many', 'employee'] },
    // `owner` is a column of tickets.
    tickets: { customers_by_owner_id: ['one', 'customers'] },
    kind_owners: { kinds: ['many', 'kinds'] },
    kinds: { owner: ['one', 'kind_owners'], kind_refs: ['many', 'kind_refs'] },
    kind_refs: { kind: ['one', 'kinds'] },
  };

  test('/openapi.json lists every table’s relations: name, target, to-one or to-many', async () => {
    const document = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
      paths: Record<string, { get?: { 'x-relations'?: Record<string, unknown> } }>;
    };
    const listed = Object.fromEntries(
      Object.keys(NAMES).map((table) => [
        table,
        document.paths[`/table/${table}/read`]?.get?.['x-relations'] ?? null,
      ]),
    );
    const expected = Object.fromEntries(
      Object.entries(NAMES).map(([table, relations]) => [
        table,
        Object.fromEntries(
          Object.entries(relations).map(([name, [kind, target]]) => [
            name,
            expect.objectContaining({ kind: kind === 'one' ? 'to-one' : 'to-many', target }),
          ]),
        ),
      ]),
    );
    expect(listed).toEqual(expected);
  });

  test.each(Object.entries(NAMES))(
    'every relation of %s expands to its target: an object (to-one) or an array (to-many)',
    async (table, relations) => {
      const names = Object.keys(relations);
      const answer = await get(`/table/${table}/read?$top=1&$expand=${names.join(',')}`);
      expect(answer.status).toBe(200);
      const [first] = answer.body as Record<string, unknown>[];
      for (const [name, [kind]] of Object.entries(relations)) {
        const value = first?.[name];
        if (kind === 'many')
          expect({ name, array: Array.isArray(value) }).toEqual({ name, array: true });
        else
          expect({
            name,
            ok: value === null || (typeof value === 'object' && !Array.isArray(value)),
          }).toEqual({ name, ok: true });
      }
    },
  );
});

describe('to-one relations', () => {
  test('an object, or null for no key and for a key that matches nothing; keys after the columns', async () => {
    const orders = await rows('SELECT * FROM orders ORDER BY id');
    await expectRows(
      '/table/orders/read?$orderby=id&$expand=customer',
      await withRelated(orders, async (o) => ({ customer: await customerOf(o) })),
    );
    // Orders 12 (NULL key) and 15 (customer 99 does not exist) are among them.
    expect(orders.map((o) => o.customer_id)).toEqual(expect.arrayContaining([null, num(99)]));
  });

  test('two keys to one table: each relation follows its own column', async () => {
    const customers = await rows('SELECT * FROM customers ORDER BY id');
    await expectRows(
      '/table/customers/read?$orderby=id&$expand=billing_address,shipping_address',
      await withRelated(customers, async (c) => ({
        billing_address: await row('SELECT * FROM addresses WHERE id = ?', [c.billing_address_id]),
        shipping_address: await row('SELECT * FROM addresses WHERE id = ?', [
          c.shipping_address_id,
        ]),
      })),
    );
  });

  test('a composite key: the row whose every key column matches', async () => {
    const shipments = await rows('SELECT * FROM shipments ORDER BY id');
    await expectRows(
      '/table/shipments/read?$orderby=id&$expand=order_items',
      await withRelated(shipments, async (s) => ({
        order_items: await row('SELECT * FROM order_items WHERE order_id = ? AND line = ?', [
          s.order_id,
          s.line,
        ]),
      })),
    );
  });

  test('a self-reference, and the collision-named relations of employee and store', async () => {
    const employees = await rows('SELECT * FROM employee ORDER BY id');
    await expectRows(
      '/table/employee/read?$orderby=id&$expand=manager,store,employee,store_by_manager_employee_id',
      await withRelated(employees, async (e) => ({
        manager: await row('SELECT * FROM employee WHERE id = ?', [e.manager_id]),
        store: await row('SELECT * FROM store WHERE id = ?', [e.store_id]),
        employee: await rows('SELECT * FROM employee WHERE manager_id = ? ORDER BY id', [e.id]),
        store_by_manager_employee_id: await rows(
          'SELECT * FROM store WHERE manager_employee_id = ? ORDER BY id',
          [e.id],
        ),
      })),
    );
    const tickets = await rows('SELECT * FROM tickets ORDER BY id');
    await expectRows(
      '/table/tickets/read?$orderby=id&$expand=customers_by_owner_id($select=name)',
      await withRelated(tickets, async (t) => ({
        customers_by_owner_id: pick(await customerOf({ customer_id: t.owner_id }), 'name'),
      })),
    );
  });

  test('$filter inside: null when the related row fails it, the parent row stays', async () => {
    const orders = await rows('SELECT * FROM orders ORDER BY id');
    await expectRows(
      "/table/orders/read?$orderby=id&$expand=customer($filter=country eq 'France')",
      await withRelated(orders, async (o) => ({
        customer: await row("SELECT * FROM customers WHERE id = ? AND country = 'France'", [
          o.customer_id,
        ]),
      })),
    );
  });

  test('$filter inside through a path of its own (joined inside the related row)', async () => {
    const orders = await rows('SELECT id FROM orders ORDER BY id');
    await expectRows(
      "/table/orders/read?$select=id&$orderby=id&$expand=customer($select=name;$filter=billing_address/city eq 'Paris' or shipping_address/\"zip code\" eq '8000';$expand=billing_address($select=city))",
      await withRelated(orders, async (o) => {
        const customer = await row(
          `SELECT c.name, c.billing_address_id FROM orders o JOIN customers c ON c.id = o.customer_id
             LEFT JOIN addresses b ON b.id = c.billing_address_id
             LEFT JOIN addresses s ON s.id = c.shipping_address_id
            WHERE o.id = ? AND (b.city = 'Paris' OR s.\`zip code\` = '8000')`,
          [o.id],
        );
        return {
          customer:
            customer === null
              ? null
              : {
                  name: customer.name,
                  billing_address: pick(
                    await row('SELECT city FROM addresses WHERE id = ?', [
                      customer.billing_address_id,
                    ]),
                    'city',
                  ),
                },
        };
      }),
    );
  });
});

describe('to-one relations inside to-many ones', () => {
  test.each([
    'id eq 4',
    'id eq 4.0',
    "id eq '4'",
    'id in (4, 5)',
    'city eq \'Zürich "Nord"\' and id eq 4',
  ])(
    // MariaDB 10.11 read the related table as a constant for such a filter and, inside the
    // correlated subquery, answered NULL for its nullable columns once a parent row before had
    // no match: `"zip code": null` for Di's shipping address.
    'a $filter comparing the related key: every value of the row (%s)',
    async (filter) => {
      const addresses = await rows('SELECT id FROM addresses ORDER BY id');
      await expectRows(
        `/table/addresses/read?$select=id&$orderby=id&$expand=customers_by_billing_address_id($select=id;$expand=shipping_address($filter=${filter}))`,
        await withRelated(addresses, async (a) => ({
          customers_by_billing_address_id: await Promise.all(
            (
              await rows(
                'SELECT id, shipping_address_id FROM customers WHERE billing_address_id = ? ORDER BY id',
                [a.id],
              )
            ).map(async (c) => ({
              id: c.id,
              shipping_address: await row('SELECT * FROM addresses WHERE id = ? AND id = 4', [
                c.shipping_address_id,
              ]),
            })),
          ),
        })),
      );
    },
  );
});

describe('to-many relations', () => {
  test('an array per row ([] when none), ordered by the primary key (composite too)', async () => {
    const orders = await rows('SELECT * FROM orders ORDER BY id');
    await expectRows(
      '/table/orders/read?$orderby=id&$expand=order_items',
      await withRelated(orders, async (o) => ({ order_items: await itemsOf(o) })),
    );
    const addresses = await rows('SELECT * FROM addresses ORDER BY id');
    await expectRows(
      '/table/addresses/read?$orderby=id&$expand=customers_by_billing_address_id,customers_by_shipping_address_id',
      await withRelated(addresses, async (a) => ({
        customers_by_billing_address_id: await rows(
          'SELECT * FROM customers WHERE billing_address_id = ? ORDER BY id',
          [a.id],
        ),
        customers_by_shipping_address_id: await rows(
          'SELECT * FROM customers WHERE shipping_address_id = ? ORDER BY id',
          [a.id],
        ),
      })),
    );
  });

  test.each([
    ['qty desc,line', 'ORDER BY qty DESC, line'],
    // NULL first when ascending, as MySQL sorts it.
    ['qty,line desc', 'ORDER BY qty, line DESC'],
    [
      'products/name desc,line',
      'ORDER BY (SELECT name FROM products WHERE sku = product) DESC, line',
    ],
  ])('ordered by $orderby=%s per parent', async (orderby, sql) => {
    const orders = await rows('SELECT * FROM orders ORDER BY id');
    await expectRows(
      `/table/orders/read?$orderby=id&$expand=order_items($orderby=${orderby})`,
      await withRelated(orders, async (o) => ({ order_items: await itemsOf(o, sql) })),
    );
  });

  test.each([
    ['$top=2', 'LIMIT 2'],
    ['$top=2;$skip=1', 'LIMIT 2 OFFSET 1'],
    ['$skip=1', 'LIMIT 18446744073709551615 OFFSET 1'],
    ['$top=0', 'LIMIT 0'],
    ['$skip=5', 'LIMIT 18446744073709551615 OFFSET 5'],
    ['$top=1;$orderby=qty desc,line', 'ORDER BY qty DESC, line LIMIT 1'],
    // The LIMIT's parameters before the filter's (once in the wrong order: a 500).
    ['$filter=qty ge 2;$top=1;$skip=1', 'AND qty >= 2 ORDER BY order_id, line LIMIT 1 OFFSET 1'],
    [
      "$filter=products/name ne 'Pot';$top=2;$expand=products($filter=price gt 4)",
      "AND product <> 'pot' ORDER BY order_id, line LIMIT 2",
    ],
  ])('paged per parent row: %s', async (options, sql) => {
    const orders = await rows('SELECT * FROM orders ORDER BY id');
    const withProducts = options.includes('$expand=products');
    await expectRows(
      `/table/orders/read?$orderby=id&$expand=order_items(${options})`,
      await withRelated(orders, async (o) => ({
        order_items: await withRelated(
          await itemsOf(o, /^(ORDER|AND)/.test(sql) ? sql : `ORDER BY order_id, line ${sql}`),
          async (i) =>
            withProducts
              ? {
                  products: await row('SELECT * FROM products WHERE sku = ? AND price > 4', [
                    i.product,
                  ]),
                }
              : {},
        ),
      })),
    );
  });

  test('$filter inside filters each parent’s rows; the parent rows stay', async () => {
    const customers = await rows('SELECT * FROM customers ORDER BY id');
    await expectRows(
      '/table/customers/read?$orderby=id&$expand=orders($filter=note ne null and placed ge 2024-01-02T00:00:00Z)',
      await withRelated(customers, async (c) => ({
        orders: await rows(
          "SELECT * FROM orders WHERE customer_id = ? AND note IS NOT NULL AND placed >= '2024-01-02' ORDER BY id",
          [c.id],
        ),
      })),
    );
  });
});

describe('a page of the top rows with their related rows', () => {
  test.each([
    ['$orderby=id&$top=2&$skip=1', 'ORDER BY id LIMIT 2 OFFSET 1'],
    ['$orderby=note desc,id&$skip=2', 'ORDER BY note DESC, id LIMIT 100 OFFSET 2'],
    [
      "$filter=note ne 'x'&$orderby=id desc&$top=3&$skip=1",
      "WHERE note <> 'x' ORDER BY id DESC LIMIT 3 OFFSET 1",
    ],
    // Read in one SELECT (the order needs the join), the same rows.
    ['$orderby=customer/name,id&$top=3&$skip=1', null],
  ])('%s', async (query, sql) => {
    const orders =
      sql === null
        ? await rows(
            'SELECT o.* FROM orders o LEFT JOIN customers c ON c.id = o.customer_id ORDER BY c.name, o.id LIMIT 3 OFFSET 1',
          )
        : await rows(`SELECT * FROM orders ${sql}`);
    await expectRows(
      `/table/orders/read?${query}&$expand=customer($select=name;$expand=billing_address),order_items($select=line)`,
      await withRelated(orders, async (o) => {
        const customer = await customerOf(o);
        return {
          customer: customer && {
            name: customer.name,
            billing_address: await row('SELECT * FROM addresses WHERE id = ?', [
              customer.billing_address_id,
            ]),
          },
          order_items: (await itemsOf(o)).map((i) => pick(i, 'line')),
        };
      }),
    );
  });
});

describe('$select inside, nesting and paths', () => {
  test('$select inside: only the named columns are written, the keys are read anyway', async () => {
    const orders = await rows('SELECT id, note, customer_id FROM orders ORDER BY id');
    await expectRows(
      '/table/orders/read?$select=note&$orderby=id&$expand=customer($select=name),order_items($select=qty)',
      await withRelated(orders, async (o) => ({
        customer: pick(await customerOf(o), 'name'),
        order_items: (await itemsOf(o)).map((i) => pick(i, 'qty')),
      })).then((list) => list.map(({ id: _, customer_id: __, ...rest }) => rest)),
    );
  });

  test('3 levels: to-many in to-many in to-many, to-one chains, and mixed', async () => {
    const customers = await rows('SELECT id, name FROM customers ORDER BY id');
    await expectRows(
      '/table/customers/read?$select=id,name&$orderby=id&$expand=orders($select=id;$expand=order_items($select=line,product;$expand=shipments($select=carrier)))',
      await withRelated(customers, async (c) => ({
        orders: await Promise.all(
          (await rows('SELECT id FROM orders WHERE customer_id = ? ORDER BY id', [c.id])).map(
            async (o) => ({
              ...o,
              order_items: await Promise.all(
                (
                  await rows(
                    'SELECT line, product, order_id FROM order_items WHERE order_id = ? ORDER BY order_id, line',
                    [o.id],
                  )
                ).map(async (i) => ({
                  line: i.line,
                  product: i.product,
                  shipments: await rows(
                    'SELECT carrier FROM shipments WHERE order_id = ? AND line = ? ORDER BY id',
                    [i.order_id, i.line],
                  ),
                })),
              ),
            }),
          ),
        ),
      })),
    );
    const items = await rows('SELECT * FROM order_items ORDER BY order_id, line');
    await expectRows(
      '/table/order_items/read?$orderby=order_id,line&$expand=order($expand=customer($expand=billing_address))',
      await withRelated(items, async (i) => {
        const order = await row('SELECT * FROM orders WHERE id = ?', [i.order_id]);
        const customer = order && (await customerOf(order));
        return {
          order: order && {
            ...order,
            customer: customer && {
              ...customer,
              billing_address: await row('SELECT * FROM addresses WHERE id = ?', [
                customer.billing_address_id,
              ]),
            },
          },
        };
      }),
    );
    const products = await rows('SELECT * FROM products ORDER BY sku');
    await expectRows(
      '/table/products/read?$orderby=sku&$expand=order_items($select=order_id,qty;$expand=order($select=id;$expand=customer($select=name)))',
      await withRelated(products, async (p) => ({
        order_items: await Promise.all(
          (
            await rows(
              'SELECT order_id, qty FROM order_items WHERE product = ? ORDER BY order_id, line',
              [p.sku],
            )
          ).map(async (i) => {
            const order = await row('SELECT id, customer_id FROM orders WHERE id = ?', [
              i.order_id,
            ]);
            return {
              ...i,
              order: order && {
                id: order.id,
                customer: pick(await customerOf(order), 'name'),
              },
            };
          }),
        ),
      })),
    );
  });

  test('a path a/b is the nested form; options go to its last relation', async () => {
    const nested = await get(
      '/table/orders/read?$orderby=id&$expand=order_items($expand=products)',
    );
    const path = await get('/table/orders/read?$orderby=id&$expand=order_items/products');
    expect(path.status).toBe(200);
    expect(path.text).toBe(nested.text);
    const customers = await rows('SELECT * FROM customers ORDER BY id');
    await expectRows(
      '/table/customers/read?$orderby=id&$expand=orders/order_items($select=line;$top=1;$orderby=line desc)',
      await withRelated(customers, async (c) => ({
        orders: await withRelated(
          await rows('SELECT * FROM orders WHERE customer_id = ? ORDER BY id', [c.id]),
          async (o) => ({
            order_items: await rows(
              'SELECT line FROM order_items WHERE order_id = ? ORDER BY line DESC LIMIT 1',
              [o.id],
            ),
          }),
        ),
      })),
    );
  });

  test('quoted names: a column with a space in $select, $filter and $orderby inside, and in paths', async () => {
    const customers = await rows('SELECT * FROM customers ORDER BY id');
    await expectRows(
      '/table/customers/read?$orderby=id&$expand=billing_address($select="zip code",city;$filter="zip code" ne null)',
      await withRelated(customers, async (c) => ({
        billing_address: await row(
          'SELECT `zip code`, city FROM addresses WHERE id = ? AND `zip code` IS NOT NULL',
          [c.billing_address_id],
        ),
      })),
    );
    await expectRows(
      '/table/customers/read?$select=id&$orderby=billing_address/"zip code" desc,id&$filter=billing_address/"zip code" ne \'75001\'',
      await rows(
        "SELECT c.id FROM customers c LEFT JOIN addresses a ON a.id = c.billing_address_id WHERE a.`zip code` <> '75001' ORDER BY a.`zip code` DESC, c.id",
      ),
    );
    const addresses = await rows('SELECT id FROM addresses ORDER BY id');
    await expectRows(
      '/table/addresses/read?$select=id&$orderby=id&$expand=customers_by_shipping_address_id($select=name;$orderby=billing_address/"zip code" desc)',
      await withRelated(addresses, async (a) => ({
        customers_by_shipping_address_id: await rows(
          'SELECT c.name FROM customers c LEFT JOIN addresses b ON b.id = c.billing_address_id WHERE c.shipping_address_id = ? ORDER BY b.`zip code` DESC',
          [a.id],
        ),
      })),
    );
  });
});

describe('paths in $filter and $orderby', () => {
  test.each([
    ["customer/country eq 'Japan'", "c.country = 'Japan'"],
    // No customer, and a key that matches nothing, are NULL there too.
    ['customer/country eq null', 'c.country IS NULL'],
    ["customer/country ne 'Japan'", "c.country <> 'Japan'"],
    ["customer/billing_address/city eq 'Paris'", "b.city = 'Paris'"],
    ["startswith(customer/name, 'A') and note eq null", "c.name LIKE 'A%' AND o.note IS NULL"],
    ['year(placed) eq 2024 and customer/id in (1, 4)', 'YEAR(o.placed) = 2024 AND c.id IN (1, 4)'],
  ])('$filter=%s', async (filter, sql) => {
    await expectRows(
      `/table/orders/read?$select=id&$orderby=id&$filter=${filter}`,
      await rows(
        `SELECT o.id FROM orders o LEFT JOIN customers c ON c.id = o.customer_id
           LEFT JOIN addresses b ON b.id = c.billing_address_id WHERE ${sql} ORDER BY o.id`,
      ),
    );
  });

  test('$orderby through to-one paths, two steps deep, with ties broken by the key', async () => {
    await expectRows(
      '/table/order_items/read?$select=order_id,line&$orderby=order/customer/name desc,order_id,line',
      await rows(
        `SELECT i.order_id, i.line FROM order_items i JOIN orders o ON o.id = i.order_id
           LEFT JOIN customers c ON c.id = o.customer_id ORDER BY c.name DESC, i.order_id, i.line`,
      ),
    );
    await expectRows(
      '/table/orders/read?$select=id,note&$orderby=customer/country,customer/name desc,id',
      await rows(
        'SELECT o.id, o.note FROM orders o LEFT JOIN customers c ON c.id = o.customer_id ORDER BY c.country, c.name DESC, o.id',
      ),
    );
  });

  test('a path and an expansion of the same relation: one related row for both', async () => {
    const orders = await rows(
      "SELECT o.* FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.country = 'France' ORDER BY c.name, o.id",
    );
    await expectRows(
      "/table/orders/read?$filter=customer/country eq 'France'&$orderby=customer/name,id&$expand=customer($select=name)",
      await withRelated(orders, async (o) => ({ customer: pick(await customerOf(o), 'name') })),
    );
  });
});

describe('any / all over to-many relations (evaluated here in JavaScript)', () => {
  type Row = Record<string, unknown>;
  const number = (v: unknown) => (v instanceof ExactNumber ? Number(v.text) : null);

  /** The ids of the orders for which `test(items of that order)` holds, in id order. */
  async function ordersWhere(test: (items: Row[], order: Row) => boolean) {
    const orders = await rows('SELECT id, note FROM orders ORDER BY id');
    const items = await rows('SELECT * FROM order_items');
    const products = await rows('SELECT * FROM products');
    const productOf = (i: Row) => products.find((p) => p.sku === i.product) ?? null;
    return orders
      .filter((o) =>
        test(
          items
            .filter((i) => number(i.order_id) === number(o.id))
            .map((i) => ({ ...i, productName: productOf(i)?.name ?? null })),
          o,
        ),
      )
      .map((o) => ({ id: o.id }));
  }
  // A comparison with NULL is not true (SQL), so `all` fails on it and `any` skips it.
  const gt = (v: unknown, n: number) => number(v) !== null && (number(v) as number) > n;

  test.each<[string, (items: Row[], order: Row) => boolean]>([
    ['order_items/any(i: i/qty gt 5)', (items) => items.some((i) => gt(i.qty, 5))],
    // True for an order without items; false for one with a NULL qty.
    ['order_items/all(i: i/qty gt 1)', (items) => items.every((i) => gt(i.qty, 1))],
    ['order_items/any()', (items) => items.length > 0],
    ['not order_items/any()', (items) => items.length === 0],
    ['order_items/all(i: i/qty ne null)', (items) => items.every((i) => i.qty !== null)],
    ['order_items/any(i: i/qty eq null)', (items) => items.some((i) => i.qty === null)],
    [
      "order_items/any(i: i/products/name eq 'Cup')",
      (items) => items.some((i) => i.productName === 'Cup'),
    ],
    [
      "order_items/all(i: i/products/name eq 'Cup') and order_items/any()",
      (items) => items.length > 0 && items.every((i) => i.productName === 'Cup'),
    ],
    // A bare name inside the lambda is the outer row's column.
    [
      "order_items/any(i: i/qty gt 5 and note eq 'O''Brien')",
      (items, o) => o.note === "O'Brien" && items.some((i) => gt(i.qty, 5)),
    ],
    [
      'order_items/any(i: i/qty gt 5) or order_items/all(i: i/qty eq 2)',
      (items) => items.some((i) => gt(i.qty, 5)) || items.every((i) => number(i.qty) === 2),
    ],
  ])('$filter=%s', async (filter, holds) => {
    await expectRows(
      `/table/orders/read?$select=id&$orderby=id&$filter=${filter}`,
      await ordersWhere(holds),
    );
  });

  test('lambdas nest, and may follow a to-one path first', async () => {
    const customers = await rows('SELECT id FROM customers ORDER BY id');
    const orders = await rows('SELECT id, customer_id FROM orders');
    const items = await rows('SELECT order_id, product FROM order_items');
    const cupBuyers = customers.filter((c) =>
      orders.some(
        (o) =>
          number(o.customer_id) === number(c.id) &&
          items.some((i) => number(i.order_id) === number(o.id) && i.product === 'cup'),
      ),
    );
    await expectRows(
      "/table/customers/read?$select=id&$orderby=id&$filter=orders/any(o: o/order_items/any(i: i/product eq 'cup'))",
      cupBuyers,
    );
    // Orders whose customer has another order with a note.
    const expected = orders
      .filter((o) =>
        orders.some(
          (other) =>
            o.customer_id !== null &&
            number(other.customer_id) === number(o.customer_id) &&
            number(other.id) !== number(o.id),
        ),
      )
      .map((o) => ({ id: o.id }))
      .sort((a, b) => (number(a.id) as number) - (number(b.id) as number));
    await expectRows(
      '/table/orders/read?$select=id&$orderby=id&$filter=customer/orders/any(x: x/id ne id)',
      expected,
    );
  });

  test('a lambda in an expansion’s $filter', async () => {
    const customers = await rows('SELECT id FROM customers ORDER BY id');
    await expectRows(
      "/table/customers/read?$select=id&$orderby=id&$expand=orders($select=id;$filter=order_items/any(i: i/product eq 'tea'))",
      await withRelated(customers, async (c) => ({
        orders: await rows(
          "SELECT id FROM orders o WHERE customer_id = ? AND EXISTS (SELECT 1 FROM order_items WHERE order_id = o.id AND product = 'tea') ORDER BY id",
          [c.id],
        ),
      })),
    );
  });
});

describe('$count with relations', () => {
  test.each([
    ['$expand=order_items&$top=1', 'SELECT COUNT(*) AS n FROM orders'],
    [
      "$expand=customer&$filter=customer/country eq 'France'&$top=1",
      "SELECT COUNT(*) AS n FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.country = 'France'",
    ],
    ['$filter=order_items/any()&$skip=1', 'SELECT COUNT(DISTINCT order_id) AS n FROM order_items'],
    ["$expand=customer($filter=country eq 'Japan')", 'SELECT COUNT(*) AS n FROM orders'],
  ])('X-Total-Count counts the top-level rows: %s', async (query, sql) => {
    const answer = await get(`/table/orders/read?$count=true&${query}`);
    expect(answer.status).toBe(200);
    const [{ n }] = (await rows(sql)) as [{ n: ExactNumber }];
    expect(answer.headers.get('x-total-count')).toBe(n.text);
  });
});

describe('every value type, at every depth, as a plain read of its table', () => {
  const KINDS = `SELECT id, owner_id, d, dt, tm, big, neg, bin, blb, CAST(f AS DOUBLE) AS f, db, b, b1, j,
    e, s, y, da, ts, txt, lat, ti, bo FROM kinds`;
  // FLOAT read as the double it widens to: a FloatValue compares as a float (sql-rows.ts).
  const kinds = async (where = '', params: unknown[] = []) =>
    (await rows(`${KINDS} ${where} ORDER BY id`, params, KIND_JSON)).map(
      (k): SqlRow => ({
        ...k,
        f: k.f instanceof FloatValue ? new FloatValue(k.f.value, true) : k.f,
      }),
    );

  test('the plain read is what SQL says (the reference for the rest)', async () => {
    const expected = await kinds();
    await expectRows('/table/kinds/read?$orderby=id', expected);
    // The values this table is about, spelled out once.
    const body = (await get('/table/kinds/read?$orderby=id')).text;
    for (const fragment of [
      '"d":12345678901234567890.0123456789',
      '"dt":"2024-01-02 03:04:05.000"',
      '"tm":"10:00:00.500"',
      '"big":"18446744073709551615"',
      '"neg":"-9223372036854775808"',
      '"bin":"AP8Q"',
      '"f":1.1',
      '"db":0.30000000000000004',
      '"b":"18446744073709551615"',
      '"b1":1',
      '"j":{"a": 1.10, "big": 12345678901234567890',
      '"tm":"-838:59:59.000"',
      '"big":"9007199254740993"',
      // 2^53 is beyond what a double tells apart from 2^53 + 1.
      '"neg":"9007199254740992"',
      '"ts":"2038-01-19 03:14:07.999999"',
      '"d":-0.0000000001',
    ]) {
      expect({ fragment, found: body.includes(fragment) }).toEqual({ fragment, found: true });
    }
  });

  test('to-one (a join: the driver’s values)', async () => {
    const refs = await rows('SELECT * FROM kind_refs ORDER BY id');
    const all = await kinds();
    const byId = (id: unknown) => all.find((k) => sameAnswer(k.id, id) === null) ?? null;
    const expected = refs.map((r) => ({ ...r, kind: r.kind_id === null ? null : byId(r.kind_id) }));
    await expectRows('/table/kind_refs/read?$orderby=id&$expand=kind', expected);
    // And exactly the plain read's text of the same row.
    const plain = parseExact((await get('/table/kinds/read?$orderby=id')).text) as unknown[];
    const expanded = (await get('/table/kind_refs/read?$orderby=id&$expand=kind')).body as {
      kind_id: unknown;
      kind: unknown;
    }[];
    for (const ref of expanded) {
      if (ref.kind === null) continue;
      const same = plain.find((k) => sameAnswer((k as { id: unknown }).id, ref.kind_id) === null);
      expect(JSON.stringify(ref.kind)).toBe(JSON.stringify(same));
    }
  });

  test('to-many (values as text inside the subquery) and 3 levels deep', async () => {
    const owners = await rows('SELECT * FROM kind_owners ORDER BY id');
    await expectRows(
      '/table/kind_owners/read?$orderby=id&$expand=kinds',
      await withRelated(owners, async (o) => ({
        kinds: await kinds('WHERE owner_id = ?', [o.id]),
      })),
    );
    const all = await kinds();
    await expectRows(
      '/table/kind_owners/read?$orderby=id&$expand=kinds($select=id;$expand=kind_refs($expand=kind))',
      await withRelated(owners, async (o) => ({
        kinds: await Promise.all(
          (await rows('SELECT id FROM kinds WHERE owner_id = ? ORDER BY id', [o.id])).map(
            async (k) => ({
              id: k.id,
              kind_refs: (
                await rows('SELECT * FROM kind_refs WHERE kind_id = ? ORDER BY id', [k.id])
              ).map((r) => ({
                ...r,
                kind: all.find((x) => sameAnswer(x.id, r.kind_id) === null) ?? null,
              })),
            }),
          ),
        ),
      })),
    );
  });

  test.each([1, 2, 3, 4, 5])(
    'kind %i: byte for byte the plain read’s text, through a join, a subquery and 3 levels',
    async (id) => {
      const plain = await get(`/table/kinds/read?$filter=id eq ${id}`);
      const rowText = plain.text.slice(1, -1);
      expect(rowText.startsWith(`{"id":${id},`)).toBe(true);
      const owner = (await row('SELECT owner_id FROM kinds WHERE id = ?', [id]))?.owner_id;
      const ownerText = owner === null ? 'null' : (owner as ExactNumber).text;
      // A to-one relation (the driver's values).
      const ref = await get(
        `/table/kind_refs/read?$select=id&$filter=kind_id eq ${id}&$top=1&$expand=kind`,
      );
      expect(ref.text).toMatch(/^\[\{"id":\d+,"kind":/);
      expect(ref.text.replace(/^\[\{"id":\d+,"kind":/, '')).toBe(`${rowText}}]`);
      if (owner === null) return;
      // A to-many relation (MariaDB's JSON text).
      const many = await get(
        `/table/kind_owners/read?$filter=id eq ${ownerText}&$expand=kinds($filter=id eq ${id})`,
      );
      expect(many.text).toBe(`[{"id":${ownerText},"kinds":[${rowText}]}]`);
      // Three levels: a to-one inside a to-many inside a to-one.
      const deep = await get(
        `/table/kind_refs/read?$select=id&$filter=kind_id eq ${id}&$top=1&$expand=kind($select=id;$expand=owner($expand=kinds($filter=id eq ${id})))`,
      );
      expect(deep.text).toMatch(
        new RegExp(
          `^\\[\\{"id":\\d+,"kind":\\{"id":${id},"owner":\\{"id":${ownerText},"kinds":\\[`,
        ),
      );
      expect(deep.text.endsWith(`${rowText}]}}}]`)).toBe(true);
    },
  );

  test('the same text whichever way a value travels', async () => {
    const plain = (await get('/table/kinds/read?$orderby=id')).body as Record<string, unknown>[];
    const viaMany = (
      (await get('/table/kind_owners/read?$orderby=id&$expand=kinds')).body as {
        kinds: Record<string, unknown>[];
      }[]
    ).flatMap((o) => o.kinds);
    const viaDepth = (
      (await get('/table/kind_refs/read?$orderby=id&$expand=kind($expand=owner($expand=kinds))'))
        .body as { kind: { owner: { kinds: Record<string, unknown>[] } | null } | null }[]
    ).flatMap((r) => r.kind?.owner?.kinds ?? []);
    for (const k of [...viaMany, ...viaDepth]) {
      const same = plain.find((p) => sameAnswer(p.id, k.id) === null);
      expect(JSON.stringify(k)).toBe(JSON.stringify(same));
    }
    expect(viaMany.length).toBeGreaterThan(2);
    expect(viaDepth.length).toBeGreaterThan(2);
  });
});

describe('one statement per read', () => {
  test.each([
    ['$expand=customer,order_items', 1],
    [
      '$expand=customer($expand=billing_address,shipping_address,orders($expand=order_items)),order_items($expand=products,shipments)',
      1,
    ],
    [
      "$filter=customer/country eq 'France' and order_items/any(i: i/qty gt 1)&$orderby=customer/name&$expand=order_items",
      1,
    ],
    ['$skip=1&$top=2&$orderby=id&$expand=customer,order_items/products', 1],
    // $count is a statement of its own.
    ['$count=true&$expand=customer,order_items', 2],
  ])('%s: %i statement(s), whatever the rows', async (query, statements) => {
    const db = gw.gateway.db as unknown as Record<string, (...args: unknown[]) => unknown>;
    const names = ['stream', 'arrays', 'count', 'rows', 'run', 'write'];
    const originals = Object.fromEntries(names.map((name) => [name, db[name]]));
    let sent = 0;
    for (const name of names) {
      const original = originals[name] as (...args: unknown[]) => unknown;
      db[name] = (...args: unknown[]) => {
        sent += 1;
        return original(...args);
      };
    }
    try {
      const answer = await get(`/table/orders/read?${query}`);
      expect(answer.status).toBe(200);
      expect((answer.body as unknown[]).length).toBeGreaterThan(0);
    } finally {
      for (const name of names) db[name] = originals[name] as (...args: unknown[]) => unknown;
    }
    expect(sent).toBe(statements);
  });
});

describe('errors: exact status, code and message', () => {
  const relation = (table: string, name: string, hint = '') => ({
    success: false,
    message: `Relation '${name}' does not exist on table '${table}'${hint}`,
    code: 'UNKNOWN_RELATION',
  });
  const invalid = (message: string) => ({ success: false, message, code: 'INVALID_QUERY' });
  const limit = (message: string) => ({ success: false, message, code: 'LIMIT_EXCEEDED' });

  test.each<[string, unknown]>([
    ['$expand=nope', relation('orders', 'nope')],
    ['$expand=Customer', relation('orders', 'Customer', ": did you mean 'customer'?")],
    ['$expand=customer_id', relation('orders', 'customer_id')],
    ['$expand=order_items($expand=nope)', relation('order_items', 'nope')],
    ['$expand=order_items/nope', relation('order_items', 'nope')],
    ['$filter=nope/any()', relation('orders', 'nope')],
    ["$filter=nope/name eq 'x'", relation('orders', 'nope')],
    ['$orderby=nope/name', relation('orders', 'nope')],
    [
      '$expand=customer($foo=1)',
      invalid(
        "Unknown option '$foo' in $expand 'customer'; the options are $select, $filter, $orderby, $top, $skip, $expand",
      ),
    ],
    [
      '$expand=customer($count=true)',
      invalid(
        "Unknown option '$count' in $expand 'customer'; the options are $select, $filter, $orderby, $top, $skip, $expand",
      ),
    ],
    [
      '$expand=customer($top=1)',
      invalid(
        "$top does not apply to 'customer': it is a to-one relation (one related row at most)",
      ),
    ],
    [
      '$expand=customer($skip=1)',
      invalid(
        "$skip does not apply to 'customer': it is a to-one relation (one related row at most)",
      ),
    ],
    [
      '$expand=customer($orderby=name)',
      invalid(
        "$orderby does not apply to 'customer': it is a to-one relation (one related row at most)",
      ),
    ],
    [
      '$expand=customer/orders/customer/orders',
      limit("$expand 'customer/orders/customer/orders' goes 4 levels deep; the limit is 3"),
    ],
    [
      '$expand=customer($expand=orders($expand=customer($expand=orders)))',
      limit("$expand 'orders' goes 4 levels deep; the limit is 3"),
    ],
    [
      '$expand=customer($expand=orders/order_items/products)',
      limit("$expand 'orders/order_items/products' goes 4 levels deep; the limit is 3"),
    ],
    [
      '$expand=customer($expand=billing_address,shipping_address,orders($expand=order_items)),order_items($expand=order,products,shipments),customer/billing_address',
      limit('$expand follows 11 relations; the limit is 10 per request'),
    ],
    [
      '$expand=customer,order_items,customer',
      invalid("$expand names relation 'customer' more than once; give its options in one item"),
    ],
    [
      '$expand=customer($select=name),customer/billing_address',
      invalid("$expand names relation 'customer' more than once; give its options in one item"),
    ],
    [
      '$expand=order_items($top=1;$top=2)',
      invalid("Option '$top' is given more than once in $expand 'order_items'"),
    ],
    [
      '$expand=order_items($top=-1)',
      invalid("$top of $expand 'order_items' must be a non-negative integer, got '-1'"),
    ],
    [
      '$expand=order_items($select=nope)',
      {
        success: false,
        message: "Column 'nope' does not exist in table 'order_items'",
        code: 'UNKNOWN_COLUMN',
      },
    ],
    [
      "$filter=customer/nope eq 'x'",
      {
        success: false,
        message: "Column 'nope' does not exist in table 'customers': did you mean 'name'?",
        code: 'UNKNOWN_COLUMN',
      },
    ],
    [
      '$filter=order_items/qty eq 1',
      invalid(
        "Relation 'order_items' of table 'orders' leads to many rows: filter them with order_items/any(x: …) or order_items/all(x: …), read them with $expand=order_items",
      ),
    ],
    [
      '$filter=customer/any()',
      invalid(
        "any() takes a to-many relation, and 'customer' of table 'orders' is a to-one relation: compare its columns directly (customer/<column>)",
      ),
    ],
    ['$expand=', invalid('$expand is empty; name the relations to expand, e.g. $expand=customer')],
    [
      `$expand=order_items($filter=${'qty eq 1 or '.repeat(400)}qty eq 2)`,
      limit('$filter is 4808 bytes long; the limit is 4096 bytes (UTF-8)'),
    ],
  ])('%s', async (query, body) => {
    const answer = await get(`/table/orders/read?${query}`);
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 400,
      body: JSON.parse(JSON.stringify(body)),
    });
  });
});

describe('hostile input in expansions', () => {
  async function fingerprint() {
    const tables = ['addresses', 'customers', 'orders', 'order_items', 'products', 'shipments'];
    const [sums] = await db.admin.query(`CHECKSUM TABLE ${tables.join(', ')}`);
    const [list] = await db.admin.query('SHOW TABLES');
    return { sums, list };
  }

  test('injection attempts in names and options are 4xx JSON answers; the tables are intact', async () => {
    const before = await fingerprint();
    const attacks = [
      'customer;DROP TABLE orders',
      'customer`;DROP TABLE orders;--',
      '`customer`',
      '"customer`; DROP TABLE orders; --"',
      'customer($select=name` FROM customers; DROP TABLE orders; --)',
      'customer($select=`name`)',
      'customer($select=name) UNION SELECT * FROM customers',
      "customer($filter=name eq 'x' or 1=1)",
      'customer($filter=1 eq 1) or 1=1 --',
      'order_items($top=1;DROP TABLE orders)',
      'order_items($top=1 OR 1=1)',
      'order_items($top=1e3)',
      'order_items($top=99999999999999999999)',
      'order_items($skip=0x10)',
      'order_items($orderby=qty;DELETE FROM orders)',
      'order_items($orderby=qty desc, (SELECT 1))',
      'order_items($orderby=SLEEP(5))',
      'order_items($select=*,qty)',
      'order_items($select=qty,(SELECT password FROM mysql.user))',
      'order_items($expand=order($expand=customer($filter=id eq 1)) ; DROP TABLE orders)',
      'customer/../orders',
      'customer/',
      '/customer',
      'customer//billing_address',
      'customer(',
      'customer)',
      'customer((',
      `${'('.repeat(500)}customer${')'.repeat(500)}`,
      `order_items(${'$expand=order('.repeat(50)}`,
      Array.from({ length: 1000 }, () => 'customer').join(','),
      'customer\u0000',
      'cüstomer',
      'customer($select=name\u0000)',
      "order_items($filter=product eq 'tea\\' or 1=1 -- ')",
      'order_items($filter=qty eq @user.id)',
    ];
    for (const attack of attacks) {
      const response = await fetch(
        `${gw.url}/table/orders/read?$expand=${encodeURIComponent(attack)}`,
      );
      const text = await response.text();
      const body = JSON.parse(text) as { success?: unknown; code?: unknown; message?: unknown };
      expect({ attack, status: response.status }).toEqual({
        attack,
        status: expect.any(Number),
      });
      expect({ attack, ok: response.status >= 400 && response.status < 500 }).toEqual({
        attack,
        ok: true,
      });
      expect({ attack, body }).toEqual({
        attack,
        body: { success: false, message: expect.any(String), code: expect.any(String) },
      });
      expect({ attack, leaked: /SQL syntax|ER_PARSE|mysqld|at line \d/.test(text) }).toEqual({
        attack,
        leaked: false,
      });
    }
    // The filter's quoted string holds the attack as a value: nothing matches, nothing breaks.
    const quoted = await get(
      "/table/orders/read?$select=id&$top=1&$expand=customer($filter=name eq 'x'');DROP TABLE customers;--')",
    );
    expect(quoted.status).toBe(200);
    expect(await fingerprint()).toEqual(before);
  });
});
