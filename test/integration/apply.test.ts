/**
 * Totals (`$apply`, docs/totals.md) against the real gateway on MariaDB: every answer is
 * compared, byte for byte, with the same totals written by hand in SQL and run on the database
 * directly, the JSON text built here from the driver's strings (so the digits of every DECIMAL,
 * the strings of big sums and of dates are checked, not just values). Path group-bys (nested
 * objects, two levels), compute() then group, `$count` of groups, empty results, NULL groups,
 * paging and ordering of groups, a role whose where changes the totals and whose hidden columns
 * cannot be grouped or aggregated, and hostile input.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import { USERS_TABLE } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SHOP = `
CREATE TABLE country (code CHAR(2) PRIMARY KEY, name VARCHAR(40) NOT NULL, region VARCHAR(20) NULL);
CREATE TABLE customer (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, country_id CHAR(2) NULL,
  vip TINYINT(1) NOT NULL DEFAULT 0, secret VARCHAR(20) NULL,
  FOREIGN KEY (country_id) REFERENCES country (code));
CREATE TABLE category (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
CREATE TABLE product (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, category_id INT NULL,
  price DECIMAL(10,2) NOT NULL, weight FLOAT NULL, FOREIGN KEY (category_id) REFERENCES category (id));
CREATE TABLE \`order\` (id INT PRIMARY KEY, customer_id INT NULL, placed_at DATETIME(3) NOT NULL,
  shipped_on DATE NULL, ship_time TIME NULL, status ENUM('open', 'paid', 'sent') NOT NULL,
  total DECIMAL(12,2) NOT NULL, items INT NOT NULL, points BIGINT NOT NULL DEFAULT 0,
  discount DOUBLE NULL, note VARCHAR(40) NULL,
  FOREIGN KEY (customer_id) REFERENCES customer (id));
CREATE TABLE order_line (id INT PRIMARY KEY, order_id INT NOT NULL, product_id INT NOT NULL,
  qty INT NOT NULL, amount DECIMAL(10,2) NOT NULL,
  FOREIGN KEY (order_id) REFERENCES \`order\` (id), FOREIGN KEY (product_id) REFERENCES product (id));
CREATE TABLE film (id INT PRIMARY KEY, title VARCHAR(60) NOT NULL);
CREATE TABLE review (id INT PRIMARY KEY, film_id INT NOT NULL, rating TINYINT NOT NULL,
  stars DECIMAL(3,1) NULL, \`we\`\`ird\` VARCHAR(10) NULL, FOREIGN KEY (film_id) REFERENCES film (id));
INSERT INTO country VALUES ('JP', 'Japan', 'Asia'), ('FR', 'France', 'Europe'),
  ('DE', 'Germany', 'Europe'), ('XX', 'Nowhere', NULL);
INSERT INTO customer VALUES (1, 'Ann', 'JP', 1, 's1'), (2, 'Bob', 'FR', 0, 's2'),
  (3, 'Cid', 'DE', 0, NULL), (4, 'Dee', NULL, 1, NULL), (5, 'Eve', 'JP', 0, 's5'),
  (6, 'Fay', 'XX', 0, NULL);
INSERT INTO category VALUES (1, 'tea'), (2, 'coffee'), (3, 'cups');
INSERT INTO product VALUES (1, 'Sencha', 1, 6.50, 0.1), (2, 'Assam', 1, 4.25, 0.25),
  (3, 'Arabica', 2, 12.90, 0.5), (4, 'Mug', 3, 8.00, NULL), (5, 'Gift card', NULL, 25.00, NULL);
INSERT INTO \`order\` VALUES
  (1, 1, '2024-01-03 10:00:00.250', '2024-01-04', '09:30:00', 'sent', 19.40, 3, 9007199254740990, 0.5, NULL),
  (2, 1, '2024-02-10 12:00:00.750', NULL, NULL, 'open', 4.25, 1, 5, NULL, 'gift'),
  (3, 2, '2023-12-31 23:59:59.999', '2024-01-02', '17:45:10', 'paid', 33.80, 4, 2, 1.25, NULL),
  (4, 3, '2024-02-29 08:00:00.000', '2024-03-01', '08:00:00', 'sent', 12.90, 1, 1, NULL, NULL),
  (5, NULL, '2024-03-15 15:30:00.100', NULL, NULL, 'open', 8.00, 1, 0, 2.5, 'walk-in'),
  (6, 5, '2024-03-16 09:00:00.000', '2024-03-17', '11:00:00', 'paid', 0.10, 2, 9007199254740990, 0.25, NULL),
  (7, 4, '2024-03-20 18:00:00.500', NULL, NULL, 'paid', 25.00, 1, 3, NULL, NULL);
INSERT INTO order_line VALUES (1, 1, 1, 2, 13.00), (2, 1, 4, 1, 6.40), (3, 2, 2, 1, 4.25),
  (4, 3, 3, 2, 25.80), (5, 3, 4, 1, 8.00), (6, 4, 3, 1, 12.90), (7, 5, 4, 1, 8.00),
  (8, 6, 1, 1, 0.05), (9, 6, 2, 1, 0.05), (10, 7, 5, 1, 25.00);
INSERT INTO film VALUES (1, 'Alien'), (2, 'Brazil'), (3, 'Casablanca');
INSERT INTO review VALUES (1, 1, 5, 4.5, 'a'), (2, 1, 4, 4.0, 'b'), (3, 1, 4, NULL, 'a'),
  (4, 2, 3, 3.5, NULL), (5, 2, 2, 2.5, 'b');
`;

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(SHOP);
  gw = await startTestGateway(db.name);
});

afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

async function read(
  base: string,
  table: string,
  query: Record<string, string>,
  token?: string,
): Promise<Answer> {
  const url = `${base}/table/${encodeURIComponent(table)}/read?${new URLSearchParams(query)}`;
  const response = await fetch(url, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/**
 * How a value of the hand-written SQL's answer is written in JSON (the test's own oracle, not
 * the gateway's codec): `number` as the driver's text (exact digits), `integer` as a number or,
 * beyond ±2^53, a string, `string` quoted; NULL is null whatever the kind.
 */
