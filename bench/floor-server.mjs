/**
 * The floor: the least work any Node gateway can do for the bench's requests. Plain node:http,
 * the same mysql2 pool settings as tablegate (src/db/pool.ts), hand-written SQL for the exact
 * request shapes the scenarios send, and JSON.stringify of what mysql2 returns. No validation, no
 * schema, no streaming. Configured by environment (FLOOR_*); prints one line when listening.
 * With FLOOR_JWT_SECRET (scenario (h)) every request but /health must carry a valid, unexpired
 * HS256 `Authorization: Bearer` token: one HMAC and one JSON.parse, the least a token check is.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import mysql from 'mysql2';
import { TOTALS_APPLY, TOTALS_SQL } from './lib/scenarios.mjs';

const env = process.env;
const poolSize = Number(env.FLOOR_POOL_SIZE ?? 10);
const uploadsDir = env.FLOOR_UPLOADS_DIR ?? process.cwd();

// The options of tablegate's poolOptions() and the session it sets on every new connection.
const pool = mysql.createPool({
  host: env.FLOOR_DB_HOST ?? '127.0.0.1',
  port: Number(env.FLOOR_DB_PORT ?? 3306),
  user: env.FLOOR_DB_USER ?? 'root',
  password: env.FLOOR_DB_PASSWORD ?? '',
  database: env.FLOOR_DB_NAME ?? 'tablegate_bench',
  connectionLimit: poolSize,
  maxIdle: poolSize,
  waitForConnections: true,
  connectTimeout: 5000,
  enableKeepAlive: true,
  charset: 'utf8mb4_unicode_ci',
  timezone: 'Z',
  dateStrings: true,
  supportBigNumbers: true,
  bigNumberStrings: true,
  decimalNumbers: false,
  jsonStrings: true,
  multipleStatements: false,
});
pool.on('connection', (connection) => {
  connection.query(
    "SET time_zone = '+00:00', sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE," +
      "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION', NAMES utf8mb4",
  );
});

const JSON_TYPE = 'application/json; charset=utf-8';
const BODY_LIMIT = 1024 * 1024;

function send(res, status, text) {
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function fail(res, status, message) {
  send(res, status, JSON.stringify({ success: false, message }));
}

function run(res, sql, params, answer) {
  pool.execute(sql, params, (error, result) => {
    if (error) fail(res, 500, 'Database error');
    else send(res, 200, JSON.stringify(answer(result)));
  });
}

const rows = (result) => result;

function query(sql, params) {
  return new Promise((resolve, reject) => {
    pool.execute(sql, params, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/**
 * Scenario (i) as a hand-written client would do it: the page of orders, then its customers by
 * id and its items by order id (both at once), assembled into the JSON tablegate's
 * `$expand=customer,order_items` gives: each order's columns, then `customer` (the row or null),
 * then `order_items` (ordered by order and line, [] when none).
 */
async function ordersWithRelated(res, top, skip) {
  try {
    const orders = await query('SELECT * FROM orders ORDER BY id LIMIT ? OFFSET ?', [top, skip]);
    if (orders.length === 0) return send(res, 200, '[]');
    const customerIds = [...new Set(orders.map((o) => o.customer_id))];
    const orderIds = orders.map((o) => o.id);
    const marks = (list) => list.map(() => '?').join(',');
    const [customers, items] = await Promise.all([
      query(`SELECT * FROM customers WHERE id IN (${marks(customerIds)})`, customerIds),
      query(
        `SELECT * FROM order_items WHERE order_id IN (${marks(orderIds)}) ORDER BY order_id, line`,
        orderIds,
      ),
    ]);
    const byId = new Map(customers.map((c) => [c.id, c]));
    const itemsOf = new Map();
    for (const item of items) {
      const list = itemsOf.get(item.order_id);
      if (list === undefined) itemsOf.set(item.order_id, [item]);
      else list.push(item);
    }
    for (const order of orders) {
      order.customer = byId.get(order.customer_id) ?? null;
      order.order_items = itemsOf.get(order.id) ?? [];
    }
    send(res, 200, JSON.stringify(orders));
  } catch {
    fail(res, 500, 'Database error');
  }
}

// The read shapes the scenarios send, and nothing else.
const BY_ID = /^id eq (\d+)$/;
const CATEGORY_AND_PRICE = /^category eq '([a-z]+)' and price ge (\d+) and price le (\d+)$/;

