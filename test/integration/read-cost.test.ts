/**
 * Reads whose cost estimate (plan/read-cost.ts) is past the caller's budget are refused before
 * they run, 400 QUERY_TOO_COSTLY (docs/reading.md, "Cost limits"), on the example shop of
 * docker/initdb/01-example.sql grown to 500 customers, 20 products, 2,502 orders and 10,000
 * order items: nested lambdas and nested to-many expansions that MySQL would work on for
 * seconds are refused with no statement sent (the tables are locked while they are asked, so a
 * statement would wait), and every ordinary read of the docs on the same shop still answers.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type mysql from 'mysql2/promise';
import { createTestDatabase, integers, type TestDatabase } from '../helpers/database.js';
import { signUpAs, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const EXAMPLE_SQL = path.join(
  import.meta.dirname,
  '..',
  '..',
  'docker',
  'initdb',
  '01-example.sql',
);

const SAKILA_SQL = path.join(import.meta.dirname, '..', 'fixtures', 'sakila-subset.sql');

/** The Sakila subset grown to Sakila's sizes: 599 customers, 16,049 payments, 1,000 films. */
const SAKILA_SIZES = `
INSERT INTO actor (actor_id, first_name, last_name)
  SELECT seq, CONCAT('FIRST', seq), CONCAT('LAST', seq) FROM ${integers(200)} WHERE seq > 4;
INSERT INTO film (film_id, title, language_id)
  SELECT seq, CONCAT('FILM ', seq), 1 + seq % 3 FROM ${integers(1000)} WHERE seq > 3;
INSERT INTO film_actor (actor_id, film_id)
  SELECT 1 + ((4 + (seq - 1) DIV 5) * 7 + ((seq - 1) % 5) * 13) % 200, 4 + (seq - 1) DIV 5
    FROM ${integers(4985)};
INSERT INTO film_category (film_id, category_id)
  SELECT seq, 1 + seq % 3 FROM ${integers(1000)} WHERE seq > 3;
INSERT INTO country (country_id, country)
  SELECT seq, CONCAT('Country ', seq) FROM ${integers(109)} WHERE seq > 2;
INSERT INTO city (city_id, city, country_id)
  SELECT seq, CONCAT('City ', seq), 1 + seq % 109 FROM ${integers(600)} WHERE seq > 2;
INSERT INTO address (address_id, address, district, city_id, phone, location)
  SELECT seq, CONCAT(seq, ' Main Street'), 'District', 1 + seq % 600, '', ST_GeomFromText('POINT(1 2)')
    FROM ${integers(603)} WHERE seq > 2;
INSERT INTO customer (customer_id, first_name, last_name, address_id, create_date)
  SELECT seq, CONCAT('FIRST', seq), CONCAT('LAST', seq), 1 + seq % 603, '2006-02-14 22:04:36'
    FROM ${integers(599)} WHERE seq > 2;
INSERT INTO payment (payment_id, customer_id, staff_id, amount, payment_date)
  SELECT seq, 1 + seq % 599, 1 + seq % 2, 0.99 + seq % 10, '2005-05-25 11:30:37.000'
    FROM ${integers(16049)} WHERE seq > 3;
ANALYZE TABLE actor, film, film_actor, film_category, country, city, address, customer, payment;
`;

/** The example rows stay; ids past them make the shop 10,000 items large. */
const GROW = `
INSERT INTO customers (id, name, email, city)
  SELECT seq, CONCAT('Customer ', seq), CONCAT('c', seq, '@shop.example'), 'Basel'
    FROM ${integers(500)} WHERE seq > 4;
INSERT INTO products (id, name, category, price, stock)
  SELECT seq, CONCAT('Product ', seq), 'tea', 5.00, 10 FROM ${integers(20)} WHERE seq > 5;
INSERT INTO orders (id, customer_id, ordered_at, status)
  SELECT seq, 1 + seq % 500, '2024-06-01 10:00:00', 'paid' FROM ${integers(2502)} WHERE seq > 3;
INSERT INTO order_items (order_id, product_id, quantity, unit_price)
  SELECT 4 + (seq - 1) DIV 4 AS o, 1 + ((4 + (seq - 1) DIV 4) * 7 + (1 + (seq - 1) % 4) * 3) % 20,
         1 + (4 + (seq - 1) DIV 4) % 5, 5.00
    FROM ${integers(9996)};
ANALYZE TABLE customers, products, orders, order_items;
`;

