/**
 * An attack battery on the OData front door (docs/odata.md, "Security"), in auth mode with a
 * policy: two users of one role (each sees only their own rows, a column hidden), anonymous, and
 * a second role with other columns. Hidden columns and other users' rows are probed through every
 * query option, key, navigation, `$metadata`, paging token, write and `$batch` form; names that
 * need the `_xHHHH_` rule; type confusion and collation tricks in keys and filters; malformed,
 * long and costly requests; Basic credentials. Every refusal is an exact OData error and the
 * database is checked to be unchanged after each refused write.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { USERS_TABLE } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  postCredentials,
  signUpAs,
  startTestGateway,
  type TestGateway,
} from '../helpers/gateway.js';

const SHOP = `
CREATE TABLE customers (id INT PRIMARY KEY,
  owner_email VARCHAR(254) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL,
  name VARCHAR(40) NOT NULL, secret VARCHAR(40) NULL);
CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, owner_id BIGINT UNSIGNED NOT NULL,
  customer_id INT NULL, status ENUM('open','paid','cancelled') NOT NULL DEFAULT 'open',
  note VARCHAR(100) NULL, margin DECIMAL(10,2) NULL,
  FOREIGN KEY (customer_id) REFERENCES customers (id));
CREATE TABLE order_items (id INT AUTO_INCREMENT PRIMARY KEY, order_id INT NOT NULL,
  sku VARCHAR(10) NOT NULL, cost INT NULL, FOREIGN KEY (order_id) REFERENCES orders (id));
CREATE TABLE order_lines (order_id INT NOT NULL, line INT NOT NULL, owner_id BIGINT UNSIGNED NOT NULL,
  qty INT NOT NULL, PRIMARY KEY (order_id, line));
CREATE TABLE vault (id INT PRIMARY KEY, v VARCHAR(20) NULL);
CREATE TABLE names (id INT PRIMARY KEY, \`a b\` INT NULL, \`a_x0020_b\` INT NULL, \`2fa\` INT NULL,
  aAb INT NULL, \`a_x0041_b\` INT NULL);
INSERT INTO vault VALUES (1, 'gold');
INSERT INTO names VALUES (1, 10, 20, 30, 40, 50);
`;

const POLICY = {
  roles: {
    anonymous: { tables: { customers: { read: { columns: ['id', 'name'] } } } },
    user: {
      tables: {
        customers: {
          read: { where: 'owner_email eq @user.email', columns: ['id', 'owner_email', 'name'] },
        },
        orders: {
          read: {
            where: 'owner_id eq @user.id',
            columns: ['id', 'owner_id', 'customer_id', 'status', 'note'],
          },
          create: {
            where: 'owner_id eq @user.id',
            columns: ['owner_id', 'customer_id', 'status', 'note'],
          },
          update: {
            where: "owner_id eq @user.id and status eq 'open'",
            columns: ['note', 'status', 'owner_id'],
          },
          delete: { where: 'owner_id eq @user.id' },
        },
        order_items: {
          read: { columns: ['id', 'order_id', 'sku'] },
          create: { columns: ['order_id', 'sku'] },
        },
        order_lines: {
          read: { where: 'owner_id eq @user.id' },
          update: { where: 'owner_id eq @user.id', columns: ['qty'] },
          delete: { where: 'owner_id eq @user.id' },
        },
        names: {
          read: { columns: ['id', 'a b', '2fa', 'aAb', 'a_x0041_b'] },
          update: { columns: ['a b', '2fa', 'aAb', 'a_x0041_b'] },
        },
      },
    },
    clerk: {
      tables: {
        customers: { read: true },
        orders: { read: { columns: ['id', 'status'] } },
      },
    },
  },
};

const SECRET = 'odata-attacks-secret-0123456789abcdefghijklmnop';
const PASSWORD = 'correct horse battery';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

let db: TestDatabase;
let gw: TestGateway;
let dir: string;
const users: Record<string, { token: string; id: string }> = {};

async function call(
  method: string,
  url: string,
  options: {
    as?: string;
    json?: unknown;
    raw?: string;
    type?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.as) headers.authorization = `Bearer ${users[options.as]?.token}`;
  let body: string | undefined;
  if (options.json !== undefined || options.raw !== undefined) {
    headers['content-type'] = options.type ?? 'application/json';
    body = options.raw ?? JSON.stringify(options.json);
  }
  const response = await fetch(`${gw.url}${url}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-odata-attacks-'));
  const file = path.join(dir, 'policy.json');
  await writeFile(file, JSON.stringify(POLICY));
  db = await createTestDatabase(SHOP);
  gw = await startTestGateway(db.name, { mode: 'auth', jwtSecret: SECRET, policyFile: file });
  const sign = (email: string, role: string) =>
    signUpAs(gw.url, db.admin, { email, password: PASSWORD }, role);
  users.alice = await sign('alice@shop.test', 'user');
  users.bob = await sign('bob@shop.test', 'user');
  users.clerk = await sign('clerk@shop.test', 'clerk');
  users.dora = await sign('dora@shop.test', 'user');
  const a = users.alice.id;
  const b = users.bob.id;
  await db.admin.query(`
    INSERT INTO customers VALUES (1, 'alice@shop.test', 'Alice Co', 'a-secret'),
      (2, 'bob@shop.test', 'Bob Co', 'b-secret'), (3, 'ALICE@shop.test', 'Upper', 'u-secret'),
      (4, 'alicé@shop.test', 'Accent', 'e-secret');
    INSERT INTO orders VALUES (1, ${a}, 1, 'open', 'alice open', 1.00), (2, ${a}, 1, 'paid', 'alice paid', 2.00),
      (3, ${b}, 2, 'open', 'bob open', 3.00), (4, ${b}, 2, 'paid', 'bob paid', 4.00);
    INSERT INTO order_items VALUES (1, 1, 'A1', 10), (2, 3, 'B1', 30);
    INSERT INTO order_lines VALUES (1, 1, ${a}, 5), (1, 2, ${a}, 6), (2, 1, ${a}, 7), (3, 1, ${b}, 8);
  `);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

const err = (status: number, code: string, message: string) => ({
  status,
  body: { error: { code, message } },
});
const seen = (a: Answer) => ({ status: a.status, body: a.body });
const get = (url: string, as?: string, headers?: Record<string, string>) =>
  call('GET', url, { as, headers });
/** A row's tag: the SHA-1 of its REST JSON for the role, as REST's key read tags it (src/etag.ts). */
const rowTag = (json: string) => `"${createHash('sha1').update(json).digest('base64url')}"`;
const ctx = (fragment: string) => `${gw.url}/odata/$metadata#${fragment}`;
const unknown = (column: string, table: string) =>
  err(400, 'UNKNOWN_COLUMN', `Column '${column}' does not exist in table '${table}'`);

async function table(name: string): Promise<unknown[]> {
  const [rows] = await db.admin.query(`SELECT * FROM ${name} ORDER BY 1, 2`);
  return rows as unknown[];
}

/** What the database holds, to show a refused write changed nothing. */
const everything = async () =>
  JSON.stringify([
    await table('orders'),
    await table('order_items'),
    await table('order_lines'),
    await table('names'),
  ]);

let alice: number;
let bob: number;
beforeAll(() => {
  alice = Number(users.alice?.id);
  bob = Number(users.bob?.id);
});

const ALICE_ORDERS = () => [
  { id: 1, owner_id: alice, customer_id: 1, status: 'open', note: 'alice open' },
  { id: 2, owner_id: alice, customer_id: 1, status: 'paid', note: 'alice paid' },
];

