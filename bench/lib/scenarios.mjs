/**
 * The scenarios, each as the equivalent request of every server's URL dialect, and the check
 * that one answer of each server holds exactly the expected rows (compared with what the
 * database holds, values normalised: DECIMAL as two-decimal text, DATETIME as
 * `YYYY-MM-DD HH:MM:SS`, whatever JSON type a server chose for them).
 */
import {
  BENCH_DB,
  CATEGORIES,
  COLUMNS,
  createOrderTables,
  ORDER_COUNT,
  ROW_COUNT,
  selectRows,
} from './database.mjs';

export const PAGE = 50;
/** Scenario (j): totals per category over every row, two aggregates (docs/totals.md). */
export const TOTALS_APPLY =
  'groupby((category),aggregate(price with sum as total,qty with average as avg_qty))';
/** The SQL tablegate compiles TOTALS_APPLY to, which the floor runs as it is. */
export const TOTALS_SQL =
  'SELECT `category`, SUM(`price`), AVG(`qty`) FROM `items` GROUP BY `category` ORDER BY `category` ASC';
// A new object per request: autocannon writes Content-Length into the headers object it is given.
const jsonHeaders = () => ({ 'content-type': 'application/json' });

/** A small seeded PRNG (mulberry32), so that every server gets the same sequence of requests. */
export function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (random, n) => Math.floor(random() * n);

/**
 * URL dialects. tablegate and the floor take the same requests (docs/reading.md); xmysql and its
 * fork mysql-rest take `/api/<table>/:id`, `_where=(col,op,value)~and(…)`, `_sort`, `_size`
 * and a zero-based page `_p` (offset = _p × _size), per xmysql's README.
 */
function odata() {
  return {
    byId: (id) => ({ method: 'GET', path: `/table/items/read?$filter=id%20eq%20${id}` }),
    page: (skip) => ({
      method: 'GET',
      path: `/table/items/read?$orderby=id&$top=${PAGE}&$skip=${skip}`,
    }),
    filter: (category, low, high) => ({
      method: 'GET',
      path:
        `/table/items/read?$filter=category%20eq%20%27${category}%27%20and%20price%20ge%20${low}` +
        `%20and%20price%20le%20${high}&$orderby=id&$top=${PAGE}`,
    }),
    all: () => ({ method: 'GET', path: '/table/items/read' }),
    /** (a) as an agent asks it: MCP's tools/call of read_rows over POST /mcp (docs/mcp.md). */
    mcpById: (id) => ({
      method: 'POST',
      path: '/mcp',
      headers: { ...jsonHeaders(), accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'read_rows', arguments: { table: 'items', filter: `id eq ${id}` } },
      }),
    }),
    mcpRowsOf: (body) => JSON.parse(body?.result?.content?.[0]?.text ?? 'null')?.rows,
    totals: () => ({
      method: 'GET',
      path: `/table/items/read?$apply=${encodeURIComponent(TOTALS_APPLY)}`,
    }),
    ordersPage: (skip) => ({
      method: 'GET',
      path: `/table/orders/read?$orderby=id&$top=${PAGE}&$skip=${skip}&$expand=customer,order_items`,
    }),
    allOrders: () => ({
      method: 'GET',
      path: '/table/orders/read?$orderby=id&$expand=customer,order_items',
    }),
    create: (row) => ({
      method: 'POST',
      path: '/table/items/create',
      headers: jsonHeaders(),
      body: JSON.stringify(row),
    }),
    update: (id, qty) => ({
      method: 'PUT',
      path: `/table/items/update(id,${id})`,
      headers: jsonHeaders(),
      body: JSON.stringify({ qty }),
    }),
    upload: { path: '/upload', field: 'files' },
    rowsOf: (body) => body,
    createdId: (body) =>
      body?.success === true && body.affectedRows === 1 ? Number(body.insertId) : null,
    updated: (body) => body?.success === true && body.affectedRows === 1,
    /** Stored path and size from an upload answer. */
    stored: (text) => {
      const record = JSON.parse(text)?.data?.[0];
      return { path: record?.path, size: record?.size };
    },
  };
}