/** The two requests of the fan-out: 120 and 93 bytes that MySQL would work on for seconds. */
const NESTED_LAMBDAS =
  '/table/customers/read?$filter=orders/any(o: o/order_items/any(i: i/product/order_items/any(k: k/quantity eq 99)))';
const NESTED_EXPAND =
  '/table/products/read?$expand=order_items($expand=product($expand=order_items))&$top=1';

const TABLES = ['customers', 'products', 'orders', 'order_items'];

let db: TestDatabase;
/** Rows per table as the gateway reads them (information_schema.TABLES.TABLE_ROWS). */
const rows: Record<string, number> = {};

interface Answer {
  status: number;
  body: unknown;
}

async function get(base: string, url: string, token?: string): Promise<Answer> {
  const response = await fetch(`${base}${encodeURI(url)}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

const costly = (estimate: number, limit: number, option = '--max-read-cost') => ({
  success: false,
  message: `This read is estimated at ${estimate} row reads, over the limit of ${limit} (${option}): nest fewer lambdas or to-many $expand levels, or give each expanded relation a $top`,
  code: 'QUERY_TOO_COSTLY',
});

/** Rows of `to` per row of `from`, as the estimate works them out. */
const fan = (to: string, from: string) => (rows[to] as number) / Math.max(1, rows[from] as number);

/** The estimates of the two fan-out requests, from the statistics the gateway read. */
function nestedLambdasCost(): number {
  const perItem = 1 + 1 + fan('order_items', 'products');
  const perOrder = 1 + fan('order_items', 'orders') * perItem;
  return Math.round((rows.customers as number) * fan('orders', 'customers') * perOrder);
}
function nestedExpandCost(): number {
  const perItem = 8 + 1 + fan('order_items', 'products') * 8;
  return Math.round(fan('order_items', 'products') * perItem);
}

/** The answer to `url`, asked while every table of the shop is write-locked by another session. */
async function askWhileLocked(base: string, url: string): Promise<Answer | 'waited'> {
  await db.admin.query(`LOCK TABLES ${TABLES.map((t) => `${t} WRITE`).join(', ')}`);
  try {
    // A statement on a locked table waits for the lock: an answer within 3 s ran none.
    const timer = new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 3000));
    return await Promise.race([get(base, url), timer]);
  } finally {
    await db.admin.query('UNLOCK TABLES');
  }
}

beforeAll(async () => {
  db = await createTestDatabase(`${await readFile(EXAMPLE_SQL, 'utf8')}\n${GROW}`);
  const [found] = await db.admin.query<mysql.RowDataPacket[]>(
    'SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?',
    [db.name],
  );
  for (const row of found) rows[String(row.TABLE_NAME)] = Number(row.TABLE_ROWS);
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

describe('the default budget (open mode: --max-read-cost 250000)', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway(db.name);
  });
  afterAll(async () => {
    await gw?.close();
  });

  test('the shop holds 10,000 order items', async () => {
    const [[count]] = (await db.admin.query('SELECT COUNT(*) AS n FROM order_items')) as [
      mysql.RowDataPacket[],
      unknown,
    ];
    expect(Number(count?.n)).toBe(10_000);
  });

  test('nested lambdas: 400 QUERY_TOO_COSTLY naming the estimate and the limit, no statement run', async () => {
    expect(nestedLambdasCost()).toBeGreaterThan(10 * 250_000);
    expect(await askWhileLocked(gw.url, NESTED_LAMBDAS)).toEqual({
      status: 400,
      body: costly(nestedLambdasCost(), 250_000),
    });
  });

  test('nested to-many $expand: 400 QUERY_TOO_COSTLY, no statement run', async () => {
    expect(nestedExpandCost()).toBeGreaterThan(4 * 250_000);
    expect(await askWhileLocked(gw.url, NESTED_EXPAND)).toEqual({
      status: 400,
      body: costly(nestedExpandCost(), 250_000),
    });
    // Asked again, from the read caches: the same answer.
    expect(await askWhileLocked(gw.url, NESTED_EXPAND)).toEqual({
      status: 400,
      body: costly(nestedExpandCost(), 250_000),
    });
  });

  test('with $count, refused before the count runs', async () => {
    expect(await askWhileLocked(gw.url, `${NESTED_LAMBDAS}&$count=true`)).toEqual({
      status: 400,
      body: costly(nestedLambdasCost(), 250_000),
    });
  });

  test('a key read with the nested $expand is refused too', async () => {
    const answer = await askWhileLocked(
      gw.url,
      '/table/products/read(id,1)?$expand=order_items($expand=product($expand=order_items))',
    );
    expect(answer).toEqual({ status: 400, body: costly(nestedExpandCost(), 250_000) });
  });

  test('MCP read_rows and aggregate_rows are refused as the REST read is', async () => {
    const client = new Client({ name: 'tablegate-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`)));
    try {
      const call = async (name: string, args: Record<string, unknown>) => {
        const result = (await client.callTool({ name, arguments: args })) as {
          content: { text: string }[];
          isError?: boolean;
        };
        return { error: result.isError === true, body: JSON.parse(result.content[0]?.text ?? '') };
      };
      expect(
        await call('read_rows', {
          table: 'products',
          expand: 'order_items($expand=product($expand=order_items))',
          top: 1,
        }),
      ).toEqual({ error: true, body: costly(nestedExpandCost(), 250_000) });
      expect(
        await call('aggregate_rows', {
          table: 'customers',
          apply: 'aggregate($count as n)',
          filter:
            'orders/any(o: o/order_items/any(i: i/product/order_items/any(k: k/quantity eq 99)))',
        }),
      ).toEqual({ error: true, body: costly(nestedLambdasCost(), 250_000) });
      // An ordinary call still answers.
      expect(
        (await call('read_rows', { table: 'orders', expand: 'order_items', top: 1 })).error,
      ).toBe(false);
    } finally {
      await client.close();
    }
  });

  test.each([
    ['/table/order_items/read', 10_000],
    ["/table/products/read?$filter=price lt 20 and category eq 'tea'&$orderby=price", 17],
    ['/table/orders/read?$orderby=id&$top=500', 500],
    ['/table/orders/read?$expand=customer,order_items&$top=1', 1],
    [
      '/table/orders/read?$select=id,ordered_at&$expand=customer($select=name),order_items($orderby=unit_price desc;$top=3;$expand=product($select=name))',
      2502,
    ],
    ['/table/orders/read?$expand=order_items/product', 2502],
    ['/table/orders/read?$orderby=id&$expand=customer,order_items', 2502],
    ['/table/customers/read?$expand=orders($expand=order_items($expand=product))', 500],
    ['/table/products/read?$expand=order_items', 20],
    ['/table/customers/read?$filter=orders/any(o: o/order_items/any(i: i/quantity gt 2))', 301],
    ['/table/orders/read?$filter=order_items/all(i: i/quantity gt 0)&$count=true', 2502],
    ['/table/products/read?$filter=order_items/any()', 20],
    ['/table/orders/read?$apply=groupby((status),aggregate($count as orders))', 3],
    [
      '/table/order_items/read?$apply=groupby((product/category),aggregate(quantity with sum as units))',
      3,
    ],
    ['/table/order_totals/read?$orderby=total desc&$top=3', 3],
  ])('an ordinary read still answers: %s', async (url, length) => {
    const { status, body } = await get(gw.url, url);
    expect(status).toBe(200);
    expect(body).toHaveLength(length);
  });

  test('a key read with an ordinary $expand still answers', async () => {
    const { status, body } = await get(
      gw.url,
      '/table/orders/read(id,1)?$expand=customer,order_items($expand=product)',
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: 1, customer: { id: 1 }, order_items: [{}, {}] });
  });
});