describe('hidden columns are unknown wherever a request names them', () => {
  test.each([
    ['$select=margin', 'margin', 'orders'],
    ['$filter=margin gt 0', 'margin', 'orders'],
    ['$orderby=margin desc', 'margin', 'orders'],
    ['$filter=year(margin) eq 2024', 'margin', 'orders'],
    ['$filter=margin in (1, 2)', 'margin', 'orders'],
    ['$expand=order_items($select=cost)', 'cost', 'order_items'],
    ['$expand=order_items($filter=cost gt 1)', 'cost', 'order_items'],
    ['$expand=order_items($orderby=cost)', 'cost', 'order_items'],
    ['$expand=customer($select=secret)', 'secret', 'customers'],
    ["$filter=customer/secret eq 'a-secret'", 'secret', 'customers'],
    ['$orderby=customer/secret', 'secret', 'customers'],
    ['$filter=order_items/any(i: i/cost gt 1)', 'cost', 'order_items'],
    ['$filter=order_items/all(i: i/cost gt 1)', 'cost', 'order_items'],
    ['$apply=groupby((margin))', 'margin', 'orders'],
    ['$apply=aggregate(margin with sum as s)', 'margin', 'orders'],
    ['$apply=filter(margin gt 1)/aggregate($count as n)', 'margin', 'orders'],
    ['$apply=groupby((customer/secret))', 'secret', 'customers'],
    ['$apply=compute(year(margin) as y)', 'margin', 'orders'],
  ])('orders?%s is 400 as a column that does not exist', async (query, column, table) => {
    const hidden = await get(`/odata/orders?${encodeURI(query)}`, 'alice');
    expect(seen(hidden)).toEqual(unknown(column, table));
    // Byte for byte what a column that does not exist gets, in the same place.
    const missing = await get(
      `/odata/orders?${encodeURI(query.replaceAll(column, 'nothere'))}`,
      'alice',
    );
    expect(hidden.text).toBe(missing.text.replaceAll('nothere', column));
  });

  test('$count, a navigation and a property segment refuse them too', async () => {
    expect(seen(await get('/odata/orders/$count?$filter=margin%20gt%202', 'alice'))).toEqual(
      unknown('margin', 'orders'),
    );
    expect(seen(await get('/odata/orders(1)/customer?$select=secret', 'alice'))).toEqual(
      unknown('secret', 'customers'),
    );
    expect(seen(await get('/odata/orders(1)/order_items?$filter=cost%20gt%200', 'alice'))).toEqual(
      unknown('cost', 'order_items'),
    );
    for (const path of [
      'orders(1)/margin',
      'orders(1)/margin/$value',
      'orders(1)/customer/secret',
    ]) {
      expect(seen(await get(`/odata/${path}`, 'alice'))).toEqual(
        err(404, 'NOT_FOUND', `No route for GET /odata/${path}`),
      );
    }
    expect(seen(await get('/odata/orders(1)/nothere', 'alice'))).toEqual(
      err(404, 'NOT_FOUND', 'No route for GET /odata/orders(1)/nothere'),
    );
  });

  test('a key predicate naming a hidden column is told as one naming any other non-key', async () => {
    for (const key of ['secret=1', 'owner_email=1', 'nothere=1']) {
      expect(seen(await get(`/odata/customers(${key})`, 'alice'))).toEqual(
        err(400, 'INVALID_QUERY', "The key of 'customers' is (<id>); 'id' is missing"),
      );
    }
  });

  test('the second role hides other columns, and orders by what it sees only', async () => {
    expect(seen(await get('/odata/orders?$orderby=note', 'clerk'))).toEqual(
      unknown('note', 'orders'),
    );
    expect(
      seen(
        await get(
          '/odata/orders?$apply=aggregate(owner_id%20with%20countdistinct%20as%20n)',
          'clerk',
        ),
      ),
    ).toEqual(unknown('owner_id', 'orders'));
    const ordered = await get('/odata/orders?$orderby=status%20desc,id', 'clerk');
    expect(ordered.body).toEqual({
      '@odata.context': ctx('orders'),
      value: [
        { id: 2, status: 'paid' },
        { id: 4, status: 'paid' },
        { id: 1, status: 'open' },
        { id: 3, status: 'open' },
      ],
    });
  });

  test('$search is refused by name, not served over hidden columns', async () => {
    expect(seen(await get('/odata/orders?$search=secret', 'alice'))).toEqual(
      err(400, 'ODATA_UNSUPPORTED', 'The query option $search is not served (docs/odata.md)'),
    );
  });
});

