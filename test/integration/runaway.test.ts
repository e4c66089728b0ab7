/**
 * Runaway reads (docs/operations.md): a statement past --query-timeout is stopped by the server
 * and answers 504; a client that leaves mid-stream gets its statement killed on the server and
 * the connection returns to the pool (proved with a pool of one connection).
 */
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testServer } from '../helpers/mysql-url.js';

let db: TestDatabase;
/** A 500 ms statement limit. */
let gw: TestGateway;
/** The default limit and a pool of one connection. */
let single: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(`
    CREATE VIEW slow AS SELECT SUM(a.seq * b.seq) AS n FROM seq_1_to_100000 a, seq_1_to_100000 b;
    CREATE VIEW endless AS SELECT seq, CONCAT('row ', seq) AS label FROM seq_1_to_100000000;
    CREATE TABLE small (id INT PRIMARY KEY); INSERT INTO small VALUES (1);
  `);
  gw = await startTestGateway(db.name, { queryTimeoutMs: 500 });
  single = await startTestGateway(db.name, {
    db: { ...testServer(), database: db.name, poolSize: 1 },
  });
});
afterAll(async () => {
  await gw.close();
  await single.close();
  await db.drop();
});

async function runningStatements(fragment: string): Promise<number> {
  const [rows] = await db.admin.query(
    "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ? AND COMMAND <> 'Sleep' AND INFO LIKE ? AND INFO NOT LIKE '%PROCESSLIST%'",
    [db.name, `%${fragment}%`],
  );
  return Number((rows as { n: number | string }[])[0]?.n);
}

test('a read past the time limit is stopped by the server and answers 504', async () => {
  const response = await fetch(`${gw.url}/table/slow/read`);
  expect(response.status).toBe(504);
  expect(await response.json()).toEqual({
    success: false,
    message: 'The query took longer than the configured time limit',
    code: 'QUERY_TIMEOUT',
  });
  // Stopped, not only answered: no statement of it runs on.
  expect(await runningStatements('seq_1_to_100000 a')).toBe(0);
});

test('a client that disconnects mid-stream gets its statement killed, and the connection comes back', async () => {
  const controller = new AbortController();
  const response = await fetch(`${single.url}/table/endless/read`, { signal: controller.signal });
  expect(response.status).toBe(200);
  const reader = response.body?.getReader();
  await reader?.read();
  expect(await runningStatements('endless')).toBe(1);
  controller.abort();
  const deadline = Date.now() + 5000;
  while ((await runningStatements('endless')) > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(await runningStatements('endless')).toBe(0);
  // The pool has a single connection: this read can only succeed if it was given back.
  const next = await fetch(`${single.url}/table/small/read`);
  expect(next.status).toBe(200);
  expect(await next.json()).toEqual([{ id: 1 }]);
});