describe('a Sakila-sized schema, by the default budget', () => {
  let sakila: TestDatabase;
  let gw: TestGateway;

  beforeAll(async () => {
    sakila = await createTestDatabase(`${await readFile(SAKILA_SQL, 'utf8')}\n${SAKILA_SIZES}`);
    gw = await startTestGateway(sakila.name);
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await sakila?.drop();
  });

  test.each([
    ['/table/payment/read', 16_049],
    ['/table/customer/read?$expand=payment', 599],
    // Two rows of 8,000 payments each: the largest expansion of the schema.
    ['/table/staff/read?$expand=payment', 2],
    [
      '/table/customer/read?$select=first_name&$filter=customer_id eq 1&$expand=payment($select=amount,payment_date)',
      1,
    ],
    ['/table/film/read?$expand=film_actor($expand=actor),film_category($expand=category)', 1000],
    ['/table/actor/read?$expand=film_actor($expand=film($expand=film_actor))', 200],
    ['/table/country/read?$expand=city($expand=address($expand=customer))', 109],
    ['/table/payment/read?$expand=customer($expand=address($expand=city))&$top=100', 100],
    ['/table/customer/read?$filter=payment/any(p: p/amount gt 9)', 599],
    ["/table/film/read?$filter=film_actor/any(fa: fa/actor/last_name eq 'CHASE')", 26],
    [
      '/table/actor/read?$filter=film_actor/any(fa: fa/film/film_actor/any(x: x/actor_id eq 3))&$count=true',
      9,
    ],
    ['/table/payment/read?$apply=groupby((staff_id),aggregate(amount with sum as total))', 2],
    ['/table/sales_by_staff/read', 2],
  ])('still answers: %s', async (url, length) => {
    const { status, body } = await get(gw.url, url);
    expect(status).toBe(200);
    expect(body).toHaveLength(length);
  });
});

