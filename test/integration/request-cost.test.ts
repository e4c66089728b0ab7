/**
 * What one request may cost the database, on a real gateway with a pool of 3:
 *
 * - The costly filter: one anonymous 3.4 KB request, `contains(tolower(payload),'q')` ORed 100
 *   times over 300,000 rows, held a connection for 17–20 s. Past the budget of function calls a
 *   filter is 400 LIMIT_EXCEEDED before any SQL (it is answered so with the database closed); a
 *   filter just under the budget runs, and an unrelated read from another address stays fast
 *   meanwhile.
 * - `--anonymous-query-timeout`: statements of a request without a token stop at their own
 *   limit; with a token, the query timeout applies. In open mode every request has no token.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestDatabase, integers, type TestDatabase } from '../helpers/database.js';
import { postCredentials, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testServer } from '../helpers/mysql-url.js';
import { countStatuses, rawRequest } from '../helpers/raw-http.js';

const POOL_SIZE = 3;

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase(`
    CREATE TABLE docs (id INT PRIMARY KEY, payload VARCHAR(200) NOT NULL);
    INSERT INTO docs SELECT seq, REPEAT(MD5(seq), 6) FROM ${integers(100_000)};
    CREATE TABLE small (id INT PRIMARY KEY, name VARCHAR(20));
    INSERT INTO small VALUES (1, 'one');
    CREATE VIEW slow AS SELECT SLEEP(1) AS s;
    CREATE TABLE notes (id INT AUTO_INCREMENT PRIMARY KEY, body VARCHAR(50) NOT NULL);
    CREATE TABLE slow_notes (id INT AUTO_INCREMENT PRIMARY KEY, body VARCHAR(50) NOT NULL);
    CREATE TRIGGER slow_insert BEFORE INSERT ON slow_notes FOR EACH ROW
      SET NEW.body = CONCAT(NEW.body, SLEEP(1));
  `);
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

function gatewayWith(options: Partial<TestGateway['config']> = {}): Promise<TestGateway> {
  return startTestGateway(db.name, {
    db: { ...testServer(), database: db.name, poolSize: POOL_SIZE },
    ...options,
  });
}

/** `contains(tolower(payload),'q')` ORed `n` times: 2n function calls. */
const search = (n: number) =>
  Array.from({ length: n }, () => "contains(tolower(payload),'q')").join(' or ');

const readDocs = (url: string, filter: string) =>
  rawRequest(`${url}/table/docs/read?$filter=${encodeURIComponent(filter)}`);

const OVER_BUDGET = {
  success: false,
  message:
    'Invalid $filter at position 545: more than 32 function calls; each contains, startswith, endswith and column function (tolower, year, …) counts one',
  code: 'LIMIT_EXCEEDED',
};