type Kind = 'number' | 'integer' | 'string';

/** A key of the answer object: `customer/country` makes nested objects. */
type Spec = readonly (readonly [string, Kind])[];

function jsonValue(value: unknown, kind: Kind): string {
  if (value === null) return 'null';
  const text = String(value);
  if (kind === 'string') return JSON.stringify(text);
  if (kind === 'number') return text;
  return BigInt(text) > BigInt(Number.MAX_SAFE_INTEGER) ||
    BigInt(text) < -BigInt(Number.MAX_SAFE_INTEGER)
    ? JSON.stringify(text)
    : text;
}

/** One object: the spec's keys in order, the path keys gathered into nested objects. */
function jsonObject(row: readonly unknown[], spec: Spec): string {
  interface Node {
    readonly keys: string[];
    readonly values: Map<string, string | Node>;
  }
  const root: Node = { keys: [], values: new Map() };
  spec.forEach(([key, kind], i) => {
    const names = key.split('/');
    let node = root;
    for (const name of names.slice(0, -1)) {
      let child = node.values.get(name) as Node | undefined;
      if (child === undefined) {
        child = { keys: [], values: new Map() };
        node.keys.push(name);
        node.values.set(name, child);
      }
      node = child;
    }
    const last = names[names.length - 1] as string;
    node.keys.push(last);
    node.values.set(last, jsonValue(row[i], kind));
  });
  const write = (node: Node): string =>
    `{${node.keys
      .map((k) => {
        const v = node.values.get(k) as string | Node;
        return `${JSON.stringify(k)}:${typeof v === 'string' ? v : write(v)}`;
      })
      .join(',')}}`;
  return write(root);
}

/** The hand-written SQL's rows as the JSON array the gateway must answer. */
async function expected(sql: string, spec: Spec, params: unknown[] = []): Promise<string> {
  const [rows] = await db.admin.query<mysql.RowDataPacket[]>({ sql, rowsAsArray: true }, params);
  return `[${(rows as unknown as unknown[][]).map((row) => jsonObject(row, spec)).join(',')}]`;
}

