/**
 * The bench database: `tablegate_bench.items` with 100,000 deterministic rows built in one
 * INSERT … SELECT over MariaDB's sequence engine (`seq_1_to_100000`), recreated every run so
 * writes never accumulate; and the bench user, who sees only that database.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';

export const BENCH_DB = 'tablegate_bench';
export const BENCH_USER = 'tablegate_bench_user';
export const ROW_COUNT = 100_000;
export const CATEGORIES = ['books', 'games', 'music', 'garden', 'tools', 'toys', 'food', 'sports'];
export const COLUMNS = ['id', 'name', 'category', 'price', 'qty', 'created_at'];

/** Where MySQL is and how the bench logs in as an administrator (env overrides). */
export function adminConfig(env = process.env) {
  return {
    host: env.BENCH_DB_HOST ?? '127.0.0.1',
    port: Number(env.BENCH_DB_PORT ?? 3306),
    user: env.BENCH_DB_USER ?? 'root',
    password: env.BENCH_DB_PASSWORD ?? '',
  };
}

// The user is created for both names a loopback client can be matched as.
const USER_HOSTS = ['127.0.0.1', 'localhost', '::1'];

/** An administrator connection that reads values the way the gateways' pools do (exact text). */
export function connectAdmin(config) {
  return mysql.createConnection({
    ...config,
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    decimalNumbers: false,
    timezone: 'Z',
    multipleStatements: false,
  });
}

/**
 * Drops and recreates the database with its 100,000 rows. Every column is a pure function of
 * the row number, so a row can be checked by its id alone.
 */
export async function createBenchDatabase(admin) {
  await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DB}`);
  await admin.query(`CREATE DATABASE ${BENCH_DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.query(`CREATE TABLE ${BENCH_DB}.items (
      id INT AUTO_INCREMENT PRIMARY KEY,
      name VARCHAR(64),
      category VARCHAR(32),
      price DECIMAL(10,2),
      qty INT,
      created_at DATETIME,
      KEY items_category (category)
    ) ENGINE=InnoDB`);
  const categories = CATEGORIES.map((c) => `'${c}'`).join(', ');
  // seq_1_to_N is a table of the Sequence engine, resolved in the current database.
  await admin.query(`USE ${BENCH_DB}`);
  await admin.query(`INSERT INTO items (id, name, category, price, qty, created_at)
    SELECT seq,
           CONCAT('item-', LPAD(seq, 6, '0')),
           ELT(1 + seq % ${CATEGORIES.length}, ${categories}),
           (seq * 7919 % 100000) / 100,
           seq * 31 % 1000,
           TIMESTAMP'2024-01-01 00:00:00' + INTERVAL seq * 37 MINUTE
      FROM seq_1_to_${ROW_COUNT}`);
  await admin.query('ANALYZE TABLE items');
}

/** Creates the bench user with a fresh random password, allowed on the bench database only. */
export async function createBenchUser(admin) {
  const password = randomBytes(18).toString('base64url');
  await dropBenchUser(admin);
  for (const host of USER_HOSTS) {
    await admin.query('CREATE USER ?@? IDENTIFIED BY ?', [BENCH_USER, host, password]);
    await admin.query(`GRANT ALL ON ${BENCH_DB}.* TO ?@?`, [BENCH_USER, host]);
  }
  return { user: BENCH_USER, password };
}

export async function dropBenchUser(admin) {
  for (const host of USER_HOSTS) {
    await admin.query('DROP USER IF EXISTS ?@?', [BENCH_USER, host]);
  }
}

/** Rows as the database holds them, for comparing with what a server answered. */
export async function selectRows(admin, sql, params = []) {
  const [rows] = await admin.query(sql, params);
  return rows;
}

export async function serverVersion(admin) {
  const [rows] = await admin.query('SELECT VERSION() AS v');
  return String(rows[0].v);
}

export const ORDER_COUNT = 100_000;
export const CUSTOMER_COUNT = 10_000;

/**
 * Scenario (i): `customers` (10,000), `orders` (100,000, each of one customer) and
 * `order_items` (1 to 5 per order, keyed by order and line, each naming an item), with the
 * foreign keys that make them relations: orders.customer, orders.order_items (docs/relations.md).
 * Every value is a function of the row numbers, as for `items`. Made only when (i) runs.
 */
export async function createOrderTables(admin) {
  await admin.query(`USE ${BENCH_DB}`);
  await admin.query(`CREATE TABLE customers (
      id INT PRIMARY KEY,
      name VARCHAR(64) NOT NULL,
      email VARCHAR(100) NOT NULL,
      country VARCHAR(2) NOT NULL,
      created_at DATETIME NOT NULL
    ) ENGINE=InnoDB`);
  await admin.query(`CREATE TABLE orders (
      id INT PRIMARY KEY,
      customer_id INT NOT NULL,
      placed DATETIME NOT NULL,
      status VARCHAR(16) NOT NULL,
      total DECIMAL(10,2) NOT NULL,
      FOREIGN KEY (customer_id) REFERENCES customers (id)
    ) ENGINE=InnoDB`);
  await admin.query(`CREATE TABLE order_items (
      order_id INT NOT NULL,
      line INT NOT NULL,
      item_id INT NOT NULL,
      qty INT NOT NULL,
      price DECIMAL(10,2) NOT NULL,
      PRIMARY KEY (order_id, line),
      FOREIGN KEY (order_id) REFERENCES orders (id),
      FOREIGN KEY (item_id) REFERENCES items (id)
    ) ENGINE=InnoDB`);
  // The keys hold by construction; checking them row by row would only slow the load.
  await admin.query('SET foreign_key_checks = 0');
  await admin.query(`INSERT INTO customers
    SELECT seq, CONCAT('customer-', LPAD(seq, 5, '0')), CONCAT('c', seq, '@example.com'),
           ELT(1 + seq % 5, 'FR', 'JP', 'DE', 'US', 'BR'),
           TIMESTAMP'2023-01-01 00:00:00' + INTERVAL seq * 53 MINUTE
      FROM seq_1_to_${CUSTOMER_COUNT}`);
  await admin.query(`INSERT INTO orders
    SELECT seq, 1 + seq * 7919 % ${CUSTOMER_COUNT},
           TIMESTAMP'2024-01-01 00:00:00' + INTERVAL seq * 5 MINUTE,
           ELT(1 + seq % 4, 'new', 'paid', 'shipped', 'closed'), (seq * 131 % 100000) / 100
      FROM seq_1_to_${ORDER_COUNT}`);
  await admin.query(`INSERT INTO order_items
    SELECT o.seq, l.seq, 1 + (o.seq * 31 + l.seq * 7) % ${ROW_COUNT}, 1 + (o.seq + l.seq) % 9,
           (o.seq * 17 + l.seq) % 10000 / 100
      FROM seq_1_to_${ORDER_COUNT} AS o JOIN seq_1_to_5 AS l ON l.seq <= 1 + o.seq % 5`);
  await admin.query('SET foreign_key_checks = 1');
  await admin.query('ANALYZE TABLE customers, orders, order_items');
}
