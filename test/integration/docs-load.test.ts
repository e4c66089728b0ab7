/**
 * `/openapi.json` on a schema of 1,000 tables × 10 columns, as anyone may ask for it: a repeated
 * request for an unchanged schema asks MySQL one statement at most, twenty at once while the
 * description is built again (the schema changed) make one description while one-row reads go
 * on being answered, and the answer comes compressed as asked, with Vary and an ETag that gets a
 * 304. What it costs in time is measured by bench/openapi-load.mjs.
 */
import http from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { DEFAULTS } from '../../src/config.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const TABLES = 1000;
// MyISAM: a thousand InnoDB tables take half a minute to create, these about a second.
const FIXTURE = [
  ...Array.from(
    { length: TABLES },
    (_, i) =>
      `CREATE TABLE t${String(i).padStart(4, '0')} (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL,
        price DECIMAL(10,2) NOT NULL, qty INT NULL, created DATETIME NULL, note TEXT NULL,
        status ENUM('new','paid','sent') NULL, flag TINYINT NULL, big BIGINT NULL, day DATE NULL)
        ENGINE=MyISAM;`,
  ),
  "INSERT INTO t0000 (id, name, price) VALUES (1, 'one', 1.00);",
].join('\n');

let db: TestDatabase;
/** schemaRefreshMs 0 (test/helpers/gateway.ts): every request asks whether the schema changed. */
let gw: TestGateway;
/** The default: at most one such question a second. */
let usual: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  gw = await startTestGateway(db.name);
  usual = await startTestGateway(db.name, { schemaRefreshMs: DEFAULTS.schemaRefreshMs });
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await usual?.close();
  await db?.drop();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  ms: number;
}

/** A GET on a connection of its own; the body is kept as sent (no decompression). */
function get(url: string, headers: Record<string, string> = {}, base = gw.url): Promise<Answer> {
  const { hostname, port } = new URL(base);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get({ hostname, port, path: url, headers, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks),
            ms: performance.now() - started,
          }),
        );
      })
      .on('error', reject);
  });
}

const ONE_ROW = '/table/t0000/read?$filter=id%20eq%201';
const BROWSER = { 'accept-encoding': 'gzip, deflate, br' };
/** The body of an answer, decoded as its Content-Encoding says. */
function gunzipOrBrotli(answer: Answer): Buffer {
  const coding = answer.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(answer.body);
  return coding === 'gzip' ? gunzipSync(answer.body) : answer.body;
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;

test('compressed as asked, with Vary, Cache-Control and an ETag that gets a 304', async () => {
  const plain = await get('/openapi.json');
  expect(plain.status).toBe(200);
  expect(plain.headers['content-encoding']).toBeUndefined();
  // Counted in the text: parsed, 8 MB of JSON leaves work for the garbage collector that the
  // CPU measurements below would pay for.
  expect(plain.body.toString().match(/"\/table\/t\d{4}\/read":/g)).toHaveLength(TABLES);
  const gzip = await get('/openapi.json', { 'accept-encoding': 'gzip' });
  expect(gzip.headers['content-encoding']).toBe('gzip');
  expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);
  const br = await get('/openapi.json', BROWSER);
  expect(br.headers['content-encoding']).toBe('br');
  for (const answer of [plain, gzip, br]) {
    expect(answer.headers.vary).toBe('Accept-Encoding');
    expect(answer.headers['cache-control']).toBe('no-cache');
    expect(answer.headers.etag).toBe(plain.headers.etag);
  }
  expect(plain.headers.etag).toMatch(/^W\/"[\w-]{43}"$/);
  const again = await get('/openapi.json', {
    ...BROWSER,
    'if-none-match': String(plain.headers.etag),
  });
  expect(again.status).toBe(304);
  expect(again.body.length).toBe(0);
  expect(again.headers.etag).toBe(plain.headers.etag);
  console.log(
    `/openapi.json for ${TABLES} tables: ${plain.body.length} bytes, gzip ${gzip.body.length}, br ${br.body.length}`,
  );
});

/** The statements the gateway sends MySQL while `run` runs, by the table each reads. */
async function statementsDuring(gateway: TestGateway, run: () => Promise<void>): Promise<string[]> {
  const database = gateway.gateway.db;
  const rows = database.rows.bind(database);
  const seen: string[] = [];
  database.rows = ((query: { sql: string }) => {
    seen.push(/FROM information_schema\.(\w+)/.exec(query.sql)?.[1] ?? query.sql);
    return rows(query as never);
  }) as typeof database.rows;
  try {
    await run();
  } finally {
    database.rows = rows;
  }
  return seen;
}

// What a request costs in CPU and how long a rebuild holds other reads up is measured by
// bench/openapi-load.mjs: timing bounds decide nothing on a shared machine.
test('a repeated request for an unchanged schema asks MySQL one statement at most', async () => {
  await get('/openapi.json', BROWSER, usual.url);
  await get('/openapi.json', BROWSER);
  // The default refresh interval: within it, none.
  const usually = await statementsDuring(usual, async () => {
    for (let i = 0; i < 5; i++)
      expect((await get('/openapi.json', BROWSER, usual.url)).status).toBe(200);
  });
  expect(usually.length).toBeLessThanOrEqual(1);
  expect(usually.every((table) => table === 'TABLES')).toBe(true);
  // Asking each time: the fingerprint only (its first checksum reads information_schema.TABLES).
  const checking = await statementsDuring(gw, async () => {
    for (let i = 0; i < 5; i++) expect((await get('/openapi.json', BROWSER)).status).toBe(200);
  });
  expect(checking).toEqual(Array(5).fill('TABLES'));
});

test('20 requests at once while the description is built again: one description, reads answered', async () => {
  // A new table: a new schema version, so the next request builds the description again.
  await db.admin.query('CREATE TABLE t_new (id INT PRIMARY KEY) ENGINE=MyISAM');
  let done = false;
  const descriptions = Promise.all(
    Array.from({ length: 20 }, () => get('/openapi.json', BROWSER)),
  ).finally(() => {
    done = true;
  });
  const during: number[] = [];
  do {
    const read = await get(ONE_ROW);
    expect([read.status, read.body.toString()]).toEqual([
      200,
      '[{"id":1,"name":"one","price":1.00,"qty":null,"created":null,"note":null,"status":null,"flag":null,"big":null,"day":null}]',
    ]);
    during.push(read.ms);
    await new Promise((resolve) => setTimeout(resolve, 5));
  } while (!done);
  const answers = await descriptions;
  expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
  expect(new Set(answers.map((a) => a.headers.etag)).size).toBe(1);
  const described = JSON.parse(gunzipOrBrotli(answers[0] as Answer).toString());
  expect(Object.keys(described.paths)).toContain('/table/t_new/read');
  console.log(
    `during 20 /openapi.json (built in ${Math.max(...answers.map((a) => a.ms)).toFixed(0)} ms): ${during.length} one-row reads, median ${median(during).toFixed(1)} ms, slowest ${Math.max(...during).toFixed(1)} ms`,
  );
}, 60_000);