const CATEGORY_SALES =
  'groupby((product/category/name),aggregate(amount with sum as sales,qty with sum as units))';

describe('totals match hand-written SQL', () => {
  test.each<[string, string, Record<string, string>, string, Spec]>([
    [
      'sales per category: a path two relations deep, a nested object, the NULL group first',
      'order_line',
      { $apply: CATEGORY_SALES },
      `SELECT c.name, SUM(l.amount), SUM(l.qty) FROM order_line l JOIN product p ON p.id = l.product_id
       LEFT JOIN category c ON c.id = p.category_id GROUP BY c.name ORDER BY c.name`,
      [
        ['product/category/name', 'string'],
        ['sales', 'number'],
        ['units', 'integer'],
      ],
    ],
    [
      'orders per customer: an order without a customer is the NULL group',
      'order',
      { $apply: 'groupby((customer/name),aggregate($count as orders,total with sum as spent))' },
      `SELECT c.name, COUNT(*), SUM(o.total) FROM \`order\` o LEFT JOIN customer c ON c.id = o.customer_id
       GROUP BY c.name ORDER BY c.name`,
      [
        ['customer/name', 'string'],
        ['orders', 'integer'],
        ['spent', 'number'],
      ],
    ],
    [
      'average rating per film: AVG of TINYINT and of DECIMAL with the digits MySQL computes',
      'review',
      {
        $apply:
          'groupby((film/title),aggregate(rating with average as rating,stars with average as stars,$count as reviews))',
      },
      `SELECT f.title, AVG(r.rating), AVG(r.stars), COUNT(*) FROM review r JOIN film f ON f.id = r.film_id
       GROUP BY f.title ORDER BY f.title`,
      [
        ['film/title', 'string'],
        ['rating', 'number'],
        ['stars', 'number'],
        ['reviews', 'integer'],
      ],
    ],
    [
      'paths through one relation share its object, in the place of the first',
      'order',
      { $apply: 'groupby((customer/name,status,customer/vip),aggregate(items with sum as items))' },
      `SELECT c.name, o.status, c.vip, SUM(o.items) FROM \`order\` o LEFT JOIN customer c ON c.id = o.customer_id
       GROUP BY c.name, o.status, c.vip ORDER BY c.name, o.status, c.vip`,
      [
        ['customer/name', 'string'],
        ['status', 'string'],
        ['customer/vip', 'integer'],
        ['items', 'integer'],
      ],
    ],
    [
      'NULL groups: a missing relation and a NULL value meet in one group',
      'order',
      { $apply: 'groupby((customer/country/region),aggregate($count as n))' },
      `SELECT k.region, COUNT(*) FROM \`order\` o LEFT JOIN customer c ON c.id = o.customer_id
       LEFT JOIN country k ON k.code = c.country_id GROUP BY k.region ORDER BY k.region`,
      [
        ['customer/country/region', 'string'],
        ['n', 'integer'],
      ],
    ],
    [
      'compute() then group: year and month of a DATETIME(3)',
      'order',
      {
        $apply:
          'compute(year(placed_at) as year,month(placed_at) as month)/groupby((year,month),aggregate(total with sum as total,$count as n))',
      },
      `SELECT YEAR(placed_at), MONTH(placed_at), SUM(total), COUNT(*) FROM \`order\`
       GROUP BY YEAR(placed_at), MONTH(placed_at) ORDER BY 1, 2`,
      [
        ['year', 'integer'],
        ['month', 'integer'],
        ['total', 'number'],
        ['n', 'integer'],
      ],
    ],
    [
      'compute() then filter() on the computed name, then group by text and date functions',
      'order',
      {
        $apply:
          "compute(year(placed_at) as y,date(placed_at) as day,toupper(status) as s)/filter(y eq 2024 and s ne 'OPEN')/groupby((s,day),aggregate(total with max as top))",
      },
      `SELECT UPPER(status), DATE(placed_at), MAX(total) FROM \`order\`
       WHERE YEAR(placed_at) = 2024 AND UPPER(status) <> 'OPEN'
       GROUP BY UPPER(status), DATE(placed_at) ORDER BY 1, 2`,
      [
        ['s', 'string'],
        ['day', 'string'],
        ['top', 'number'],
      ],
    ],
    [
      'aggregate() alone: one object; sum, average, min, max of DECIMAL, count, countdistinct',
      'order',
      {
        $apply:
          'aggregate(total with sum as sum,total with average as avg,total with min as lo,total with max as hi,$count as n,customer_id with countdistinct as customers)',
      },
      `SELECT SUM(total), AVG(total), MIN(total), MAX(total), COUNT(*), COUNT(DISTINCT customer_id) FROM \`order\``,
      [
        ['sum', 'number'],
        ['avg', 'number'],
        ['lo', 'number'],
        ['hi', 'number'],
        ['n', 'integer'],
        ['customers', 'integer'],
      ],
    ],
    [
      'integers: a sum past 2^53 is a string, an average has MySQL digits, min and max stay integers',
      'order',
      {
        $apply:
          'aggregate(points with sum as points,items with sum as items,items with average as avg,points with max as most,id with min as first)',
      },
      'SELECT SUM(points), SUM(items), AVG(items), MAX(points), MIN(id) FROM `order`',
      [
        ['points', 'integer'],
        ['items', 'integer'],
        ['avg', 'number'],
        ['most', 'integer'],
        ['first', 'integer'],
      ],
    ],
    [
      'dates and times: min and max as strings, fractional seconds as stored',
      'order',
      {
        $apply:
          'aggregate(placed_at with min as first,placed_at with max as last,shipped_on with min as shipped,ship_time with max as latest,status with max as status,note with min as note)',
      },
      `SELECT MIN(placed_at), MAX(placed_at), MIN(shipped_on), MAX(ship_time), MAX(status), MIN(note)
       FROM \`order\``,
      [
        ['first', 'string'],
        ['last', 'string'],
        ['shipped', 'string'],
        ['latest', 'string'],
        ['status', 'string'],
        ['note', 'string'],
      ],
    ],
    [
      'DOUBLE and FLOAT: sums and averages as doubles, min and max of FLOAT as the stored float',
      'product',
      {
        $apply:
          'aggregate(weight with min as lightest,weight with max as heaviest,price with sum as prices)',
      },
      'SELECT MIN(weight), MAX(weight), SUM(price) FROM product',
      [
        ['lightest', 'number'],
        ['heaviest', 'number'],
        ['prices', 'number'],
      ],
    ],
    [
      'countdistinct through a path, sum of a DOUBLE',
      'order',
      {
        $apply:
          'aggregate(customer/country_id with countdistinct as countries,discount with sum as discount)',
      },
      `SELECT COUNT(DISTINCT c.country_id), SUM(o.discount) FROM \`order\` o
       LEFT JOIN customer c ON c.id = o.customer_id`,
      [
        ['countries', 'integer'],
        ['discount', 'number'],
      ],
    ],
    [
      'groupby without aggregate: the distinct values, NULL included',
      'order',
      { $apply: 'groupby((note))' },
      'SELECT DISTINCT note FROM `order` ORDER BY note',
      [['note', 'string']],
    ],
    [
      '$filter filters the rows before grouping, ANDed with filter() steps',
      'order',
      {
        $filter: "status ne 'open'",
        $apply:
          'filter(total gt 1)/filter(customer/vip eq false)/groupby((status),aggregate(total with sum as total))',
      },
      `SELECT o.status, SUM(o.total) FROM \`order\` o LEFT JOIN customer c ON c.id = o.customer_id
       WHERE o.status <> 'open' AND o.total > 1 AND c.vip = 0 GROUP BY o.status ORDER BY o.status`,
      [
        ['status', 'string'],
        ['total', 'number'],
      ],
    ],
    [
      '$orderby an alias descending, then the groups; $top and $skip page the groups',
      'order',
      {
        $apply: 'groupby((customer/name),aggregate(total with sum as spent))',
        $orderby: 'spent desc',
        $top: '2',
        $skip: '1',
      },
      `SELECT c.name, SUM(o.total) FROM \`order\` o LEFT JOIN customer c ON c.id = o.customer_id
       GROUP BY c.name ORDER BY SUM(o.total) DESC, c.name LIMIT 2 OFFSET 1`,
      [
        ['customer/name', 'string'],
        ['spent', 'number'],
      ],
    ],
    [
      '$orderby a path group descending',
      'order_line',
      { $apply: CATEGORY_SALES, $orderby: 'product/category/name desc' },
      `SELECT c.name, SUM(l.amount), SUM(l.qty) FROM order_line l JOIN product p ON p.id = l.product_id
       LEFT JOIN category c ON c.id = p.category_id GROUP BY c.name ORDER BY c.name DESC`,
      [
        ['product/category/name', 'string'],
        ['sales', 'number'],
        ['units', 'integer'],
      ],
    ],
    [
      'empty: no group at all',
      'order',
      { $filter: 'total gt 1000', $apply: 'groupby((status),aggregate($count as n))' },
      'SELECT status, COUNT(*) FROM `order` WHERE total > 1000 GROUP BY status',
      [
        ['status', 'string'],
        ['n', 'integer'],
      ],
    ],
    [
      'empty: aggregate() alone still answers its one object (a count of 0, NULL sums)',
      'order',
      { $apply: 'filter(total gt 1000)/aggregate($count as n,total with sum as total)' },
      'SELECT COUNT(*), SUM(total) FROM `order` WHERE total > 1000',
      [
        ['n', 'integer'],
        ['total', 'number'],
      ],
    ],
    [
      'filter() and compute() alone: the rows, every column then the computed values',
      'customer',
      {
        $apply: 'filter(vip eq true)/compute(tolower(name) as lower,length(name) as len)',
        $orderby: 'lower desc',
      },
      'SELECT id, name, country_id, vip, secret, LOWER(name), CHAR_LENGTH(name) FROM customer WHERE vip = 1 ORDER BY LOWER(name) DESC',
      [
        ['id', 'integer'],
        ['name', 'string'],
        ['country_id', 'string'],
        ['vip', 'integer'],
        ['secret', 'string'],
        ['lower', 'string'],
        ['len', 'integer'],
      ],
    ],
    [
      'a quoted name with a backtick and a quoted alias',
      'review',
      { $apply: 'groupby(("we`ird"),aggregate($count as "n ""x`"))' },
      'SELECT `we``ird`, COUNT(*) FROM review GROUP BY `we``ird` ORDER BY `we``ird`',
      [
        ['we`ird', 'string'],
        ['n "x`', 'integer'],
      ],
    ],
  ])('%s', async (_, table, query, sql, spec) => {
    const answer = await read(gw.url, table, query);
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(await expected(sql, spec));
  });

  test('$count=true counts the groups (X-Total-Count), ignoring $top and $skip', async () => {
    const answer = await read(gw.url, 'order', {
      $apply: 'groupby((customer/country_id),aggregate($count as n))',
      $count: 'true',
      $top: '1',
    });
    expect(answer.status).toBe(200);
    const [[groups]] = (await db.admin.query({
      sql: 'SELECT COUNT(DISTINCT IFNULL(c.country_id, 0)) FROM `order` o LEFT JOIN customer c ON c.id = o.customer_id',
      rowsAsArray: true,
    })) as unknown as [[[string]]];
    expect(answer.headers.get('x-total-count')).toBe(String(groups));
    expect(JSON.parse(answer.text)).toHaveLength(1);
    const one = await read(gw.url, 'order', { $apply: 'aggregate($count as n)', $count: 'true' });
    expect(one.headers.get('x-total-count')).toBe('1');
    const rows = await read(gw.url, 'order', {
      $apply: "filter(status eq 'paid')",
      $count: 'true',
    });
    expect(rows.headers.get('x-total-count')).toBe('3');
    const none = await read(gw.url, 'order', {
      $apply: "filter(status eq 'nope')/groupby((status))",
      $count: 'true',
    });
    expect([none.headers.get('x-total-count'), none.text]).toEqual(['0', '[]']);
  });
});

