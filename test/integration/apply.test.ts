/**
 * Totals (`$apply`, README "Totals") against the real gateway on MariaDB: every answer is
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
  stars DECIMAL(3,1) NULL, FOREIGN KEY (film_id) REFERENCES film (id));
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
  (2, 1, '2024-02-10 12:00:00.000', NULL, NULL, 'open', 4.25, 1, 5, NULL, 'gift'),
  (3, 2, '2023-12-31 23:59:59.999', '2024-01-02', '17:45:10', 'paid', 33.80, 4, 2, 1.25, NULL),
  (4, 3, '2024-02-29 08:00:00.000', '2024-03-01', '08:00:00', 'sent', 12.90, 1, 1, NULL, NULL),
  (5, NULL, '2024-03-15 15:30:00.100', NULL, NULL, 'open', 8.00, 1, 0, 2.5, 'walk-in'),
  (6, 5, '2024-03-16 09:00:00.000', '2024-03-17', '11:00:00', 'paid', 0.10, 2, 9007199254740990, 0.1, NULL),
  (7, 4, '2024-03-20 18:00:00.000', NULL, NULL, 'paid', 25.00, 1, 3, NULL, NULL);
INSERT INTO order_line VALUES (1, 1, 1, 2, 13.00), (2, 1, 4, 1, 6.40), (3, 2, 2, 1, 4.25),
  (4, 3, 3, 2, 25.80), (5, 3, 4, 1, 8.00), (6, 4, 3, 1, 12.90), (7, 5, 4, 1, 8.00),
  (8, 6, 1, 1, 0.05), (9, 6, 2, 1, 0.05), (10, 7, 5, 1, 25.00);
INSERT INTO film VALUES (1, 'Alien'), (2, 'Brazil'), (3, 'Casablanca');
INSERT INTO review VALUES (1, 1, 5, 4.5), (2, 1, 4, 4.0), (3, 1, 4, NULL), (4, 2, 3, 3.5),
  (5, 2, 2, 2.5);
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

describe('totals match hand-written SQL', () => {
  test.each<[string, string, Record<string, string>, string, Spec]>([
    [
      'sales per category: a path two relations deep, nested objects',
      'order_line',
      { $apply: 'groupby((product/category/name),aggregate(amount with sum as sales,qty with sum as units))' },
      `SELECT c.name, SUM(l.amount), SUM(l.qty) FROM order_line l JOIN product p ON p.id = l.product_id
       LEFT JOIN category c ON c.id = p.category_id GROUP BY c.name ORDER BY c.name`,
      [
        ['product/category/name', 'string'],
        ['sales', 'number'],
        ['units', 'integer'],
      ],
    ],
  ])('%s', async (_, table, query, sql, spec) => {
    const answer = await read(gw.url, table, query);
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(await expected(sql, spec));
  });
});