function xmysqlStyle(prefix, { bigReadLimit, envelope }) {
  return {
    ordersPage: null,
    allOrders: null,
    byId: (id) => ({ method: 'GET', path: `${prefix}/${id}` }),
    page: (skip) => ({
      method: 'GET',
      path: `${prefix}?_sort=id&_size=${PAGE}&_p=${skip / PAGE}`,
    }),
    filter: (category, low, high) => ({
      method: 'GET',
      path:
        `${prefix}?_where=(category,eq,${category})~and(price,gte,${low})~and(price,lte,${high})` +
        `&_sort=id&_size=${PAGE}`,
    }),
    all: null,
    allUnsupported: `its list answers at most ${bigReadLimit} rows (_size is capped)`,
    create: (row) => ({
      method: 'POST',
      path: prefix,
      headers: jsonHeaders(),
      body: JSON.stringify(row),
    }),
    update: (id, qty) => ({
      method: 'PATCH',
      path: `${prefix}/${id}`,
      headers: jsonHeaders(),
      body: JSON.stringify({ qty }),
    }),
    upload: { path: '/uploads', field: 'files' },
    // mysql-rest wraps a list (not a read by key) in { results, total, page, size }.
    rowsOf: envelope ? (body) => (Array.isArray(body) ? body : body?.results) : (body) => body,
    createdId: (body) => (body?.affectedRows === 1 ? Number(body.insertId) : null),
    updated: (body) => body?.affectedRows === 1,
    // The answer is the stored file's path as plain text.
    stored: (text) => ({ path: text.trim(), size: undefined }),
  };
}

/**
 * The OData dialect with `Authorization: Bearer <token>` on every request (scenario (h); the
 * servers of auth mode carry it as their `dialect`, servers.mjs).
 */
export function authDialect(token) {
  const base = odata();
  const signed =
    (make) =>
    (...args) => {
      const request = make(...args);
      return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } };
    };
  return {
    ...base,
    ordersPage: signed(base.ordersPage),
    allOrders: signed(base.allOrders),
    byId: signed(base.byId),
    page: signed(base.page),
    filter: signed(base.filter),
    all: signed(base.all),
    create: signed(base.create),
    update: signed(base.update),
  };
}

export const DIALECTS = {
  tablegate: odata(),
  // The same gateway under a --policy (servers.mjs): the same requests and answers.
  'tablegate-policy': odata(),
  // The floor stores the raw request body, multipart framing included.
  floor: { ...odata(), rawUpload: true },
  xmysql: xmysqlStyle('/api/items', { bigReadLimit: 100, envelope: false }),
  // mysql-rest serves every schema the user sees, as /api/<schema>.<table>; its list answers
  // { results, total, page, size } and runs a COUNT(*) for `total` on every list request.
  'mysql-rest': xmysqlStyle(`/api/${BENCH_DB}.items`, { bigReadLimit: 10_000, envelope: true }),
};

// ---- value normalisation and row comparison ----

function pad(n) {
  return String(n).padStart(2, '0');
}

function canonicalDate(value) {
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(value)) return value;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  // Drivers without dateStrings read DATETIME as local time and JSON prints it as UTC ISO.
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}

function canonical(row) {
  return JSON.stringify([
    Number(row.id),
    String(row.name),
    String(row.category),
    Number(row.price).toFixed(2),
    Number(row.qty),
    canonicalDate(row.created_at),
  ]);
}

const SORTED_COLUMNS = [...COLUMNS].sort().join(',');

/** null when `actual` holds exactly the `expected` rows in order, else what differs. */
export function compareRows(actual, expected) {
  if (!Array.isArray(actual)) return `expected a JSON array of rows, got ${typeof actual}`;
  if (actual.length !== expected.length) {
    return `expected ${expected.length} rows, got ${actual.length}`;
  }
  for (let i = 0; i < expected.length; i++) {
    const row = actual[i];
    if (row === null || typeof row !== 'object') return `row ${i} is not an object`;
    if (Object.keys(row).sort().join(',') !== SORTED_COLUMNS) {
      return `row ${i} has keys ${Object.keys(row).join(',')}`;
    }
    const got = canonical(row);
    const want = canonical(expected[i]);
    if (got !== want) return `row ${i}: got ${got}, expected ${want}`;
  }
  return null;
}

