/**
 * Connections that break at every moment of their life — mid-handshake, mid-packet, mid-result,
 * while a statement is being prepared — through a proxy that breaks them (helpers/fault-proxy.ts),
 * in front of a server that stays up. Whatever breaks, an answer is a 200 or a 503; a 500 is a
 * lost connection whose error was not recognised. A read whose connection broke is tried once
 * more, not twice: mysql2 reports a break during the prepare step twice.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createTestDatabase, integers, type TestDatabase } from '../helpers/database.js';
import { type FaultProxy, seededRandom, startFaultProxy } from '../helpers/fault-proxy.js';
import { fuzzSeed } from '../helpers/fuzz-seed.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testServer } from '../helpers/mysql-url.js';

const UNAVAILABLE = {
  success: false,
  message: 'Database unavailable',
  code: 'DATABASE_UNAVAILABLE',
};
const OUTCOME_UNKNOWN = {
  success: false,
  message:
    'The connection to the database was lost while the write was committing; it may or may not have been applied. Read the rows before retrying',
  code: 'WRITE_OUTCOME_UNKNOWN',
};

let db: TestDatabase;
let proxy: FaultProxy;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(`
    CREATE TABLE items (
      id INT AUTO_INCREMENT PRIMARY KEY,
      k VARCHAR(40) NOT NULL UNIQUE,
      n INT NOT NULL
    ) ENGINE=InnoDB;
    INSERT INTO items (k, n) SELECT CONCAT('seed-', seq), seq FROM ${integers(400)};
  `);
  const server = testServer();
  proxy = await startFaultProxy(server);
  gw = await startTestGateway(db.name, {
    db: { ...server, host: '127.0.0.1', port: proxy.port, database: db.name, poolSize: 4 },
  });
});

afterAll(async () => {
  await gw?.close();
  await proxy?.close();
  await db?.drop();
});

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

async function ask(path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(gw.url + path, { ...init, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    // A streamed read cut after its first rows: the status was sent, the array never closed.
    return { status: response.status, body: 'cut' };
  }
}

const create = (k: string) =>
  ask('/table/items/create', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ k, n: 1 }),
  });

test('every statement meets a reset connection: reads answer 503 after one retry, writes 503, /health 200', async () => {
  proxy.breaking = { kind: 'at-statement' };
  try {
    // Fetched whole (the small-read path, by callback), counted, streamed.
    for (const path of [
      '/table/items/read?$top=1',
      '/table/items/read?$top=1&$count=true',
      '/table/items/read?$filter=n lt 300',
    ]) {
      const before = proxy.statementsStopped;
      expect([path, await ask(path)]).toEqual([path, { status: 503, body: UNAVAILABLE }]);
      // The first attempt and one retry on a fresh connection, not a third.
      expect([path, proxy.statementsStopped - before]).toEqual([path, 2]);
    }
    // The INSERT may have been sent: the gateway cannot know it never arrived.
    expect(await create('never')).toEqual({ status: 503, body: OUTCOME_UNKNOWN });
    // The server itself answers: only the statements' connections break.
    expect(await ask('/health')).toEqual({ status: 200, body: { status: 'ok' } });
  } finally {
    proxy.breaking = { kind: 'none' };
  }
  expect(await ask('/table/items/read?$top=1&$orderby=id')).toEqual({
    status: 200,
    body: [{ id: 1, k: 'seed-1', n: 1 }],
  });
  const [rows] = await db.admin.query("SELECT id FROM items WHERE k = 'never'");
  expect(rows).toEqual([]);
});

/**
 * The load of the random-byte test goes on until both sides were exercised (more than CUTS
 * connections cut, SUCCESSES answers 200, FAILURES answers 503), or MAX_ANSWERS answers: a count,
 * not a clock, so a loaded machine makes the run longer, never thinner.
 */
const CUTS = 50;
const SUCCESSES = 100;
const FAILURES = 10;
const MAX_ANSWERS = 2_000;

test('connections cut at random bytes under load: every answer is a 200 or a 503', async () => {
  const seed = fuzzSeed();
  proxy.breaking = { kind: 'at-random-byte', maxBytes: 4000, random: seededRandom(seed) };
  const answers: { path: string; answer: Answer }[] = [];
  let stop = false;
  const paths = [
    '/table/items/read?$filter=n lt 50&$orderby=id desc&$top=20',
    '/table/items/read?$top=1',
    '/table/items/read?$top=1&$count=true',
    '/table/items/read?$filter=n lt 300',
  ];
  const cuts = () => proxy.broken.reset + proxy.broken.end + proxy.broken.destroy;
  const byStatus = new Map<number, number>();
  const counted = (status: number) => byStatus.get(status) ?? 0;
  const exercised = () => cuts() > CUTS && counted(200) > SUCCESSES && counted(503) > FAILURES;
  const client = async (index: number) => {
    for (let i = 0; !stop; i++) {
      const path = i % 3 === 2 ? 'create' : (paths[(i + index) % paths.length] as string);
      const answer = path === 'create' ? await create(`fuzz-${index}-${i}`) : await ask(path);
      answers.push({ path, answer });
      byStatus.set(answer.status, counted(answer.status) + 1);
      if (exercised() || answers.length >= MAX_ANSWERS) stop = true;
    }
  };
  const clients = Array.from({ length: 6 }, (_, index) => client(index));
  await Promise.all(clients);
  proxy.breaking = { kind: 'none' };
  const fine = ({ answer: { status, body } }: { answer: Answer }) =>
    status === 200 ||
    (status === 503 &&
      (JSON.stringify(body) === JSON.stringify(UNAVAILABLE) ||
        JSON.stringify(body) === JSON.stringify(OUTCOME_UNKNOWN)));
  expect([seed, answers.filter((a) => !fine(a)).slice(0, 5)]).toEqual([seed, []]);
  console.log(
    `broken connections (seed ${seed}): ${answers.length} answers, ${counted(503)} × 503, ${cuts()} connections cut (${JSON.stringify(proxy.broken)})`,
  );
  // Enough breaks and enough successes that both sides were exercised (within MAX_ANSWERS: a
  // proxy that cut nothing, or a gateway that never recovered, stops there and fails here).
  expect({
    cuts: cuts() > CUTS,
    ok: counted(200) > SUCCESSES,
    unavailable: counted(503) > FAILURES,
  }).toEqual({
    cuts: true,
    ok: true,
    unavailable: true,
  });
}, 240_000);