describe('refusals: exact status, code and message, nothing run', () => {
  test.each<[string, string, Record<string, string>, number, string, string]>([
    [
      'an aggregate of a column of the wrong type',
      'order',
      { $apply: 'aggregate(note with sum as s)' },
      400,
      'APPLY_TYPE',
      "Invalid $apply at position 11: sum takes a number column (an integer, DECIMAL, FLOAT or DOUBLE column) or a function giving a number, and column 'note' (varchar) is not one",
    ],
    [
      'average of a date',
      'order',
      { $apply: 'groupby((status),aggregate(placed_at with average as a))' },
      400,
      'APPLY_TYPE',
      "Invalid $apply at position 28: average takes a number column (an integer, DECIMAL, FLOAT or DOUBLE column) or a function giving a number, and column 'placed_at' (datetime) is not one",
    ],
    [
      'a computed name of text summed',
      'order',
      { $apply: 'compute(tolower(note) as n)/aggregate(n with sum as s)' },
      400,
      'APPLY_TYPE',
      "Invalid $apply at position 39: sum takes a number column (an integer, DECIMAL, FLOAT or DOUBLE column) or a function giving a number, and 'n' (tolower(note)) gives text",
    ],
    [
      'compute() with a function of the wrong type',
      'order',
      { $apply: 'compute(year(note) as y)/groupby((y))' },
      400,
      'APPLY_TYPE',
      "Invalid $apply at position 9: year() takes a DATE, DATETIME or TIMESTAMP column, and column 'note' (varchar) is not one",
    ],
    [
      '$select with $apply',
      'order',
      { $select: 'id', $apply: 'aggregate($count as n)' },
      400,
      'INVALID_QUERY',
      "$select cannot be combined with $apply: the answer's keys are its groupby values and aliases",
    ],
    [
      '$expand with $apply',
      'order',
      { $expand: 'customer', $apply: 'aggregate($count as n)' },
      400,
      'INVALID_QUERY',
      "$expand cannot be combined with $apply: the answer's keys are its groupby values and aliases",
    ],
    [
      'an unknown column',
      'order',
      { $apply: 'groupby((nope))' },
      400,
      'UNKNOWN_COLUMN',
      "Column 'nope' does not exist in table 'order': did you mean 'note'?",
    ],
    [
      'an unknown relation',
      'order',
      { $apply: 'groupby((buyer/name))' },
      400,
      'UNKNOWN_RELATION',
      "Relation 'buyer' does not exist on table 'order'",
    ],
    [
      'a to-many relation in a path',
      'customer',
      { $apply: 'groupby((order/status))' },
      400,
      'INVALID_QUERY',
      "Relation 'order' of table 'customer' leads to many rows: filter them with order/any(x: …) or order/all(x: …), read them with $expand=order",
    ],
    [
      'a grammar error, with its position',
      'order',
      { $apply: 'groupby(status)' },
      400,
      'APPLY_SYNTAX',
      "Invalid $apply at position 9: expected '(' and the values to group by, as in groupby((category)), found 'status'",
    ],
    [
      'a filter() error, positioned in the $apply text',
      'order',
      { $apply: 'filter(total gt)/aggregate($count as n)' },
      400,
      'FILTER_SYNTAX',
      "Invalid $apply at position 16: expected a column or a value, found ')'",
    ],
    [
      'a step after the grouping (no filter of the totals)',
      'order',
      { $apply: 'groupby((status),aggregate($count as n))/filter(n gt 1)' },
      400,
      'APPLY_SYNTAX',
      'Invalid $apply at position 42: groupby(…) must be the last step; filter rows before grouping, with filter(…) or $filter',
    ],
    [
      '$orderby a column that is not grouped',
      'order',
      { $apply: 'groupby((status),aggregate($count as n))', $orderby: 'total' },
      400,
      'INVALID_QUERY',
      "$orderby 'total' is not in the answer of $apply: order by its groupby values and aliases",
    ],
    [
      'the same key twice',
      'order',
      { $apply: 'groupby((status),aggregate($count as status))' },
      400,
      'INVALID_QUERY',
      "Invalid $apply at position 38: the answer would have the key 'status' twice; give one of them another name",
    ],
    [
      'a computed name that is a column',
      'order',
      { $apply: 'compute(year(placed_at) as total)/groupby((total))' },
      400,
      'INVALID_QUERY',
      "Invalid $apply at position 28: 'total' already names a column; give the computed value another name",
    ],
    [
      'an empty $apply',
      'order',
      { $apply: ' ' },
      400,
      'INVALID_QUERY',
      '$apply is empty; e.g. $apply=groupby((category),aggregate($count as n))',
    ],
  ])('%s', async (_, table, query, status, code, message) => {
    const answer = await read(gw.url, table, query);
    expect({ status: answer.status, body: JSON.parse(answer.text) }).toEqual({
      status,
      body: { success: false, message, code },
    });
  });

  test('hostile text never reaches SQL: refused or read as names, the tables intact', async () => {
    for (const apply of [
      'groupby((status);DROP TABLE `order`)',
      'groupby((status),aggregate(total with sum as x) union select 1)',
      'aggregate(total with sum) as x',
      'groupby((`status`))',
      "filter(note eq '') or 1=1 --')/groupby((status))",
      'groupby((status/**/))',
      'aggregate(total with sum as "x`; DROP TABLE `order`; --")',
    ]) {
      const answer = await read(gw.url, 'order', { $apply: apply });
      expect({ apply, status: answer.status }).toEqual({
        apply,
        status: apply.startsWith('aggregate(total with sum as "x') ? 200 : 400,
      });
    }
    const quoted = await read(gw.url, 'order', {
      $apply: 'aggregate(total with sum as "x`; DROP TABLE `order`; --")',
    });
    expect(quoted.text).toBe('[{"x`; DROP TABLE `order`; --":103.45}]');
    const [[count]] = (await db.admin.query({
      sql: 'SELECT COUNT(*) FROM `order`',
      rowsAsArray: true,
    })) as unknown as [[[string]]];
    expect(String(count)).toBe('7');
  });
});