/** An order with its customer and items, values normalised as `canonical` does (scenario i). */
function canonicalOrder(order) {
  if (order === null || typeof order !== 'object') return 'not an object';
  const customer = order.customer;
  const items = order.order_items;
  return JSON.stringify({
    keys: Object.keys(order).join(','),
    order: [
      Number(order.id),
      Number(order.customer_id),
      canonicalDate(order.placed),
      String(order.status),
      Number(order.total).toFixed(2),
    ],
    customer:
      customer === null || typeof customer !== 'object'
        ? customer
        : [
            Object.keys(customer).join(','),
            Number(customer.id),
            String(customer.name),
            String(customer.email),
            String(customer.country),
            canonicalDate(customer.created_at),
          ],
    items: Array.isArray(items)
      ? items.map((item) => [
          Object.keys(item).join(','),
          Number(item.order_id),
          Number(item.line),
          Number(item.item_id),
          Number(item.qty),
          Number(item.price).toFixed(2),
        ])
      : items,
  });
}

/** The orders of `ids`' range as the database holds them, each with its customer and items. */
async function expectedOrders(admin, where, params) {
  const orders = await selectRows(
    admin,
    `SELECT * FROM ${BENCH_DB}.orders WHERE ${where} ORDER BY id`,
    params,
  );
  if (orders.length === 0) return [];
  const ids = orders.map((o) => o.id);
  const customers = await selectRows(admin, `SELECT * FROM ${BENCH_DB}.customers WHERE id IN (?)`, [
    [...new Set(orders.map((o) => o.customer_id))],
  ]);
  const items = await selectRows(
    admin,
    `SELECT * FROM ${BENCH_DB}.order_items WHERE order_id BETWEEN ? AND ? ORDER BY order_id, line`,
    [ids[0], ids.at(-1)],
  );
  const byCustomer = new Map(customers.map((c) => [c.id, c]));
  const byOrder = new Map();
  for (const item of items) {
    if (!byOrder.has(item.order_id)) byOrder.set(item.order_id, []);
    byOrder.get(item.order_id).push(item);
  }
  return orders.map((o) => ({
    ...o,
    customer: byCustomer.get(o.customer_id) ?? null,
    order_items: byOrder.get(o.id) ?? [],
  }));
}

/** null when `actual` holds exactly the `expected` orders (customers, items, key order), else what differs. */
export function compareOrders(actual, expected) {
  if (!Array.isArray(actual)) return `expected a JSON array of orders, got ${typeof actual}`;
  if (actual.length !== expected.length) {
    return `expected ${expected.length} orders, got ${actual.length}`;
  }
  for (let i = 0; i < expected.length; i++) {
    const got = canonicalOrder(actual[i]);
    const want = canonicalOrder(expected[i]);
    if (got !== want) return `order ${i}: got ${got.slice(0, 300)}, expected ${want.slice(0, 300)}`;
  }
  return null;
}

// ---- one checked request ----

async function call(base, request) {
  const response = await fetch(base + request.path, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  });
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, text, body };
}

function httpFailure(answer) {
  if (answer.status === 404) return { ok: false, notAvailable: true, reason: '404' };
  return { ok: false, reason: `status ${answer.status}: ${answer.text.slice(0, 160)}` };
}

async function checkRead(base, request, rowsOf, expected) {
  const answer = await call(base, request);
  if (answer.status !== 200) return httpFailure(answer);
  const problem = compareRows(rowsOf(answer.body), expected);
  return problem ? { ok: false, reason: problem } : { ok: true };
}

const FILTER_CHECK = { category: 'books', low: 100, high: 500 };
// Pages 1 to 20 at random: deeper OFFSETs make the database, not the gateway, the bottleneck.
const PAGES = 20;
const PAGE_CHECK_SKIP = 7 * PAGE;
const ID_CHECK = 4242;
const UPDATE_CHECK_QTY = 424_242;

function newRow(random, name) {
  return {
    name,
    category: CATEGORIES[pick(random, CATEGORIES.length)],
    price: Math.round(random() * 100_000) / 100,
    qty: pick(random, 1000),
    created_at: '2025-06-01 12:00:00',
  };
}

/** Row ID_CHECK, asked for as `request` builds it and read from the answer by `rowsOf`. */
async function checkRowById(base, admin, request, rowsOf) {
  const expected = await selectRows(admin, `SELECT * FROM ${BENCH_DB}.items WHERE id = ?`, [
    ID_CHECK,
  ]);
  return checkRead(base, request(ID_CHECK), rowsOf, expected);
}

