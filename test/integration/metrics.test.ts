/**
 * Prometheus metrics on --metrics-port (docs/operations.md): a gateway in auth mode answers a
 * known set of requests, then one scrape of the metrics port must show exactly those — by route
 * pattern, never a raw URL — plus MySQL errors, login throttle hits, upload bytes, the pool and
 * the process. The API port has no /metrics, and without the option there is no listener.
 */
import net from 'node:net';
import { openDatabase } from '../../src/execute/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway } from '../helpers/gateway.js';
import { postMultipart } from '../helpers/multipart.js';
import { testServer } from '../helpers/mysql-url.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1)');
});
afterAll(async () => {
  await db.drop();
});

interface Sample {
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** The samples of one metric in Prometheus' text format. */
function samples(text: string, name: string): Sample[] {
  const found: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key as string] = value as string;
    }
    found.push({ labels, value: Number(match[3]) });
  }
  return found;
}

/** Sorted, so that the order prom-client lists label sets in does not matter. */
const sorted = (list: Sample[]) =>
  [...list].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

function listeningServers(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap').length;
}

async function json(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const credentials = (email: string, password: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email, password }),
});

test('one scrape shows exactly the requests made, by route pattern, and the rest', async () => {
  const servers = listeningServers();
  const gw = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: 'm'.repeat(32),
    metricsPort: 0,
  });
  try {
    const metricsUrl = gw.gateway.metricsUrl as string;
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(listeningServers()).toBe(servers + 2);

    expect(
      (await json(`${gw.url}/auth/register`, credentials('a@example.com', 'long enough'))).status,
    ).toBe(200);
    const login = await json(`${gw.url}/auth/login`, credentials('a@example.com', 'long enough'));
    expect(login.status).toBe(200);
    const auth = { authorization: `Bearer ${login.body.token as string}` };

    expect((await json(`${gw.url}/table/t/read`, { headers: auth })).status).toBe(200);
    expect((await json(`${gw.url}/table/nosuchtable/read`, { headers: auth })).body.code).toBe(
      'UNKNOWN_TABLE',
    );
    expect((await json(`${gw.url}/no/such/route`, { headers: auth })).status).toBe(404);
    // The API's port has no metrics, with or without a token.
    expect(await json(`${gw.url}/metrics`, { headers: auth })).toEqual({
      status: 404,
      body: { success: false, message: 'No route for GET /metrics', code: 'NOT_FOUND' },
    });
    const duplicate = await json(`${gw.url}/table/t/create`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 1 }),
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.code).toBe('ER_DUP_ENTRY');
    // 10 failed logins for one email are answered 401; the 11th is throttled.
    for (let i = 0; i < 10; i++) {
      const wrong = await json(`${gw.url}/auth/login`, credentials('b@example.com', 'wrong one'));
      expect(wrong.status).toBe(401);
    }
    const throttled = await json(`${gw.url}/auth/login`, credentials('b@example.com', 'wrong one'));
    expect(throttled.status).toBe(429);
    expect(throttled.body.code).toBe('TOO_MANY_ATTEMPTS');
    const upload = await postMultipart(
      gw.url,
      [
        { name: 'files', filename: 'a.txt', contentType: 'text/plain', body: 'hello' },
        { name: 'files', filename: 'b.txt', contentType: 'text/plain', body: 'hello world' },
      ],
      auth,
    );
    expect(upload.status).toBe(200);

    const scrape = await fetch(metricsUrl);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await scrape.text();

    const request = (method: string, route: string, status: string, count: number, table = '') => ({
      labels: { method, route, status, table },
      value: count,
    });
    expect(sorted(samples(text, 'tablegate_http_requests_total'))).toEqual(
      sorted([
        request('POST', '/auth/register', '200', 1),
        request('POST', '/auth/login', '200', 1),
        request('POST', '/auth/login', '401', 10),
        request('POST', '/auth/login', '429', 1),
        request('GET', '/table/:table/read', '200', 1, 't'),
        // An unknown table is counted without its name: clients do not choose label values.
        request('GET', '/table/:table/read', '404', 1),
        request('GET', 'unmatched', '404', 2),
        request('POST', '/table/:table/:action', '409', 1, 't'),
        request('POST', '/upload', '200', 1),
      ]),
    );
    expect(text).not.toContain('nosuch');
    expect(text).not.toContain('/metrics');
    expect(
      samples(text, 'tablegate_http_request_duration_seconds_count').find(
        (s) => s.labels.route === '/auth/login' && s.labels.status === '401',
      ),
    ).toEqual({ labels: { method: 'POST', route: '/auth/login', status: '401' }, value: 10 });
    expect(
      samples(text, 'tablegate_http_request_duration_seconds_bucket').find(
        (s) =>
          s.labels.route === '/table/:table/read' &&
          s.labels.status === '200' &&
          s.labels.le === '+Inf',
      )?.value,
    ).toBe(1);

    expect(samples(text, 'tablegate_mysql_errors_total')).toEqual([
      { labels: { code: 'ER_DUP_ENTRY' }, value: 1 },
    ]);
    expect(samples(text, 'tablegate_login_throttled_total')).toEqual([
      { labels: { route: '/auth/login', code: 'TOO_MANY_ATTEMPTS' }, value: 1 },
    ]);
    expect(samples(text, 'tablegate_upload_bytes_total')).toEqual([{ labels: {}, value: 16 }]);
    expect(samples(text, 'tablegate_upload_files_total')).toEqual([{ labels: {}, value: 2 }]);

    // Every request is over: no connection is in use and nobody waits; the pool has opened some.
    const pool = samples(text, 'tablegate_mysql_pool_connections');
    expect(pool.find((s) => s.labels.state === 'in_use')?.value).toBe(0);
    expect(pool.find((s) => s.labels.state === 'idle')?.value).toBeGreaterThanOrEqual(1);
    expect(samples(text, 'tablegate_mysql_pool_waiting')).toEqual([{ labels: {}, value: 0 }]);
    // prom-client's process metrics.
    expect(samples(text, 'process_cpu_user_seconds_total')).toHaveLength(1);
    expect(samples(text, 'nodejs_heap_size_used_bytes')[0]?.value).toBeGreaterThan(0);

    // Only GET /metrics on the metrics port.
    expect((await fetch(metricsUrl.replace('/metrics', '/table/t/read'))).status).toBe(404);
  } finally {
    await gw.close();
  }
  expect(listeningServers()).toBe(servers);
});