describe("another user's rows never show", () => {
  test('collections, counts, totals and expansions hold only her rows', async () => {
    expect((await get('/odata/orders', 'alice')).body).toEqual({
      '@odata.context': ctx('orders'),
      value: ALICE_ORDERS(),
    });
    // Her own filter is ANDed with the policy's, never ORed.
    expect(
      (
        await get(
          `/odata/orders?$filter=${encodeURIComponent(`owner_id eq ${bob} or 1 eq 1`)}`,
          'alice',
        )
      ).body,
    ).toEqual({
      '@odata.context': ctx('orders'),
      value: ALICE_ORDERS(),
    });
    const counted = await get('/odata/orders/$count', 'alice');
    expect([counted.status, counted.text]).toEqual([200, '2']);
    expect((await get('/odata/orders?$count=true&$top=0', 'alice')).body).toEqual({
      '@odata.context': ctx('orders'),
      '@odata.count': 2,
      value: [],
    });
    expect(
      (await get('/odata/orders?$apply=groupby((owner_id),aggregate($count%20as%20n))', 'alice'))
        .body,
    ).toEqual({
      '@odata.context': ctx('orders'),
      value: [{ owner_id: alice, n: 2 }],
    });
    // order_items has no row condition; the order of bob's item is hidden (null).
    expect((await get('/odata/order_items?$expand=order($select=id)', 'alice')).body).toEqual({
      '@odata.context': ctx('order_items'),
      value: [
        { id: 1, order_id: 1, sku: 'A1', order: { id: 1 } },
        { id: 2, order_id: 3, sku: 'B1', order: null },
      ],
    });
    expect(
      (
        await get(
          `/odata/order_items?$filter=${encodeURIComponent('order/owner_id ne 0')}`,
          'alice',
        )
      ).body,
    ).toEqual({
      '@odata.context': ctx('order_items'),
      value: [{ id: 1, order_id: 1, sku: 'A1' }],
    });
  });

  test("bob's order is 404 as an order that does not exist, by key, navigation and property", async () => {
    for (const path of [
      'orders(3)',
      'orders(3)/customer',
      'orders(3)/order_items',
      'orders(3)/note',
    ]) {
      const theirs = await get(`/odata/${path}`, 'alice');
      const none = await get(`/odata/${path.replace('3', '999')}`, 'alice');
      expect(seen(theirs)).toEqual(err(404, 'ROW_NOT_FOUND', "No row of 'orders' has that key"));
      expect(theirs.text).toBe(none.text);
    }
    // Bob's item is readable, its order is not: no entity (as for an item with no order).
    const nav = await get('/odata/order_items(2)/order', 'alice');
    expect([nav.status, nav.text]).toEqual([204, '']);
  });

  test('@user values match exactly: case and accent variants of her email are not hers', async () => {
    const mine = {
      '@odata.context': ctx('customers'),
      value: [{ id: 1, owner_email: 'alice@shop.test', name: 'Alice Co' }],
    };
    expect((await get('/odata/customers', 'alice')).body).toEqual(mine);
    for (const email of ['ALICE@shop.test', 'ALICE@SHOP.TEST', 'alicé@shop.test']) {
      const filter = encodeURIComponent(`owner_email eq '${email}'`);
      // The column is _ci: her filter matches her row, never the variants' rows.
      expect((await get(`/odata/customers?$filter=${filter}`, 'alice')).body).toEqual(mine);
    }
    expect(
      (
        await get(
          `/odata/customers?$filter=${encodeURIComponent("tolower(owner_email) eq 'alice@shop.test'")}`,
          'alice',
        )
      ).body,
    ).toEqual(mine);
    for (const id of [3, 4]) {
      expect(seen(await get(`/odata/customers(${id})`, 'alice'))).toEqual(
        err(404, 'ROW_NOT_FOUND', "No row of 'customers' has that key"),
      );
    }
  });

  test('anonymous sees the public columns only, and no table it is not granted', async () => {
    expect((await get('/odata/customers')).body).toEqual({
      '@odata.context': ctx('customers'),
      value: [
        { id: 1, name: 'Alice Co' },
        { id: 2, name: 'Bob Co' },
        { id: 3, name: 'Upper' },
        { id: 4, name: 'Accent' },
      ],
    });
    expect(seen(await get('/odata/customers?$select=owner_email'))).toEqual(
      unknown('owner_email', 'customers'),
    );
    for (const path of ['orders', 'orders(1)', 'vault', 'nowhere']) {
      const table = path.replace(/\(.*/, '');
      expect(seen(await get(`/odata/${path}`))).toEqual(
        err(404, 'UNKNOWN_TABLE', `Table '${table}' does not exist`),
      );
    }
    expect(seen(await call('DELETE', '/odata/customers(1)'))).toEqual(
      err(403, 'FORBIDDEN', 'Forbidden'),
    );
  });

  test('a table the role may not read is 404 as one that does not exist, for every method', async () => {
    for (const [method, path, json] of [
      ['GET', 'vault', undefined],
      ['GET', 'vault(1)', undefined],
      ['POST', 'vault', { v: 'x' }],
      ['PATCH', 'vault(1)', { v: 'x' }],
      ['DELETE', 'vault(1)', undefined],
    ] as const) {
      const hidden = await call(method, `/odata/${path}`, { as: 'alice', json });
      const missing = await call(method, `/odata/${path.replace('vault', 'nowhere')}`, {
        as: 'alice',
        json,
      });
      expect(seen(hidden)).toEqual(err(404, 'UNKNOWN_TABLE', "Table 'vault' does not exist"));
      expect(hidden.text).toBe(missing.text.replace('nowhere', 'vault'));
    }
  });
});

describe('$metadata and the service document per role', () => {
  test('each role is shown its own sets and properties, nothing hidden', async () => {
    const names = async (as?: string) =>
      ((await get('/odata/', as)).body as { value: { name: string }[] }).value.map((e) => e.name);
    expect(await names('alice')).toEqual([
      'names',
      'order_lines',
      'customers',
      'orders',
      'order_items',
    ]);
    expect(await names('clerk')).toEqual(['customers', 'orders']);
    expect(await names()).toEqual(['customers']);
    const schema = async (as?: string) =>
      (
        (await get('/odata/$metadata?$format=json', as)).body as {
          tablegate: Record<string, Record<string, unknown>>;
        }
      ).tablegate;
    const props = (type: Record<string, unknown> | undefined) =>
      Object.keys(type ?? {}).filter((k) => !k.startsWith('$'));
    const mine = await schema('alice');
    expect(props(mine.orders)).toEqual([
      'id',
      'owner_id',
      'customer_id',
      'status',
      'note',
      'customer',
      'order_items',
    ]);
    expect(props(mine.order_items)).toEqual(['id', 'order_id', 'sku', 'order']);
    expect(props(mine.customers)).toEqual(['id', 'owner_email', 'name', 'orders']);
    expect(props(mine.names)).toEqual(['id', 'a_x0020_b', '_x0032_fa', 'aAb', 'a_x005F_x0041_b']);
    expect(mine.vault).toBeUndefined();
    const clerks = await schema('clerk');
    expect(props(clerks.orders)).toEqual(['id', 'status']);
    // The clerk cannot read order_items: no navigation property to it, nor its set.
    expect(props(clerks.customers)).toEqual(['id', 'owner_email', 'name', 'secret']);
    expect(Object.keys(clerks).sort()).toEqual(['Container', 'customers', 'orders']);
    const anonymous = await schema();
    expect(Object.keys(anonymous).sort()).toEqual(['Container', 'customers']);
    expect(props(anonymous.customers)).toEqual(['id', 'name']);
    // The XML form says the same: no hidden name anywhere in it.
    const xml = await get('/odata/$metadata', 'alice');
    for (const hidden of ['margin', 'cost', 'secret', 'vault', 'a_x005F_x0020_b']) {
      expect(xml.text).not.toContain(hidden);
    }
    expect((await get('/odata/$metadata')).text).not.toMatch(/owner_email|orders|secret/);
  });

  test('the cached model of one role is never served to another', async () => {
    // Alternate roles on one schema version: each answer is still its own role's.
    for (let i = 0; i < 2; i++) {
      expect((await get('/odata/$metadata', 'clerk')).text).toContain('Name="secret"');
      expect((await get('/odata/$metadata', 'alice')).text).not.toContain('Name="secret"');
    }
  });
});

describe('paging tokens', () => {
  const page = { prefer: 'odata.maxpagesize=1' };

  test('a next link continues her own rows; another user following it sees only his', async () => {
    const first = (await get('/odata/orders?$select=id', 'alice', page)).body as Record<
      string,
      unknown
    >;
    expect(first.value).toEqual([{ id: 1 }]);
    const next = first['@odata.nextLink'] as string;
    expect(next).toMatch(/\$skiptoken=/);
    const path = next.slice(gw.url.length);
    expect(((await get(path, 'alice', page)).body as Record<string, unknown>).value).toEqual([
      { id: 2 },
    ]);
    // Bob with alice's link: a position in the order, not a grant: his rows after it.
    expect(((await get(path, 'bob', page)).body as Record<string, unknown>).value).toEqual([
      { id: 3 },
    ]);
    // The clerk reads the same columns: the token opens, and shows the clerk's own view.
    expect(((await get(path, 'clerk', page)).body as Record<string, unknown>).value).toEqual([
      { id: 2 },
    ]);
  });

  test('a forged, edited or rebound token is 400 BAD_SKIPTOKEN', async () => {
    const first = (await get('/odata/orders?$select=id', 'alice', page)).body as Record<
      string,
      unknown
    >;
    const next = (first['@odata.nextLink'] as string).slice(gw.url.length);
    const token = new URL(next, gw.url).searchParams.get('$skiptoken') as string;
    const bad = err(
      400,
      'BAD_SKIPTOKEN',
      "The $skiptoken is not one this read's page before gave: send the Link of the page before unchanged, with the same table, $filter, $orderby, $select and $expand",
    );
    const edited = `${token.slice(0, 20)}${token[20] === 'A' ? 'B' : 'A'}${token.slice(21)}`;
    for (const url of [
      `/odata/orders?$select=id&$skiptoken=${edited}`,
      '/odata/orders?$select=id&$skiptoken=AAAA',
      `/odata/orders?$select=id,note&$skiptoken=${token}`,
      `/odata/orders?$select=id&$filter=id%20gt%200&$skiptoken=${token}`,
      `/odata/orders?$select=id&$orderby=note&$skiptoken=${token}`,
      `/odata/customers?$select=id&$skiptoken=${token}`,
    ]) {
      expect(seen(await get(url, 'alice'))).toEqual(bad);
    }
    expect(
      seen(await get(`/odata/orders?$select=id&$skip=1&$skiptoken=${token}`, 'alice')).status,
    ).toBe(400);
  });
});

describe('writes stay inside her view', () => {
  test("PATCH, PUT and DELETE of bob's row are 404 as of a row that does not exist; REST says 0 rows", async () => {
    const before = await everything();
    for (const [method, json] of [
      ['PATCH', { note: 'x' }],
      ['PUT', { note: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const theirs = await call(method, '/odata/orders(3)', { as: 'alice', json });
      const none = await call(method, '/odata/orders(999)', { as: 'alice', json });
      expect(seen(theirs)).toEqual(err(404, 'ROW_NOT_FOUND', "No row of 'orders' has that key"));
      expect(theirs.text).toBe(none.text);
    }
    // A paid order of her own is outside her update where: the same 404.
    expect(
      seen(await call('PATCH', '/odata/orders(2)', { as: 'alice', json: { note: 'x' } })),
    ).toEqual(err(404, 'ROW_NOT_FOUND', "No row of 'orders' has that key"));
    // REST's answers to the same writes tell nothing either.
    expect(
      (await call('PUT', '/table/orders/update(id,3)', { as: 'alice', json: { note: 'x' } })).body,
    ).toEqual({
      success: true,
      message: 'Data updated successfully',
      affectedRows: 0,
    });
    expect(seen(await get('/table/orders/read(id,3)', 'alice'))).toEqual({
      status: 404,
      body: { success: false, message: "No row of 'orders' has that key", code: 'ROW_NOT_FOUND' },
    });
    expect(await everything()).toBe(before);
  });

  test('an update that would move the row out of her view, or write what she may not, changes nothing', async () => {
    const before = await everything();
    const cases: [string, unknown, ReturnType<typeof err>][] = [
      [
        'PATCH',
        { owner_id: bob },
        err(
          403,
          'POLICY_VIOLATION',
          "The updated row would not satisfy this role's policy for update on 'orders': column 'owner_id'",
        ),
      ],
      [
        'PUT',
        { owner_id: bob },
        err(
          403,
          'POLICY_VIOLATION',
          "The updated row would not satisfy this role's policy for update on 'orders': column 'owner_id'",
        ),
      ],
      [
        'PATCH',
        { status: 'paid' },
        err(
          403,
          'POLICY_VIOLATION',
          "The updated row would not satisfy this role's policy for update on 'orders': column 'status'",
        ),
      ],
      [
        'PATCH',
        { status: '3' },
        err(
          400,
          'INVALID_VALUE',
          "Column 'status' must be one of 'open', 'paid', 'cancelled'; MySQL would read '3' as the position of a member",
        ),
      ],
      ['PATCH', { margin: 9 }, unknown('margin', 'orders')],
      [
        'PATCH',
        { customer_id: 2 },
        err(
          403,
          'FORBIDDEN',
          "Forbidden: this role's policy for update on 'orders' does not let it write column 'customer_id'",
        ),
      ],
      [
        'PATCH',
        { note: 'x', id: 3 },
        err(
          403,
          'FORBIDDEN',
          "Forbidden: this role's policy for update on 'orders' does not let it write column 'id'",
        ),
      ],
    ];
    for (const [method, json, expected] of cases) {
      expect(seen(await call(method, '/odata/orders(1)', { as: 'alice', json }))).toEqual(expected);
    }
    expect(await everything()).toBe(before);
  });

  test('a create or deep insert outside her where, or naming a hidden column, writes nothing', async () => {
    const before = await everything();
    const outside = err(
      403,
      'POLICY_VIOLATION',
      "The new row would not satisfy this role's policy for create on 'orders': column 'owner_id'",
    );
    const cases: [unknown, ReturnType<typeof err>][] = [
      [{ owner_id: bob, note: 'x' }, outside],
      [{ note: 'no owner' }, outside],
      [{ owner_id: bob, order_items: [{ sku: 'Z' }] }, outside],
      [{ owner_id: alice, margin: 1 }, unknown('margin', 'orders')],
      [{ owner_id: alice, order_items: [{ sku: 'Z', cost: 5 }] }, unknown('cost', 'order_items')],
      [
        { owner_id: alice, order_items: [{ sku: 'Z', order_id: 3 }] },
        err(
          400,
          'DEEP_INSERT_KEY_MISMATCH',
          "A row of 'order_items' gives 'order_id' a value other than its parent's key: leave it out, the parent's key fills it",
        ),
      ],
      [
        { owner_id: alice, 'customer@odata.bind': 'customers(2)' },
        err(
          400,
          'ODATA_UNSUPPORTED',
          "The annotation 'customer@odata.bind' is not served: write the foreign key's properties instead (docs/odata.md)",
        ),
      ],
    ];
    for (const [json, expected] of cases) {
      const answer = await call('POST', '/odata/orders', { as: 'alice', json });
      expect(seen(answer)).toEqual(expected);
    }
    expect(await everything()).toBe(before);
  });

  test("If-Match guards her writes, and tells another user's row from none by nothing", async () => {
    const before = await everything();
    const failed = err(
      412,
      'PRECONDITION_FAILED',
      "The row of 'orders' no longer has the ETag given in If-Match (it changed, or is gone): nothing was changed; read it again with read(<key>,<value>)",
    );
    for (const [method, json] of [
      ['PATCH', { note: 'x' }],
      ['PUT', { note: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const stale = await call(method, '/odata/orders(1)', {
        as: 'alice',
        json,
        headers: { 'if-match': '"stale"' },
      });
      expect(seen(stale)).toEqual(failed);
      for (const tag of ['"stale"', '*']) {
        const theirs = await call(method, '/odata/orders(3)', {
          as: 'alice',
          json,
          headers: { 'if-match': tag },
        });
        const none = await call(method, '/odata/orders(999)', {
          as: 'alice',
          json,
          headers: { 'if-match': tag },
        });
        expect(seen(theirs)).toEqual(failed);
        expect(theirs.text).toBe(none.text);
      }
    }
    expect(await everything()).toBe(before);
    // The row's tag (its key read's, docs/caching.md) lets the write go on.
    const tag = (await get('/table/orders/read(id,1)', 'alice')).headers.get('etag') as string;
    const fresh = await call('PATCH', '/odata/orders(1)', {
      as: 'alice',
      json: { note: 'alice open' },
      headers: { 'if-match': tag },
    });
    expect([fresh.status, fresh.text]).toEqual([204, '']);
    expect(await everything()).toBe(before);
  });

  test("If-Match on a composite key: her row's tag passes, another user's row is a missing one", async () => {
    const before = await everything();
    const failed = err(
      412,
      'PRECONDITION_FAILED',
      "The row of 'order_lines' no longer has the ETag given in If-Match (it changed, or is gone): nothing was changed; read it again with read(<key>,<value>)",
    );
    // Bob's own tag of his row, and what he sees of it.
    const bobs = await get('/odata/order_lines(order_id=3,line=1)', 'bob');
    const bobsTag = bobs.headers.get('etag') as string;
    expect(bobsTag).toBe(rowTag(`{"order_id":3,"line":1,"owner_id":${bob},"qty":8}`));
    for (const [method, json] of [
      ['PATCH', { qty: 1 }],
      ['PUT', { qty: 1 }],
      ['DELETE', undefined],
    ] as const) {
      for (const tag of [bobsTag, '*', '"stale"']) {
        const theirs = await call(method, '/odata/order_lines(order_id=3,line=1)', {
          as: 'alice',
          json,
          headers: { 'if-match': tag },
        });
        const none = await call(method, '/odata/order_lines(order_id=9,line=1)', {
          as: 'alice',
          json,
          headers: { 'if-match': tag },
        });
        expect(seen(theirs)).toEqual(failed);
        expect(theirs.text).toBe(none.text);
      }
      const stale = await call(method, '/odata/order_lines(order_id=1,line=1)', {
        as: 'alice',
        json,
        headers: { 'if-match': bobsTag },
      });
      expect(seen(stale)).toEqual(failed);
    }
    expect(await everything()).toBe(before);
    const tag = (await get('/odata/order_lines(order_id=1,line=1)', 'alice')).headers.get('etag');
    expect(tag).toBe(rowTag(`{"order_id":1,"line":1,"owner_id":${alice},"qty":5}`));
    const fresh = await call('PATCH', '/odata/order_lines(order_id=1,line=1)', {
      as: 'alice',
      json: { qty: 5 },
      headers: { 'if-match': tag as string },
    });
    expect([fresh.status, fresh.text]).toEqual([204, '']);
    expect(await everything()).toBe(before);
  });

  test('the second role may only read: every write is 403', async () => {
    const before = await everything();
    for (const [method, path, json] of [
      ['POST', 'orders', { status: 'open' }],
      ['PATCH', 'orders(4)', { status: 'open' }],
      ['PUT', 'orders(4)', { status: 'open' }],
      ['DELETE', 'orders(4)', undefined],
    ] as const) {
      expect(seen(await call(method, `/odata/${path}`, { as: 'clerk', json }))).toEqual(
        err(403, 'FORBIDDEN', 'Forbidden'),
      );
    }
    expect(await everything()).toBe(before);
  });
});

describe('keys', () => {
  test("type confusion in a key reads as REST's read(<key>,<value>) does, inside her view", async () => {
    // The entity's tag is the one REST's key read gives the row.
    const tag = (await get('/table/orders/read(id,1)', 'alice')).headers.get('etag');
    const one = {
      '@odata.context': ctx('orders/$entity'),
      '@odata.etag': tag,
      ...ALICE_ORDERS()[0],
    };
    for (const key of ['1', "'1'", '1.0', '1e0', 'true', 'id=1', ' 1 ']) {
      const answer = await get(`/odata/orders(${encodeURIComponent(key)})`, 'alice');
      expect(seen(answer)).toEqual({ status: 200, body: one });
      const rest = await get(
        `/table/orders/read(id,${encodeURIComponent(key.replace('id=', ''))})`,
        'alice',
      );
      expect(rest.status).toBe(200);
    }
    for (const key of ['3', "'3'", '3.0', '3e0', '-0', '99999999999999999999999']) {
      expect(seen(await get(`/odata/orders(${encodeURIComponent(key)})`, 'alice'))).toEqual(
        err(404, 'ROW_NOT_FOUND', "No row of 'orders' has that key"),
      );
    }
    expect(seen(await get('/odata/orders(null)', 'alice'))).toEqual(
      err(
        400,
        'INVALID_QUERY',
        'read(id,null) matches no row by a key (a unique key may hold NULL in many rows): read them with $filter=id eq null',
      ),
    );
    for (const key of ['0x1', '2024-01-01', "'alice@shop.test'", '1 or 1 eq 1']) {
      const text = key.replace(/^'|'$/g, '');
      expect(seen(await get(`/odata/orders(${encodeURIComponent(key)})`, 'alice'))).toEqual(
        err(
          400,
          'INVALID_VALUE',
          `The key value for column 'id' takes a number; '${text}' is not one`,
        ),
      );
    }
  });

  test('malformed keys and paths are 400 or 404 in the OData error form', async () => {
    const cases: [string, ReturnType<typeof err>][] = [
      ['orders(1', err(400, 'ODATA_UNSUPPORTED', "'orders(1' has no closing parenthesis")],
      ["orders(')", err(400, 'ODATA_UNSUPPORTED', "The string in '(')' has no closing quote")],
      [
        'orders(1,2)',
        err(
          400,
          'ODATA_UNSUPPORTED',
          "'(1,2)': a key of several properties names each, (k1=1,k2='x')",
        ),
      ],
      ['orders(id=1,id=1)', err(400, 'INVALID_QUERY', "The key names 'id' more than once")],
      [
        'orders(id=1,owner_id=1)',
        err(400, 'INVALID_QUERY', "The key of 'orders' is (<id>); it names other properties"),
      ],
      ['orders()', err(400, 'INVALID_QUERY', "The key of 'orders' is (<id>); 'id' is missing")],
      ['orders(1)/$count', err(404, 'NOT_FOUND', 'No route for GET /odata/orders(1)/$count')],
      ['orders/$count/x', err(404, 'NOT_FOUND', 'No route for GET /odata/orders/$count/x')],
      ['$metadata/x', err(404, 'NOT_FOUND', 'No route for GET /odata/$metadata/x')],
      ['/orders', err(404, 'NOT_FOUND', 'No route for GET /odata//orders')],
    ];
    for (const [path, expected] of cases) {
      expect(seen(await get(`/odata/${encodeURI(path)}`, 'alice'))).toEqual(expected);
    }
  });

  test('a composite key value is one literal: it cannot widen the rows one entity names', async () => {
    const before = await everything();
    const refused = (text: string, column: string) =>
      err(400, 'INVALID_QUERY', `The key value '${text}' of '${column}' is not one value`);
    expect(
      seen(
        await get(
          `/odata/order_lines(order_id=${encodeURIComponent('1 or 1 eq 1')},line=2)`,
          'alice',
        ),
      ),
    ).toEqual(refused('1 or 1 eq 1', 'order_id'));
    expect(seen(await get('/odata/order_lines(order_id=1,line=line)', 'alice'))).toEqual(
      refused('line', 'line'),
    );
    expect(
      seen(
        await call(
          'PATCH',
          `/odata/order_lines(order_id=${encodeURIComponent('1 or 1 eq 1')},line=1)`,
          { as: 'alice', json: { qty: 99 } },
        ),
      ),
    ).toEqual(refused('1 or 1 eq 1', 'order_id'));
    expect(
      seen(
        await call(
          'DELETE',
          `/odata/order_lines(order_id=1,line=${encodeURIComponent('1 or line gt 0')})`,
          { as: 'alice' },
        ),
      ),
    ).toEqual(refused('1 or line gt 0', 'line'));
    // A one-column key is read as REST's key (INVALID_VALUE), in $batch as alone.
    const alone = seen(
      await call('DELETE', `/odata/orders(id=${encodeURIComponent('1 or owner_id ne 0')})`, {
        as: 'alice',
      }),
    );
    expect(alone).toEqual(
      err(
        400,
        'INVALID_VALUE',
        "The key value for column 'id' takes a number; '1 or owner_id ne 0' is not one",
      ),
    );
    const batch = await call('POST', '/odata/$batch', {
      as: 'alice',
      json: {
        requests: [
          { id: '1', method: 'DELETE', url: 'order_lines(order_id=2 or 1 eq 1,line=1)' },
          { id: '2', method: 'DELETE', url: 'orders(id=1 or owner_id ne 0)' },
        ],
      },
    });
    expect(batch.body).toEqual({
      responses: [
        {
          id: '1',
          status: 400,
          headers: { 'content-type': 'application/json' },
          body: refused('2 or 1 eq 1', 'order_id').body,
        },
        {
          id: '2',
          status: 400,
          headers: { 'content-type': 'application/json' },
          body: alone.body,
        },
      ],
    });
    expect(await everything()).toBe(before);
    // One entity's key still reads and writes that entity.
    expect((await get('/odata/order_lines(order_id=1,line=2)', 'alice')).body).toEqual({
      '@odata.context': ctx('order_lines/$entity'),
      '@odata.etag': rowTag(`{"order_id":1,"line":2,"owner_id":${alice},"qty":6}`),
      order_id: 1,
      line: 2,
      owner_id: alice,
      qty: 6,
    });
    expect(seen(await get('/odata/order_lines(order_id=3,line=1)', 'alice'))).toEqual(
      err(404, 'ROW_NOT_FOUND', "No row of 'order_lines' has that key"),
    );
  });
});

const batch = (requests: unknown[], as = 'alice') =>
  call('POST', '/odata/$batch', { as, json: { requests } });

describe('$batch', () => {
  const multipart = (text: string, as = 'alice', boundary = 'b') =>
    call('POST', '/odata/$batch', {
      as,
      raw: text.replaceAll('\n', '\r\n'),
      type: `multipart/mixed; boundary=${boundary}`,
    });
  const JSON_ERROR = { 'content-type': 'application/json' };

  test('a change set mixing an allowed and a forbidden write is rolled back whole', async () => {
    const before = await everything();
    for (const [second, status, body] of [
      [
        { method: 'PATCH', url: 'orders(3)', body: { note: 'bob?' } },
        404,
        err(404, 'ROW_NOT_FOUND', "No row of 'orders' has that key").body,
      ],
      [
        { method: 'DELETE', url: 'orders(4)' },
        404,
        err(404, 'ROW_NOT_FOUND', "No row of 'orders' has that key").body,
      ],
      [
        { method: 'PATCH', url: 'orders(1)', body: { margin: 5 } },
        400,
        unknown('margin', 'orders').body,
      ],
      [
        { method: 'PATCH', url: 'orders(1)', body: { owner_id: 2 } },
        403,
        err(
          403,
          'POLICY_VIOLATION',
          "The updated row would not satisfy this role's policy for update on 'orders': column 'owner_id'",
        ).body,
      ],
      [
        { method: 'POST', url: 'orders', body: { owner_id: 2, note: 'x' } },
        403,
        err(
          403,
          'POLICY_VIOLATION',
          "The new row would not satisfy this role's policy for create on 'orders': column 'owner_id'",
        ).body,
      ],
      [
        {
          method: 'POST',
          url: 'orders',
          body: { owner_id: 1, order_items: [{ sku: 'Q', cost: 1 }] },
        },
        400,
        unknown('cost', 'order_items').body,
      ],
      [
        { method: 'DELETE', url: 'vault(1)' },
        404,
        err(404, 'UNKNOWN_TABLE', "Table 'vault' does not exist").body,
      ],
      [
        { method: 'PUT', url: '$1', body: { note: 'ref' } },
        400,
        err(
          400,
          'BATCH_SYNTAX',
          "'$1' names a request that creates no entity: only a POST's can be named",
        ).body,
      ],
    ] as const) {
      const answer = await batch([
        {
          id: '1',
          method: 'PATCH',
          url: 'orders(1)',
          atomicityGroup: 'g',
          body: { note: 'changed' },
        },
        {
          id: '2',
          method: 'POST',
          url: 'orders',
          atomicityGroup: 'g',
          body: { owner_id: alice, note: 'new' },
        },
        { id: '3', atomicityGroup: 'g', ...second },
        { id: '4', method: 'GET', url: 'orders/$count', dependsOn: ['g'] },
      ]);
      expect(answer.body).toEqual({
        responses: [
          { id: '3', status, headers: JSON_ERROR, body },
          {
            id: '4',
            status: 424,
            headers: JSON_ERROR,
            body: {
              error: {
                code: 'BATCH_DEPENDENCY_FAILED',
                message: "Not run: request or change set 'g', which this one depends on, failed",
              },
            },
          },
        ],
      });
    }
    expect(await everything()).toBe(before);
  });

  test("If-Match in a change set: another user's row and tag are a missing row's 412, her set written whole or not at all", async () => {
    const before = await everything();
    const failed = err(
      412,
      'PRECONDITION_FAILED',
      "The row of 'order_lines' no longer has the ETag given in If-Match (it changed, or is gone): nothing was changed; read it again with read(<key>,<value>)",
    ).body;
    const bobsTag = (await get('/odata/order_lines(order_id=3,line=1)', 'bob')).headers.get(
      'etag',
    ) as string;
    const hers = (await get('/odata/order_lines(order_id=1,line=2)', 'alice')).headers.get(
      'etag',
    ) as string;
    for (const url of ['order_lines(order_id=3,line=1)', 'order_lines(order_id=9,line=1)']) {
      for (const tag of [bobsTag, '*']) {
        const answer = await batch([
          {
            id: '1',
            method: 'PATCH',
            url: 'order_lines(order_id=1,line=2)',
            headers: { 'if-match': hers },
            body: { qty: 60 },
            atomicityGroup: 'g',
          },
          {
            id: '2',
            method: 'DELETE',
            url,
            headers: { 'if-match': tag },
            atomicityGroup: 'g',
          },
        ]);
        expect(JSON.parse(answer.text)).toEqual({
          responses: [{ id: '2', status: 412, headers: JSON_ERROR, body: failed }],
        });
      }
    }
    expect(await everything()).toBe(before);
    const fresh = await batch([
      {
        id: '1',
        method: 'PATCH',
        url: 'order_lines(order_id=1,line=2)',
        headers: { 'if-match': hers },
        body: { qty: 6 },
      },
    ]);
    expect(JSON.parse(fresh.text)).toEqual({ responses: [{ id: '1', status: 204, headers: {} }] });
    expect(await everything()).toBe(before);
  });

  test("reads inside a batch are the caller's own: another user's token in a part is not used", async () => {
    const parts = await multipart(`--b
Content-Type: application/http

GET orders?$select=id HTTP/1.1
Authorization: Bearer ${users.bob?.token}


--b
Content-Type: application/http

GET orders(3) HTTP/1.1


--b--
`);
    expect(parts.status).toBe(200);
    expect(parts.text).toContain('"value":[{"id":1},{"id":2}]');
    expect(parts.text).toContain(
      '{"error":{"code":"ROW_NOT_FOUND","message":"No row of \'orders\' has that key"}}',
    );
    const json = await batch([
      {
        id: '1',
        method: 'GET',
        url: 'orders?$select=id',
        headers: { authorization: `Bearer ${users.bob?.token}` },
      },
      { id: '2', method: 'GET', url: 'orders?$select=margin' },
    ]);
    const [first, second] = (json.body as { responses: { body: unknown }[] }).responses;
    expect(first?.body).toEqual({
      '@odata.context': ctx('orders(id)'),
      value: [{ id: 1 }, { id: 2 }],
    });
    expect(second?.body).toEqual(unknown('margin', 'orders').body);
  });

  test('a Content-ID reference names only an entity its change set created, never a row reached by its key; a batch in a batch is refused', async () => {
    const before = await everything();
    const answer = await multipart(`--b
Content-Type: multipart/mixed; boundary=c

--c
Content-Type: application/http
Content-ID: 1

PATCH orders(1) HTTP/1.1
Content-Type: application/json

{"note":"mp"}
--c
Content-Type: application/http
Content-ID: 2

DELETE $1 HTTP/1.1


--c--
--b--
`);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('Content-ID: 2');
    expect(answer.text).toContain(
      '{"error":{"code":"BATCH_SYNTAX","message":"\'$1\' names a request that creates no entity: only a POST\'s can be named"}}',
    );
    expect((await batch([{ id: '1', method: 'GET', url: '$batch' }])).body).toEqual({
      responses: [
        {
          id: '1',
          status: 400,
          headers: JSON_ERROR,
          body: err(400, 'BATCH_SYNTAX', 'A batch cannot hold a batch').body,
        },
      ],
    });
    expect(
      seen(
        await multipart(`--b
Content-Type: multipart/mixed; boundary=c

--c
Content-Type: multipart/mixed; boundary=d

--d--
--c--
--b--
`),
      ),
    ).toEqual(err(400, 'BATCH_LIMIT', 'A change set cannot hold another change set'));
    expect(await everything()).toBe(before);
  });

  test('an inner URL cannot leave the service, however it is spelled', async () => {
    for (const url of [
      '../table/orders/read',
      '%2e%2e/table/orders/read',
      '..\\table/orders/read',
      'orders/../../auth/me',
      '/table/orders/read',
    ]) {
      const answer = await batch([{ id: '1', method: 'GET', url }]);
      expect(answer.body).toEqual({
        responses: [
          {
            id: '1',
            status: 400,
            headers: JSON_ERROR,
            body: err(400, 'BATCH_SYNTAX', `'${url}' is not a URL of the service /odata/`).body,
          },
        ],
      });
    }
    // Another host's absolute URL is this service's path, answered by this gateway for the caller.
    const absolute = await batch([
      { id: '1', method: 'GET', url: 'http://evil.example/odata/orders/$count' },
    ]);
    expect((absolute.body as { responses: { body: unknown }[] }).responses[0]?.body).toBe('2');
  });

  test('oversized and malformed batches are 4xx in the OData form', async () => {
    const many = Array.from({ length: 101 }, (_, i) => ({
      id: String(i),
      method: 'GET',
      url: 'orders',
    }));
    expect(seen(await batch(many))).toEqual(
      err(400, 'BATCH_LIMIT', 'A batch holds at most 100 requests'),
    );
    expect(
      seen(await call('POST', '/odata/$batch', { as: 'alice', raw: 'x'.repeat(5 * 1024 * 1024) })),
    ).toEqual(err(413, 'BATCH_TOO_LARGE', 'The batch is larger than 4194304 bytes'));
    expect(
      seen(await multipart('--b\nContent-Type: application/http\n\nGET orders HTTP/1.1\n\n\n')),
    ).toEqual(err(400, 'BATCH_SYNTAX', 'The multipart body has no closing --b--'));
    expect(
      seen(
        await multipart(
          `--b\n${'X-A: 1\n'.repeat(200)}Content-Type: application/http\n\nGET orders HTTP/1.1\n\n\n--b--\n`,
        ),
      ),
    ).toEqual(err(400, 'BATCH_LIMIT', 'A part has more than 100 header lines'));
    // The inner boundary equal to the outer one: not read as the end of the batch.
    expect(
      seen(
        await multipart(
          '--b\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: application/http\n\nGET orders HTTP/1.1\n\n\n--b--\n--b--\n',
        ),
      ),
    ).toEqual(err(400, 'BATCH_SYNTAX', "A part has a header line that is not 'Name: value'"));
    const media = err(
      415,
      'BATCH_MEDIA_TYPE',
      "Content-Type must be 'application/json' or 'multipart/mixed' with a boundary",
    );
    expect(seen(await multipart('x', 'alice', 'b'.repeat(5000)))).toEqual(media);
    expect(seen(await multipart('x', 'alice', ''))).toEqual(media);
    expect(
      seen(
        await call('POST', '/odata/$batch', { as: 'alice', raw: '{', type: 'application/json' }),
      ),
    ).toEqual(err(400, 'INVALID_JSON', 'Request body is not valid JSON'));
    // Without a token: only what anonymous may do, and a write it may not do is 403.
    expect(
      (
        await call('POST', '/odata/$batch', {
          json: { requests: [{ id: '1', method: 'DELETE', url: 'customers(1)' }] },
        })
      ).body,
    ).toEqual({
      responses: [
        {
          id: '1',
          status: 403,
          headers: JSON_ERROR,
          body: err(403, 'FORBIDDEN', 'Forbidden').body,
        },
      ],
    });
  });
});

describe('names that need the _xHHHH_ rule', () => {
  test('`a b` and `a_x0020_b` side by side: each has one name, neither reaches the other', async () => {
    // alice may not read `a_x0020_b` (its name is a_x005F_x0020_b); `a b` is a_x0020_b.
    expect((await get('/odata/names', 'alice')).body).toEqual({
      '@odata.context': ctx('names'),
      value: [{ id: 1, a_x0020_b: 10, _x0032_fa: 30, aAb: 40, a_x005F_x0041_b: 50 }],
    });
    expect(
      (await get('/odata/names?$select=a_x0020_b&$filter=a_x0020_b%20eq%2010', 'alice')).body,
    ).toEqual({
      '@odata.context': ctx('names(a_x0020_b)'),
      value: [{ a_x0020_b: 10 }],
    });
    expect(seen(await get('/odata/names?$select=a_x005F_x0020_b', 'alice'))).toEqual(
      err(
        400,
        'UNKNOWN_COLUMN',
        "Column 'a_x0020_b' does not exist in table 'names': did you mean 'a_x0041_b'?",
      ),
    );
    expect(seen(await get('/odata/names(1)/a_x005F_x0020_b', 'alice'))).toEqual(
      err(404, 'NOT_FOUND', 'No route for GET /odata/names(1)/a_x005F_x0020_b'),
    );
    const before = await table('names');
    expect(
      seen(await call('PATCH', '/odata/names(1)', { as: 'alice', json: { a_x005F_x0020_b: 1 } })),
    ).toEqual(
      err(
        400,
        'UNKNOWN_COLUMN',
        "Column 'a_x0020_b' does not exist in table 'names': did you mean 'a_x0041_b'?",
      ),
    );
    expect(await table('names')).toEqual(before);
    // Her a_x0020_b writes `a b`, and only it.
    expect(
      (await call('PATCH', '/odata/names(1)', { as: 'alice', json: { a_x0020_b: 11 } })).status,
    ).toBe(204);
    expect(await table('names')).toEqual([
      { id: 1, 'a b': 11, a_x0020_b: 20, '2fa': 30, aAb: 40, a_x0041_b: 50 },
    ]);
  });

  test("an identifier whose escapes are not the rule's names nothing (never the column spelled so)", async () => {
    const refused = (word: string, code = 'INVALID_QUERY') =>
      err(
        400,
        code,
        `'${word}' is not an OData name: its _xHHHH_ escapes are not those of any name (docs/odata.md, "Names")`,
      );
    expect(seen(await get('/odata/names?$select=a_x0041_b', 'alice'))).toEqual(
      refused('a_x0041_b'),
    );
    expect(seen(await get('/odata/names?$filter=a_x0041_b%20eq%2050', 'alice'))).toEqual(
      refused('a_x0041_b'),
    );
    expect(seen(await get('/odata/names?$orderby=a_x0032_fa', 'alice'))).toEqual(
      refused('a_x0032_fa'),
    );
    expect(seen(await get('/odata/n_x0061_mes', 'alice'))).toEqual(refused('n_x0061_mes'));
    const before = await table('names');
    expect(
      seen(await call('PATCH', '/odata/names(1)', { as: 'alice', json: { a_x0041_b: 1 } })),
    ).toEqual(refused('a_x0041_b', 'INVALID_BODY'));
    expect(await table('names')).toEqual(before);
    // Its own name reads and writes it; aAb is untouched.
    expect((await get('/odata/names(1)/a_x005F_x0041_b', 'alice')).body).toEqual({
      '@odata.context': ctx('names(1)/a_x005F_x0041_b'),
      value: 50,
    });
    expect(
      (await call('PATCH', '/odata/names(1)', { as: 'alice', json: { a_x005F_x0041_b: 51 } }))
        .status,
    ).toBe(204);
    expect(await table('names')).toEqual([{ ...(before[0] as object), a_x0041_b: 51 }]);
  });

  test('one column named twice in a body is refused, never one value silently dropped', async () => {
    const before = await table('names');
    expect(
      seen(
        await call('PATCH', '/odata/names(1)', { as: 'alice', json: { _x0032_fa: 1, '2fa': 2 } }),
      ),
    ).toEqual(err(400, 'INVALID_BODY', "The body names '2fa' twice (as '2fa' too)"));
    const inBatch = await batch([
      { id: '1', method: 'PATCH', url: 'names(1)', body: { '2fa': 2, _x0032_fa: 1 } },
    ]);
    expect(
      (inBatch.body as { responses: { status: number; body: unknown }[] }).responses[0],
    ).toMatchObject({
      status: 400,
      body: err(400, 'INVALID_BODY', "The body names '2fa' twice (as '_x0032_fa' too)").body,
    });
    expect(await table('names')).toEqual(before);
  });
});

describe('malformed, long and costly requests', () => {
  test('a bad percent-encoding, a method no route takes: refused before routing, still in the OData form', async () => {
    const malformed = await get('/odata/customers(%ZZ)', 'alice');
    expect([seen(malformed), malformed.headers.get('odata-version')]).toEqual([
      err(400, 'MALFORMED_URL', 'The URL is not valid: check its percent-encoding'),
      '4.0',
    ]);
    const method = await call('PROPFIND', '/odata/orders', { as: 'alice' });
    expect([
      seen(method),
      method.headers.get('allow'),
      method.headers.get('odata-version'),
    ]).toEqual([
      err(
        405,
        'METHOD_NOT_ALLOWED',
        'PROPFIND is not allowed here; this path answers DELETE, GET, HEAD, PATCH, POST, PUT',
      ),
      'DELETE, GET, HEAD, PATCH, POST, PUT',
      '4.0',
    ]);
    // REST's answers keep REST's form.
    expect((await get('/table/customers/read(%ZZ)', 'alice')).body).toEqual({
      success: false,
      message: 'The URL is not valid: check its percent-encoding',
      code: 'MALFORMED_URL',
    });
  });

  test('$batch asked with another method than POST is 405, not a table named $batch', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const answer = await call(method, '/odata/$batch', { as: 'alice' });
      expect([seen(answer), answer.headers.get('allow')]).toEqual([
        err(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed here; this path answers POST`),
        'POST',
      ]);
    }
  });

  test('long filters and URLs are refused by their limits', async () => {
    expect(seen(await get(`/odata/orders?$filter=${'x'.repeat(5000)}%20eq%201`, 'alice'))).toEqual(
      err(400, 'LIMIT_EXCEEDED', '$filter is 5005 bytes long; the limit is 4096 bytes (UTF-8)'),
    );
    expect(
      seen(
        await get(`/odata/orders?$filter=${'('.repeat(70)}id%20eq%201${')'.repeat(70)}`, 'alice'),
      ),
    ).toEqual(
      err(
        400,
        'LIMIT_EXCEEDED',
        "Invalid $filter at position 65: nesting deeper than 64 levels (parentheses and 'not' both count)",
      ),
    );
    expect(seen(await get(`/odata/orders(${'1'.repeat(2000)})`, 'alice'))).toEqual(
      err(400, 'INVALID_QUERY', `The number ${'1'.repeat(40)}… is out of range`),
    );
    // Past the HTTP parser's header limit the request is refused before it is read.
    const huge = await get(`/odata/orders?$filter=note%20eq%20'${'x'.repeat(20000)}'`, 'alice');
    expect(huge.status).toBe(431);
    expect(huge.text).toContain('"code":"HEADERS_TOO_LARGE"');
  });

  test('deep $expand is refused; nested lambdas are bounded; a one-row read answers right after', async () => {
    expect(
      seen(
        await get(
          '/odata/orders?$expand=order_items($expand=order($expand=order_items($expand=order)))',
          'alice',
        ),
      ),
    ).toEqual(err(400, 'LIMIT_EXCEEDED', "$expand 'order' goes 4 levels deep; the limit is 3"));
    const nested = (depth: number) => {
      let lambda = `a${depth}/sku eq 'x'`;
      for (let k = depth - 1; k > 0; k--)
        lambda = `a${k}/order/order_items/any(a${k + 1}: ${lambda})`;
      return `/odata/orders?$filter=${encodeURIComponent(`order_items/any(a1: ${lambda})`)}`;
    };
    // Within the filter limits a nesting is a statement like any other, priced before it runs
    // (docs/reading.md, "Cost limits": QUERY_TOO_COSTLY past the budget; these tables are small).
    expect((await get(nested(30), 'alice')).body).toEqual({
      '@odata.context': ctx('orders'),
      value: [],
    });
    const deep = await get(nested(70), 'alice');
    expect(deep.status).toBe(400);
    expect((deep.body as { error: { code: string } }).error.code).toBe('LIMIT_EXCEEDED');
    expect((await get('/odata/orders(1)?$select=id', 'alice')).body).toEqual({
      '@odata.context': ctx('orders/$entity'),
      '@odata.etag': (await get('/table/orders/read(id,1)', 'alice')).headers.get('etag'),
      id: 1,
    });
  });
});

describe('Basic credentials on /odata/', () => {
  const basic = (email: string, password: string) => ({
    authorization: `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`,
  });

  test("a user's Basic credential is that user, and a wrong one is the login's 401", async () => {
    const mine = await call('GET', '/odata/orders?$select=id', {
      headers: basic('alice@shop.test', PASSWORD),
    });
    expect(mine.body).toEqual({
      '@odata.context': ctx('orders(id)'),
      value: [{ id: 1 }, { id: 2 }],
    });
    const wrong = await call('GET', '/odata/orders', {
      headers: basic('alice@shop.test', 'not it at all'),
    });
    expect([wrong.status, wrong.headers.get('www-authenticate'), wrong.body]).toEqual([
      401,
      'Basic realm="tablegate", Bearer',
      { error: { code: 'INVALID_CREDENTIALS', message: 'Invalid email or password' } },
    ]);
  });

  test('a remembered credential stops working when its user is removed', async () => {
    const dora = basic('dora@shop.test', PASSWORD);
    expect((await call('GET', '/odata/orders', { headers: dora })).status).toBe(200);
    await db.admin.query(`DELETE FROM ${USERS_TABLE} WHERE email = 'dora@shop.test'`);
    // Revocation takes effect within the users' refresh (docs/auth.md): poll until it does.
    let status = 200;
    for (let i = 0; i < 60 && status === 200; i++) {
      status = (await call('GET', '/odata/orders', { headers: dora })).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const refused = await call('GET', '/odata/orders', { headers: dora });
    expect(seen(refused)).toEqual(err(401, 'INVALID_CREDENTIALS', 'Invalid email or password'));
    const login = await postCredentials(gw.url, '/auth/login', 'dora@shop.test', PASSWORD);
    expect(login.status).toBe(401);
  }, 30_000);
});

describe('collection ETags', () => {
  test("her collection's tag is hers: another user sending it gets his own rows whole", async () => {
    const url = '/odata/orders?$select=id,note';
    const hers = await get(url, 'alice');
    const tag = hers.headers.get('etag') as string;
    expect(tag).toBe(rowTag(hers.text));
    expect((await get(url, 'alice', { 'if-none-match': tag })).status).toBe(304);
    const his = await get(url, 'bob', { 'if-none-match': tag });
    expect(his.status).toBe(200);
    expect((his.body as { value: unknown[] }).value).toEqual([
      { id: 3, note: 'bob open' },
      { id: 4, note: 'bob paid' },
    ]);
    expect(his.headers.get('etag')).toBe(rowTag(his.text));
    const anonymous = await get('/odata/orders', undefined, { 'if-none-match': tag });
    // A role that may not read the table: its 404, whatever tag it sends.
    expect(anonymous.status).toBe(404);
    const nav = await get('/odata/orders(1)/order_items', 'alice');
    const navTag = nav.headers.get('etag') as string;
    expect(navTag).toBe(rowTag(nav.text));
    expect(
      seen(await get('/odata/orders(3)/order_items', 'alice', { 'if-none-match': navTag })),
    ).toEqual(err(404, 'ROW_NOT_FOUND', "No row of 'orders' has that key"));
  });
});