describe('the function-call budget of a filter', () => {
  test('the costly filter: 10 at once are 400 at once; one just under the budget runs while another address reads', async () => {
    const gw = await gatewayWith();
    try {
      const costly = search(100);
      expect(Buffer.byteLength(costly)).toBeGreaterThan(3300);
      const started = Date.now();
      const refused = await Promise.all(Array.from({ length: 10 }, () => readDocs(gw.url, costly)));
      expect(countStatuses(refused)).toEqual({ 400: 10 });
      expect(refused[0]?.body).toEqual(OVER_BUDGET);
      console.log(`10 over-budget reads refused in ${Date.now() - started} ms`);

      // 32 calls: accepted, and it takes its time (about 16 × 0.1 s over 100,000 rows here).
      let underDone = 0;
      const under = readDocs(gw.url, search(16)).then((answer) => {
        underDone = Date.now();
        return answer;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const readStarted = Date.now();
      const other = await rawRequest(`${gw.url}/table/small/read`, { localAddress: '127.0.0.2' });
      const readMs = Date.now() - readStarted;
      expect([other.status, other.body]).toEqual([200, [{ id: 1, name: 'one' }]]);
      const answer = await under;
      expect([answer.status, answer.body]).toEqual([200, []]);
      // The read was answered while the filter still ran.
      expect(underDone).toBeGreaterThan(readStarted + readMs);
      console.log(
        `one-row read answered in ${readMs} ms beside a 32-call filter that took ${underDone - readStarted + 200} ms`,
      );
    } finally {
      await gw.close();
    }
  }, 60_000);

  test('refused before any SQL: the same answer with the database closed', async () => {
    const gw = await gatewayWith();
    try {
      expect((await readDocs(gw.url, 'id eq 1')).status).toBe(200);
      await gw.gateway.db.close();
      expect(await readDocs(gw.url, search(17))).toMatchObject({ status: 400, body: OVER_BUDGET });
      // A filter within the budget needs the database, which is gone.
      expect(await readDocs(gw.url, search(16))).toMatchObject({
        status: 503,
        body: { code: 'DATABASE_UNAVAILABLE' },
      });
    } finally {
      await gw.close().catch(() => {});
    }
  });
});

describe('--anonymous-query-timeout', () => {
  const TIMED_OUT = {
    success: false,
    message: 'The query took longer than the configured time limit',
    code: 'QUERY_TIMEOUT',
  };

  test('auth mode: a request without a token stops at its own limit; with a token, the query timeout applies', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-cost-'));
    const policyFile = path.join(dir, 'policy.json');
    const read = { tables: { slow: { read: true }, small: { read: true } } };
    await writeFile(policyFile, JSON.stringify({ roles: { anonymous: read, user: read } }));
    const gw = await gatewayWith({
      mode: 'auth',
      jwtSecret: 'a'.repeat(32),
      policyFile,
      anonymousQueryTimeoutMs: 300,
    });
    try {
      // Its 1 s SLEEP would be served under any other limit: the 504 is the 300 ms one's.
      expect(await rawRequest(`${gw.url}/table/slow/read`)).toMatchObject({
        status: 504,
        body: TIMED_OUT,
      });
      // Anonymous reads that fit in the limit are served.
      expect(await rawRequest(`${gw.url}/table/small/read?$count=true`)).toMatchObject({
        status: 200,
        headers: { 'x-total-count': '1' },
        body: [{ id: 1, name: 'one' }],
      });

      await postCredentials(gw.url, '/auth/register', 'ann@example.com', 'a long password');
      const login = await postCredentials(
        gw.url,
        '/auth/login',
        'ann@example.com',
        'a long password',
      );
      const token = (login.body as { token: string }).token;
      const signedIn = await rawRequest(`${gw.url}/table/slow/read`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect([signedIn.status, signedIn.body]).toEqual([200, [{ s: 0 }]]);
    } finally {
      await gw.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('open mode: every request has no token; reads and writes run under the limit', async () => {
    const gw = await gatewayWith({ anonymousQueryTimeoutMs: 300 });
    try {
      expect(await rawRequest(`${gw.url}/table/slow/read`)).toMatchObject({
        status: 504,
        body: TIMED_OUT,
      });
      // A write too: an insert whose trigger sleeps is stopped, and nothing is stored.
      expect(
        await rawRequest(`${gw.url}/table/slow_notes/create`, { json: { body: 'x' } }),
      ).toMatchObject({ status: 504, body: TIMED_OUT });
      const [stored] = await db.admin.query('SELECT COUNT(*) AS n FROM slow_notes');
      expect(Number((stored as { n: string }[])[0]?.n)).toBe(0);
      // Every kind of statement runs under the limit and is served when it fits: one row, a
      // batch in a transaction, an update, a delete, a counted read.
      const url = `${gw.url}/table/notes`;
      expect((await rawRequest(`${url}/create`, { json: { body: 'one' } })).status).toBe(200);
      expect(
        (await rawRequest(`${url}/create`, { json: [{ body: 'two' }, { body: 'three' }] })).status,
      ).toBe(200);
      expect(
        (await rawRequest(`${url}/update(id,1)`, { method: 'PUT', json: { body: 'uno' } })).body,
      ).toMatchObject({ affectedRows: 1 });
      expect((await rawRequest(`${url}/delete(id,2)`, { method: 'DELETE' })).body).toMatchObject({
        affectedRows: 1,
      });
      expect(await rawRequest(`${url}/read?$count=true&$orderby=id`)).toMatchObject({
        status: 200,
        headers: { 'x-total-count': '2' },
        body: [
          { id: 1, body: 'uno' },
          { id: 3, body: 'three' },
        ],
      });
    } finally {
      await gw.close();
    }
  });

  test('not set: the query timeout applies to everyone', async () => {
    const gw = await gatewayWith();
    try {
      expect(await rawRequest(`${gw.url}/table/slow/read`)).toMatchObject({
        status: 200,
        body: [{ s: 0 }],
      });
      expect(
        await rawRequest(`${gw.url}/table/slow_notes/create`, { json: { body: 'x' } }),
      ).toMatchObject({ status: 200, body: { affectedRows: 1 } });
    } finally {
      await gw.close();
    }
  });
});