test('without --metrics-port there is no metrics listener', async () => {
  const servers = listeningServers();
  const gw = await startTestGateway(db.name);
  try {
    expect(gw.gateway.metricsUrl).toBeNull();
    expect(listeningServers()).toBe(servers + 1);
    expect((await json(`${gw.url}/metrics`)).status).toBe(404);
  } finally {
    await gw.close();
  }
});

test('the pool gauges: a statement running and one waiting for the only connection', async () => {
  const pool = await openDatabase(
    { ...testServer(), database: db.name, poolSize: 1 },
    { statementTimeoutMs: 10_000, stallTimeoutMs: 10_000 },
  );
  try {
    expect(pool.stats()).toEqual({ inUse: 0, idle: 0, waiting: 0 });
    const sleep = { sql: 'SELECT SLEEP(1)', params: [] };
    const first = pool.rows(sleep);
    const second = pool.rows(sleep);
    // The first has the connection once it is made; the second waits for it.
    for (let i = 0; i < 400 && pool.stats().inUse === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(pool.stats()).toEqual({ inUse: 1, idle: 0, waiting: 1 });
    await Promise.all([first, second]);
    expect(pool.stats()).toEqual({ inUse: 0, idle: 1, waiting: 0 });
  } finally {
    await pool.close();
  }
});

test('a metrics port in use stops the start with one line, and leaves nothing listening', async () => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as net.AddressInfo).port;
  const servers = listeningServers();
  try {
    await expect(startTestGateway(db.name, { metricsPort: port })).rejects.toThrow(
      `metrics port ${port} is already in use on 127.0.0.1: choose another with --metrics-port`,
    );
    // A server that failed to listen lets go of its handle on a later tick.
    for (let i = 0; i < 100 && listeningServers() !== servers; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(listeningServers()).toBe(servers);
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
});