describe('under a policy', () => {
  const PASSWORD = 'totals password 1';
  let dir: string;
  let auth: TestGateway;
  let token: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-apply-'));
    const policy = {
      roles: {
        anonymous: {
          tables: {
            order: {
              read: {
                where: "status ne 'open'",
                columns: ['id', 'customer_id', 'placed_at', 'status', 'total', 'items'],
              },
            },
            customer: {
              read: { where: "country_id ne 'FR'", columns: ['id', 'name', 'country_id'] },
            },
          },
        },
        user: { tables: { order: { read: { where: 'customer_id eq @user.id' } } } },
      },
    };
    const file = path.join(dir, `${randomBytes(4).toString('hex')}-policy.json`);
    await writeFile(file, JSON.stringify(policy));
    auth = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: 'apply-test-secret-0123456789abcdefghijklmnop',
      policyFile: file,
    });
    const email = 'ann@shop.example';
    const register = await fetch(`${auth.url}/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(register.status).toBe(200);
    const login = await fetch(`${auth.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    token = ((await login.json()) as { token: string }).token;
    // Ann is customer 1: give her user id 1.
    await db.admin.query(`UPDATE ${USERS_TABLE} SET id = 1 WHERE email = ?`, [email]);
    const again = await fetch(`${auth.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    token = ((await again.json()) as { token: string }).token;
  });

  afterAll(async () => {
    await auth?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  test("the role's where applies before grouping, at every relation walked", async () => {
    const answer = await read(auth.url, 'order', {
      $apply: 'groupby((customer/name,status),aggregate(total with sum as total,$count as n))',
      $count: 'true',
    });
    expect(answer.status).toBe(200);
    // Bob lives in France: the role may not see him, so his order's group has no name.
    const sql = `SELECT c.name, o.status, SUM(o.total), COUNT(*) FROM \`order\` o
      LEFT JOIN customer c ON c.id = o.customer_id AND c.country_id <> 'FR'
      WHERE o.status <> 'open' GROUP BY c.name, o.status ORDER BY c.name, o.status`;
    const spec: Spec = [
      ['customer/name', 'string'],
      ['status', 'string'],
      ['total', 'number'],
      ['n', 'integer'],
    ];
    expect(answer.text).toBe(await expected(sql, spec));
    expect(answer.headers.get('x-total-count')).toBe(String(JSON.parse(answer.text).length));
    // Without the policy the totals are others.
    const open = await read(gw.url, 'order', {
      $apply: 'groupby((customer/name,status),aggregate(total with sum as total,$count as n))',
    });
    expect(open.text).not.toBe(answer.text);
  });

  test("a signed-in user's where (@user.id) changes the totals", async () => {
    const answer = await read(
      auth.url,
      'order',
      { $apply: 'aggregate($count as n,total with sum as spent,placed_at with max as last)' },
      token,
    );
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(
      await expected(
        'SELECT COUNT(*), SUM(total), MAX(placed_at) FROM `order` WHERE customer_id = 1',
        [
          ['n', 'integer'],
          ['spent', 'number'],
          ['last', 'string'],
        ],
      ),
    );
    expect(answer.text).toBe('[{"n":2,"spent":23.65,"last":"2024-02-10 12:00:00.750"}]');
  });

  test.each<[string, Record<string, string>, string]>([
    ['grouped', { $apply: 'groupby((note))' }, "Column 'note' does not exist in table 'order'"],
    [
      'aggregated',
      { $apply: 'aggregate(discount with sum as d)' },
      "Column 'discount' does not exist in table 'order'",
    ],
    [
      'counted',
      { $apply: 'aggregate(note with countdistinct as d)' },
      "Column 'note' does not exist in table 'order'",
    ],
    [
      'computed',
      { $apply: 'compute(tolower(note) as n)/groupby((n))' },
      "Column 'note' does not exist in table 'order'",
    ],
    [
      'filtered',
      { $apply: "filter(note eq 'gift')/aggregate($count as n)" },
      "Column 'note' does not exist in table 'order'",
    ],
    [
      'ordered',
      { $apply: 'groupby((status))', $orderby: 'note' },
      "Column 'note' does not exist in table 'order'",
    ],
    [
      'through a relation',
      { $apply: 'groupby((customer/secret))' },
      "Column 'secret' does not exist in table 'customer'",
    ],
  ])('a hidden column cannot be %s: 400 as unknown', async (_, query, message) => {
    const answer = await read(auth.url, 'order', query);
    expect({ status: answer.status, body: JSON.parse(answer.text) }).toEqual({
      status: 400,
      body: { success: false, message, code: 'UNKNOWN_COLUMN' },
    });
  });

  test('/openapi.json describes $apply with the columns its aggregates take for the role', async () => {
    const response = await fetch(`${auth.url}/openapi.json`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const doc = (await response.json()) as {
      paths: Record<string, { get?: { parameters?: { name: string; description?: string }[] } }>;
    };
    const apply = doc.paths['/table/order/read']?.get?.parameters?.find((p) => p.name === '$apply');
    expect(apply?.description).toContain(
      'sum and average: id, customer_id, total, items, points, discount; min and max: id, customer_id, placed_at, shipped_on, ship_time, status, total, items, points, discount, note.',
    );
    // Only what the role may read: not the films.
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/table/film'))).toEqual([]);
  });

  test('reading the table is the grant needed: a table the role cannot read is 404', async () => {
    const answer = await read(auth.url, 'film', { $apply: 'aggregate($count as n)' }, token);
    expect({ status: answer.status, body: JSON.parse(answer.text) }).toEqual({
      status: 404,
      body: { success: false, message: "Table 'film' does not exist", code: 'UNKNOWN_TABLE' },
    });
  });
});