function read(res, query) {
  const q = new URLSearchParams(query);
  const keys = [...q.keys()].sort().join(',');
  const byId = keys === '$filter' ? BY_ID.exec(q.get('$filter')) : null;
  const byCategory =
    keys === '$filter,$orderby,$top' && q.get('$orderby') === 'id'
      ? CATEGORY_AND_PRICE.exec(q.get('$filter'))
      : null;
  if (keys === '') {
    run(res, 'SELECT * FROM items', [], rows);
  } else if (byId) {
    run(res, 'SELECT * FROM items WHERE id = ?', [byId[1]], rows);
  } else if (keys === '$orderby,$skip,$top' && q.get('$orderby') === 'id') {
    run(
      res,
      'SELECT * FROM items ORDER BY id LIMIT ? OFFSET ?',
      [q.get('$top'), q.get('$skip')],
      rows,
    );
  } else if (keys === '$apply' && q.get('$apply') === TOTALS_APPLY) {
    // Scenario (j): tablegate's own SQL, its rows named as the aliases.
    pool.execute({ sql: TOTALS_SQL, rowsAsArray: true }, [], (error, result) => {
      if (error) fail(res, 500, 'Database error');
      else {
        const groups = result.map(([category, total, avgQty]) => ({
          category,
          total,
          avg_qty: avgQty,
        }));
        send(res, 200, JSON.stringify(groups));
      }
    });
  } else if (byCategory) {
    run(
      res,
      'SELECT * FROM items WHERE category = ? AND price >= ? AND price <= ? ORDER BY id LIMIT ?',
      [byCategory[1], byCategory[2], byCategory[3], q.get('$top')],
      rows,
    );
  } else {
    fail(res, 400, 'The floor server does not know this query');
  }
}

function readBody(req, res, then) {
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size <= BODY_LIMIT) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > BODY_LIMIT) return fail(res, 413, 'Body too large');
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return fail(res, 400, 'Body is not JSON');
    }
    then(body);
  });
}

function create(req, res) {
  readBody(req, res, (row) => {
    run(
      res,
      'INSERT INTO items (name, category, price, qty, created_at) VALUES (?, ?, ?, ?, ?)',
      [row.name, row.category, row.price, row.qty, row.created_at].map((v) => v ?? null),
      (result) => ({
        success: true,
        message: 'Data inserted successfully',
        insertId: result.insertId,
        affectedRows: result.affectedRows,
      }),
    );
  });
}

function update(req, res, id) {
  readBody(req, res, (row) => {
    run(res, 'UPDATE items SET qty = ? WHERE id = ?', [row.qty ?? null, id], (result) => ({
      success: true,
      message: 'Data updated successfully',
      affectedRows: result.affectedRows,
    }));
  });
}

/** The raw request body to a new file: less than any multipart parser can do. */
async function upload(req, res) {
  const file = path.join(uploadsDir, `${randomUUID()}.bin`);
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
  });
  try {
    await pipeline(req, createWriteStream(file));
    send(res, 200, JSON.stringify({ success: true, data: [{ path: file, size }] }));
  } catch {
    if (!res.headersSent) fail(res, 500, 'Upload failed');
  }
}

const UPDATE_PATH = /^\/table\/items\/update\(id,(\d+)\)$/;

const jwtKey = env.FLOOR_JWT_SECRET ? Buffer.from(env.FLOOR_JWT_SECRET, 'utf8') : null;
const BEARER = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/;

/** An HS256 JWT signed with FLOOR_JWT_SECRET whose `exp` has not passed. */
function validToken(header) {
  const parts = header ? BEARER.exec(header) : null;
  if (!parts) return false;
  const signature = Buffer.from(parts[3], 'base64url');
  const expected = createHmac('sha256', jwtKey).update(`${parts[1]}.${parts[2]}`).digest();
  if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) return false;
  try {
    const claims = JSON.parse(Buffer.from(parts[2], 'base64url').toString('utf8'));
    return typeof claims.exp === 'number' && claims.exp * 1000 > Date.now();
  } catch {
    return false;
  }
}

function ordersRead(res, query) {
  const q = new URLSearchParams(query);
  const keys = [...q.keys()].sort().join(',');
  if (
    keys === '$expand,$orderby,$skip,$top' &&
    q.get('$orderby') === 'id' &&
    q.get('$expand') === 'customer,order_items'
  ) {
    ordersWithRelated(res, q.get('$top'), q.get('$skip'));
  } else {
    fail(res, 400, 'The floor server does not know this query');
  }
}

const server = http.createServer((req, res) => {
  const mark = req.url.indexOf('?');
  const pathname = mark === -1 ? req.url : req.url.slice(0, mark);
  const query = mark === -1 ? '' : req.url.slice(mark + 1);
  if (jwtKey && pathname !== '/health' && !validToken(req.headers.authorization)) {
    fail(res, 401, 'Access Denied');
    return;
  }
  const updateKey = req.method === 'PUT' ? UPDATE_PATH.exec(pathname) : null;
  if (req.method === 'GET' && pathname === '/table/items/read') read(res, query);
  else if (req.method === 'GET' && pathname === '/table/orders/read') ordersRead(res, query);
  else if (req.method === 'POST' && pathname === '/table/items/create') create(req, res);
  else if (updateKey) update(req, res, updateKey[1]);
  else if (req.method === 'POST' && pathname === '/upload') upload(req, res);
  else if (req.method === 'GET' && pathname === '/health') send(res, 200, '{"status":"ok"}');
  else fail(res, 404, 'Not found');
});
server.keepAliveTimeout = 72_000;

server.listen(Number(env.FLOOR_PORT ?? 3999), env.FLOOR_HOST ?? '127.0.0.1', () => {
  process.stdout.write(`floor listening on ${JSON.stringify(server.address())}\n`);
});

function stop() {
  server.close();
  server.closeAllConnections();
  pool.end(() => process.exit(0));
}
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
