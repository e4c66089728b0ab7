/**
 * Streamed reads whose clients take nothing are taken back as soon as another request waits for
 * a connection (src/execute/acquire.ts, docs/operations.md): with a pool of 4 and the stall
 * timeout at its 30 s default, twelve sockets that ask for a 54 MB read and never read it keep a
 * one-row read waiting well under 3 s, whether the twelve come from one address (one client, or
 * many behind one NAT — the one-row read among them) or from twelve; and once they are taken
 * back, reads are answered at once again. Before, the one-row read waited for the stall timeout
 * (three times over when it queued behind the twelve at one address). Each one taken back is
 * logged (a warning with its code) and counted in /metrics.
 */
import net from 'node:net';
import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { DEFAULTS } from '../../src/config.js';
import { createTestDatabase, integers, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testServer } from '../helpers/mysql-url.js';
import { rawRequest } from '../helpers/raw-http.js';

const POOL_SIZE = 4;
const READERS = 12;
const ROWS = 200_000;
/** The bound a one-row read is held to, as a client's timeout. */
const CLIENT_TIMEOUT_MS = 3000;

let db: TestDatabase;
let gw: TestGateway;
/** The codes of the warnings the gateway logged about requests, in order. */
const warned: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase(`
    CREATE TABLE big (id INT PRIMARY KEY, filler VARCHAR(250) NOT NULL);
    INSERT INTO big SELECT seq, REPEAT('x', 250) FROM ${integers(100_000)};
    INSERT INTO big SELECT id + 100000, filler FROM big;
    CREATE TABLE small (id INT PRIMARY KEY, name VARCHAR(20));
    INSERT INTO small VALUES (1, 'one');
  `);
  gw = await startTestGateway(db.name, {
    db: { ...testServer(), database: db.name, poolSize: POOL_SIZE },
    // As an operator gets them: the 30 s stall timeout, the minimum rate, no per-address cap.
    stallTimeoutMs: DEFAULTS.stallTimeoutMs,
    minReadRate: DEFAULTS.minReadRate,
    maxClientRequests: DEFAULTS.maxClientRequests,
    metricsPort: 0,
  });
  // A request's lines go through a child of the gateway's log (log.ts): each child's warnings
  // are recorded here (the test gateway logs nothing itself).
  const log = gw.gateway.log;
  const child = log.child.bind(log);
  jest.spyOn(log, 'child').mockImplementation(((bindings: Record<string, unknown>) => {
    const made = child(bindings);
    made.warn = ((object: { code?: string }) => {
      warned.push(String(object.code));
    }) as typeof made.warn;
    return made;
  }) as unknown as typeof log.child);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Stalled {
  /** Starts reading; resolves with the bytes received once the server closed the connection. */
  drain(): Promise<number>;
  close(): void;
}

/** Asks for every row of `big` from `localAddress`, then reads nothing until `drain()`. */
function stalledReader(port: number, localAddress: string): Stalled {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress });
  socket.pause();
  socket.on('error', () => {});
  socket.write('GET /table/big/read HTTP/1.1\r\nHost: x\r\n\r\n');
  return {
    drain: () =>
      new Promise<number>((resolve) => {
        let received = 0;
        socket.on('data', (chunk: Buffer) => {
          received += chunk.length;
        });
        socket.on('close', () => resolve(received));
        socket.resume();
      }),
    close: () => socket.destroy(),
  };
}

/** A one-row read from `localAddress`: its status and body and how long it took, or 'timeout'. */
async function oneRowRead(localAddress: string): Promise<{ outcome: unknown; ms: number }> {
  const started = Date.now();
  const answer = await Promise.race([
    rawRequest(`${gw.url}/table/small/read`, { localAddress }),
    sleep(CLIENT_TIMEOUT_MS).then(() => 'timeout' as const),
  ]);
  const outcome = answer === 'timeout' ? answer : { status: answer.status, body: answer.body };
  return { outcome, ms: Date.now() - started };
}

const ONE_ROW = { status: 200, body: [{ id: 1, name: 'one' }] };

async function twelveSlowReaders(addresses: readonly string[], readFrom: string): Promise<void> {
  const port = Number(new URL(gw.url).port);
  const db = gw.gateway.db;
  const takenBefore = db.takenBack();
  const warnedBefore = warned.length;
  const stalled = addresses.map((address) => stalledReader(port, address));
  try {
    // Four of them hold the pool and fill their sockets; the other eight wait for a connection.
    await sleep(500);

    const { outcome, ms } = await oneRowRead(readFrom);
    expect(outcome).toEqual(ONE_ROW);
    expect(ms).toBeLessThan(CLIENT_TIMEOUT_MS);

    // The reads that hold the pool now are taken back as soon as someone waits: a burst of
    // reads is answered at once.
    const started = Date.now();
    const burst = await Promise.all(
      Array.from({ length: POOL_SIZE * 2 }, () => oneRowRead(readFrom)),
    );
    const burstMs = Date.now() - started;
    expect(burst.map((read) => read.outcome)).toEqual(Array(POOL_SIZE * 2).fill(ONE_ROW));
    expect(burstMs).toBeLessThan(CLIENT_TIMEOUT_MS);

    // The twelve's own requests still waiting get their turns as the reads before them are
    // taken back for them, until none waits: eight taken back, the last four hold the pool
    // (nobody waits for it any more).
    for (let i = 0; i < 200 && db.stats().waiting > 0; i++) await sleep(100);
    expect(db.stats().waiting).toBe(0);
    const takenBack = db.takenBack() - takenBefore;
    expect(takenBack).toBe(READERS - POOL_SIZE);

    // Those taken back were cut short: their connections closed before the 54 MB arrived. The
    // other four now read on to the end of their answers (their connections stay open).
    const closed: number[] = [];
    for (const reader of stalled) void reader.drain().then((bytes) => closed.push(bytes));
    for (let i = 0; i < 200 && closed.length < takenBack; i++) await sleep(100);
    await sleep(500);
    expect(closed.length).toBe(takenBack);
    for (const bytes of closed) expect(bytes).toBeLessThan(ROWS * 250);
    expect(warned.slice(warnedBefore)).toEqual(Array(takenBack).fill('STREAM_TAKEN_BACK'));
    const scrape = await (await fetch(gw.gateway.metricsUrl as string)).text();
    expect(scrape).toContain(`tablegate_stream_taken_back_total ${db.takenBack()}\n`);
    console.log(
      `one-row read behind ${READERS} stalled readers (${new Set(addresses).size} address(es)) answered in ${ms} ms; ${POOL_SIZE * 2} more in ${burstMs} ms`,
    );
  } finally {
    for (const reader of stalled) reader.close();
  }
}

test('twelve readers at one address that never read: a one-row read there is answered within 3 s', async () => {
  await twelveSlowReaders(Array(READERS).fill('127.0.0.2'), '127.0.0.2');
}, 60_000);

test('twelve readers at twelve addresses that never read: a one-row read is answered within 3 s', async () => {
  const addresses = Array.from({ length: READERS }, (_, i) => `127.0.0.${i + 2}`);
  await twelveSlowReaders(addresses, '127.0.0.1');
}, 60_000);
