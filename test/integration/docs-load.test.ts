/**
 * `/openapi.json` on a schema of 1,000 tables × 10 columns, as anyone may ask for it: a repeated
 * request for an unchanged schema costs little CPU, twenty at once while the description is
 * built again (the schema changed) hold a one-row read up only briefly, and the answer comes
 * compressed as asked, with Vary and an ETag that gets a 304. The numbers measured are printed.
 */
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
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

/**
 * CPU per request (server and client: the test speaks HTTP to a gateway in its own process): the
 * median of five runs of ten requests, so that a garbage collection or a timer of the process
 * falling into one run does not decide.
 */
async function cpuPerRequest(base: string, headers: Record<string, string>): Promise<number> {
  await get('/openapi.json', headers, base);
  const runs: number[] = [];
  for (let run = 0; run < 5; run++) {
    const before = process.cpuUsage();
    for (let i = 0; i < 10; i++) {
      expect((await get('/openapi.json', headers, base)).status).toBe(200);
    }
    const used = process.cpuUsage(before);
    runs.push((used.user + used.system) / 1000 / 10);
  }
  return median(runs);
}

test('a repeated request for an unchanged schema costs at most 5 ms of CPU', async () => {
  const lines: string[] = [];
  const codings: [string, Record<string, string>][] = [
    ['br', BROWSER],
    ['gzip', { 'accept-encoding': 'gzip' }],
    ['identity', {}],
  ];
  for (const [label, headers] of codings) {
    const usually = await cpuPerRequest(usual.url, headers);
    const checking = await cpuPerRequest(gw.url, headers);
    lines.push(
      `${label} ${usually.toFixed(2)} ms (${checking.toFixed(2)} ms asking MySQL each time)`,
    );
    if (label !== 'identity') {
      expect(usually).toBeLessThanOrEqual(5);
      // Each request also waits for the schema's fingerprint (one statement) and its answer.
      expect(checking).toBeLessThanOrEqual(10);
    }
  }
  console.log(`CPU per repeated /openapi.json, server and client: ${lines.join(', ')}`);
});

test('20 requests at once while the description is built again hold a one-row read up briefly', async () => {
  const alone: number[] = [];
  for (let i = 0; i < 20; i++) alone.push((await get(ONE_ROW)).ms);
  // The same reads for half a second with nothing else asked: what the machine adds by itself.
  const quiet: number[] = [];
  for (const until = performance.now() + 500; performance.now() < until; ) {
    quiet.push((await get(ONE_ROW)).ms);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  // A new table: a new schema version, so the next request builds the description again.
  await db.admin.query('CREATE TABLE t_new (id INT PRIMARY KEY) ENGINE=MyISAM');
  let done = false;
  const descriptions = Promise.all(
    Array.from({ length: 20 }, () => get('/openapi.json', BROWSER)),
  ).finally(() => {
    done = true;
  });
  const during: number[] = [];
  while (!done) {
    const read = await get(ONE_ROW);
    expect(read.status).toBe(200);
    during.push(read.ms);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const answers = await descriptions;
  expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
  expect(new Set(answers.map((a) => a.headers.etag)).size).toBe(1);
  const built = Math.max(...answers.map((a) => a.ms));
  const delay = Math.max(...during) - median(alone);
  console.log(
    `one-row read alone: median ${median(alone).toFixed(1)} ms, slowest of ${quiet.length} in 0.5 s ${Math.max(...quiet).toFixed(1)} ms; during 20 /openapi.json (built in ${built.toFixed(0)} ms): ${during.length} reads, median ${median(during).toFixed(1)} ms, slowest ${Math.max(...during).toFixed(1)} ms (delay ${delay.toFixed(1)} ms)`,
  );
  expect(during.length).toBeGreaterThanOrEqual(3);
  // The target is 50 ms; the bound leaves room for a loaded 2-core machine. Built on the event
  // loop at once, the description held every read for the whole build (≥ 700 ms here).
  expect(delay).toBeLessThan(200);
}, 60_000);