/**
 * Scenarios (a*) and (b*) of the server cache (bench/cache.mjs, bench/cache-ab.mjs): (a) over a
 * hot set of `hot` ids, and (b) as it is (its 20 pages are already hot). Load scenarios as below.
 */
export function hotScenarios(hot) {
  return [
    {
      id: 'a*',
      title: `one row by id, hot (${hot} ids)`,
      kind: 'load',
      request: (d, random) => d.byId(1 + pick(random, hot)),
    },
    {
      id: 'b*',
      title: `page of ${PAGE} ordered by id, one of the first ${PAGES} pages, hot`,
      kind: 'load',
      request: (d, random) => d.page(PAGE * pick(random, PAGES)),
    },
  ];
}

/**
 * The scenarios. A `load` scenario has `request(dialect, random)` (one request of the load,
 * randomised) and `check(dialect, base, admin)`; `big` and `upload` are measured differently
 * (see run.mjs).
 */
export const SCENARIOS = [
  {
    id: 'a',
    title: 'one row by primary key',
    kind: 'load',
    request: (d, random) => d.byId(1 + pick(random, ROW_COUNT)),
    check: (d, base, admin) => checkRowById(base, admin, d.byId, d.rowsOf),
  },
  {
    id: 'b',
    title: `page of ${PAGE} rows ordered by id, one of the first ${PAGES} pages`,
    kind: 'load',
    request: (d, random) => d.page(PAGE * pick(random, PAGES)),
    check: async (d, base, admin) =>
      checkRead(
        base,
        d.page(PAGE_CHECK_SKIP),
        d.rowsOf,
        await selectRows(admin, `SELECT * FROM ${BENCH_DB}.items ORDER BY id LIMIT ? OFFSET ?`, [
          PAGE,
          PAGE_CHECK_SKIP,
        ]),
      ),
  },
  {
    id: 'c',
    title: `filter: category (indexed) and price range, ${PAGE} rows`,
    kind: 'load',
    request: (d, random) => {
      const low = 100 * pick(random, 5);
      return d.filter(CATEGORIES[pick(random, CATEGORIES.length)], low, low + 400);
    },
    check: async (d, base, admin) =>
      checkRead(
        base,
        d.filter(FILTER_CHECK.category, FILTER_CHECK.low, FILTER_CHECK.high),
        d.rowsOf,
        await selectRows(
          admin,
          `SELECT * FROM ${BENCH_DB}.items WHERE category = ? AND price BETWEEN ? AND ? ORDER BY id LIMIT ?`,
          [FILTER_CHECK.category, FILTER_CHECK.low, FILTER_CHECK.high, PAGE],
        ),
      ),
  },
  {
    id: 'd',
    title: `${ROW_COUNT.toLocaleString('en')} rows in one response`,
    kind: 'big',
    unsupported: (d) => (d.all ? null : d.allUnsupported),
    request: (d) => d.all(),
    /** Checks a whole answer (already read): every row, in id order, spot-checked against the database. */
    checkBody: async (d, text, admin) => {
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        return { ok: false, reason: 'the answer is not complete JSON' };
      }
      const rows = d.rowsOf(body);
      const [{ n }] = await selectRows(admin, `SELECT COUNT(*) AS n FROM ${BENCH_DB}.items`);
      if (!Array.isArray(rows) || rows.length !== Number(n)) {
        return { ok: false, reason: `expected ${n} rows, got ${rows?.length}` };
      }
      for (let i = 1; i < rows.length; i++) {
        if (!(Number(rows[i].id) > Number(rows[i - 1].id))) {
          return { ok: false, reason: `rows not in id order at ${i}` };
        }
      }
      const sample = [0, Math.floor(rows.length / 2), rows.length - 1].map((i) => rows[i]);
      const expected = await selectRows(
        admin,
        `SELECT * FROM ${BENCH_DB}.items WHERE id IN (?) ORDER BY id`,
        [sample.map((r) => Number(r.id))],
      );
      const problem = compareRows(sample, expected);
      return problem ? { ok: false, reason: problem } : { ok: true };
    },
  },
  {
    id: 'j',
    title: 'totals: group by category over 100,000 rows, a sum and an average',
    kind: 'load',
    // xmysql's group-by counts only; the floor runs the very SQL tablegate compiles. Before the
    // write scenarios: after them the table held as many more rows as each server had created,
    // and InnoDB was still flushing their pages while the first rounds ran.
    servers: ['tablegate', 'floor'],
    // One request per pool connection: each keeps MySQL busy for a whole scan, and more would
    // only wait in the pools' queues (at 32 they waited past the load generator's 10 s).
    connections: 10,
    // A request takes seconds here (a scan per request, ten at once on two cores): in a 3-second
    // round each connection finished a request or two, so the rate was a small count whatever
    // the servers did. A round is a fixed number of requests instead, timed until the last
    // answer: no count to round.
    requestsPerRound: 20,
    request: (d) => d.totals(),
    check: async (d, base, admin) => {
      const answer = await call(base, d.totals());
      if (answer.status !== 200) return httpFailure(answer);
      const expected = await selectRows(
        admin,
        `SELECT category, SUM(price) AS total, AVG(qty) AS avg_qty FROM ${BENCH_DB}.items GROUP BY category ORDER BY category`,
      );
      const canonicalTotals = (rows) =>
        JSON.stringify(
          rows.map((r) => [
            String(r.category),
            Number(r.total).toFixed(2),
            Number(r.avg_qty).toFixed(4),
          ]),
        );
      const got = Array.isArray(answer.body) ? canonicalTotals(answer.body) : answer.text;
      const want = canonicalTotals(expected);
      return got === want ? { ok: true } : { ok: false, reason: `got ${got}, expected ${want}` };
    },
  },
  {
    id: 'e',
    title: 'create one row',
    kind: 'load',
    request: (d, random) => d.create(newRow(random, `bench-${pick(random, 1e9)}`)),
    check: async (d, base, admin) => {
      const name = `check-${Date.now()}-${pick(Math.random, 1e9)}`;
      const row = newRow(seededRandom(7), name);
      const answer = await call(base, d.create(row));
      if (answer.status !== 200) return httpFailure(answer);
      const id = d.createdId(answer.body);
      const stored = await selectRows(admin, `SELECT * FROM ${BENCH_DB}.items WHERE name = ?`, [
        name,
      ]);
      if (stored.length !== 1) return { ok: false, reason: `${stored.length} rows stored` };
      if (id !== Number(stored[0].id)) {
        return { ok: false, reason: `answer ${answer.text.slice(0, 160)} does not name the row` };
      }
      const problem = compareRows([{ id, ...row }], stored);
      return problem ? { ok: false, reason: problem } : { ok: true };
    },
  },
  {
    id: 'f',
    title: 'update one row by key',
    kind: 'load',
    request: (d, random) => d.update(1 + pick(random, ROW_COUNT), pick(random, 1000)),
    check: async (d, base, admin) => {
      const answer = await call(base, d.update(ID_CHECK, UPDATE_CHECK_QTY));
      if (answer.status !== 200) return httpFailure(answer);
      if (!d.updated(answer.body)) {
        return { ok: false, reason: `unexpected answer ${answer.text.slice(0, 160)}` };
      }
      const [row] = await selectRows(admin, `SELECT qty FROM ${BENCH_DB}.items WHERE id = ?`, [
        ID_CHECK,
      ]);
      return Number(row?.qty) === UPDATE_CHECK_QTY
        ? { ok: true }
        : { ok: false, reason: `qty is ${row?.qty} after the update` };
    },
  },
  {
    id: 'h',
    title: 'mix in auth mode: 80 % reads (a–c), 15 % updates, 5 % creates, a token on each',
    kind: 'load',
    // Only the auth-mode servers, and the floor that checks the same token (servers.mjs).
    servers: ['tablegate-auth', 'floor-auth'],
    floor: 'floor-auth',
    request: (d, random) => {
      const draw = random();
      if (draw < 0.8) return SCENARIOS[Math.floor(draw / (0.8 / 3))].request(d, random);
      if (draw < 0.95) return SCENARIOS.find((s) => s.id === 'f').request(d, random);
      return SCENARIOS.find((s) => s.id === 'e').request(d, random);
    },
    // The token is checked on the way in: a read and an update answered right prove it passes.
    check: async (d, base, admin) => {
      const read = await SCENARIOS[0].check(d, base, admin);
      return read.ok ? SCENARIOS.find((s) => s.id === 'f').check(d, base, admin) : read;
    },
  },
  {
    id: 'i',
    title: `page of ${PAGE} orders, each with its customer and its items ($expand)`,
    kind: 'load',
    setup: createOrderTables,
    // The floor runs the three queries a hand-written client would (the page, its customers by
    // id, its items by order id) and assembles the same JSON.
    servers: ['tablegate', 'tablegate-policy', 'floor'],
    unsupported: (d) => (d.ordersPage ? null : 'no related rows in one request'),
    request: (d, random) => d.ordersPage(PAGE * pick(random, PAGES)),
    check: async (d, base, admin) => {
      const answer = await call(base, d.ordersPage(PAGE_CHECK_SKIP));
      if (answer.status !== 200) return httpFailure(answer);
      const expected = await expectedOrders(admin, 'id > ? AND id <= ?', [
        PAGE_CHECK_SKIP,
        PAGE_CHECK_SKIP + PAGE,
      ]);
      const problem = compareOrders(d.rowsOf(answer.body), expected);
      return problem ? { ok: false, reason: problem } : { ok: true };
    },
  },
  {
    id: 'i-all',
    // Run with (i): BENCH_SCENARIOS=i selects both.
    partOf: 'i',
    title: `${ORDER_COUNT.toLocaleString('en')} orders with their customers and items in one response`,
    kind: 'big',
    servers: ['tablegate'],
    unsupported: (d) => (d.allOrders ? null : 'no related rows in one request'),
    request: (d) => d.allOrders(),
    /** Every order, in id order, with its customer and items; 3 compared with the database. */
    checkBody: async (d, text, admin) => {
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        return { ok: false, reason: 'the answer is not complete JSON' };
      }
      const orders = d.rowsOf(body);
      if (!Array.isArray(orders) || orders.length !== ORDER_COUNT) {
        return { ok: false, reason: `expected ${ORDER_COUNT} orders, got ${orders?.length}` };
      }
      for (let i = 0; i < orders.length; i++) {
        if (Number(orders[i].id) !== i + 1)
          return { ok: false, reason: `order ${i} is not id ${i + 1}` };
      }
      for (const id of [1, ORDER_COUNT / 2, ORDER_COUNT]) {
        const expected = await expectedOrders(admin, 'id = ?', [id]);
        const problem = compareOrders([orders[id - 1]], expected);
        if (problem) return { ok: false, reason: problem };
      }
      return { ok: true };
    },
  },
  // Before (m) and the overloads: its target is an absolute peak RSS, and 256 connections or
  // the MCP calls leave the gateway's heap some 60 MiB larger than (a)–(j) do.
  {
    id: 'g',
    title: 'upload of one large file (multipart)',
    kind: 'upload',
    unsupported: (d) => (d.upload ? null : 'no upload endpoint'),
  },
  {
    id: 'm',
    title: 'one row by primary key, as an agent reads it: MCP tools/call read_rows',
    kind: 'load',
    // Beside tablegate's own REST (a), which it wraps; no other server speaks MCP.
    servers: ['tablegate'],
    unsupported: (d) => (d.mcpById ? null : 'no MCP endpoint'),
    request: (d, random) => d.mcpById(1 + pick(random, ROW_COUNT)),
    check: (d, base, admin) => checkRowById(base, admin, d.mcpById, d.mcpRowsOf),
  },
  {
    id: 'a256',
    title: 'overload: (a) with 256 connections on the 10-connection pool',
    kind: 'load',
    servers: ['tablegate', 'floor'],
    connections: 256,
    request: (d, random) => SCENARIOS[0].request(d, random),
    check: (d, base, admin) => SCENARIOS[0].check(d, base, admin),
  },
  {
    id: 'e256',
    title: 'overload: (e) with 256 connections on the 10-connection pool',
    kind: 'load',
    servers: ['tablegate', 'floor'],
    connections: 256,
    request: (d, random) => SCENARIOS.find((x) => x.id === 'e').request(d, random),
    check: (d, base, admin) => SCENARIOS.find((x) => x.id === 'e').check(d, base, admin),
  },
];