describe('budgets per caller', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-cost-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** 500 items of a product, each with its product's first 30 items: 500 × (9 + 30 × 8). */
  const TOPPED =
    '/table/products/read?$expand=order_items($expand=product($expand=order_items($top=30)))&$top=1';
  const toppedCost = () => Math.round(fan('order_items', 'products') * (8 + 1 + 30 * 8));

  test('anonymous has the stricter default (100000), a signed-in user the wider one', async () => {
    const file = path.join(dir, 'policy.json');
    const all = { tables: { '*': { read: true } } };
    await writeFile(file, JSON.stringify({ roles: { anonymous: all, user: all } }));
    const gw = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: 'a-secret-for-the-read-cost-tests-of-32-bytes',
      policyFile: file,
    });
    try {
      expect(toppedCost()).toBeGreaterThan(100_000);
      expect(toppedCost()).toBeLessThan(250_000);
      expect(await get(gw.url, TOPPED)).toEqual({
        status: 400,
        body: costly(toppedCost(), 100_000, '--max-read-cost-anonymous'),
      });
      const { token } = await signUpAs(
        gw.url,
        db.admin,
        { email: 'reader@shop.example', password: 'a long enough password' },
        'user',
      );
      const signedIn = await get(gw.url, TOPPED, token);
      expect(signedIn.status).toBe(200);
      expect(signedIn.body).toHaveLength(1);
      // Past the wider budget, the signed-in user is refused too, naming it.
      expect(await get(gw.url, NESTED_EXPAND, token)).toEqual({
        status: 400,
        body: costly(nestedExpandCost(), 250_000),
      });
    } finally {
      await gw.close();
    }
  });

  test('--max-read-cost and --max-read-cost-anonymous set them; 0 is no limit', async () => {
    // 500 customers × 5 orders.
    const url = '/table/customers/read?$filter=orders/any()&$top=1';
    const estimate = Math.round((rows.customers as number) * fan('orders', 'customers'));
    const tight = await startTestGateway(db.name, { maxReadCost: 2000 });
    const off = await startTestGateway(db.name, { maxReadCost: 0 });
    try {
      expect(await get(tight.url, url)).toEqual({ status: 400, body: costly(estimate, 2000) });
      expect((await get(tight.url, '/table/customers/read?$top=1')).status).toBe(200);
      expect((await get(off.url, url)).status).toBe(200);
    } finally {
      await tight.close();
      await off.close();
    }
  });
});
