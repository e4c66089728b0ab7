/**
 * Streamed reads whose clients take nothing are taken back as soon as another request waits for
 * a connection (src/execute/acquire.ts, docs/operations.md): with a pool of 4 and the stall
 * timeout at its 30 s default, twelve sockets that ask for a 54 MB read and never read it keep a
 * one-row read waiting far less than that timeout (it is printed how long: under 3 s on a quiet
 * machine; bench's to measure, not a test's), whether the twelve come from one address (one client, or
 * many behind one NAT — the one-row read among them) or from twelve (the lighter read passes
 * their queued ones), a burst after it too; once the twelve have had their turns, a read is
 * answered at once. Before, the one-row read waited for the stall timeout
 * (three times over when it queued behind the twelve at one address). Each one taken back is
 * logged (a warning with its code) and counted in /metrics. And honest slow readers are never
 * taken back, however long others wait for the pool they hold: one reading as outage.test's
 * (64 KiB every 40 ms) and one slower still (16 KiB every 100 ms) read their answers whole.
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
/**
 * The bound a one-row read is held to, as a client's timeout: half the stall timeout, which a
 * read waits out whole when nothing is taken back for it — wide enough for a loaded machine.
 */
const CLIENT_TIMEOUT_MS = DEFAULTS.stallTimeoutMs / 2;

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

    // The reads that hold the pool now are taken back as soon as someone waits: a burst of
    // reads is answered at once.
    const started = Date.now();
    const burst = await Promise.all(
      Array.from({ length: POOL_SIZE * 2 }, () => oneRowRead(readFrom)),
    );
    const burstMs = Date.now() - started;
    expect(burst.map((read) => read.outcome)).toEqual(Array(POOL_SIZE * 2).fill(ONE_ROW));

    // The twelve's own requests still waiting get their turns as the reads before them are
    // taken back for them, until none waits: at least eight taken back (every one quiet when
    // someone waits is, so a connection may be left free), the others hold the pool.
    for (let i = 0; i < 200 && db.stats().waiting > 0; i++) await sleep(100);
    expect(db.stats().waiting).toBe(0);
    expect(db.takenBack() - takenBefore).toBeGreaterThanOrEqual(READERS - POOL_SIZE);

    // A read now is answered at once (a free connection, or those the last ones held, taken
    // back together for it).
    const after = await oneRowRead(readFrom);
    expect(after.outcome).toEqual(ONE_ROW);
    const takenBack = db.takenBack() - takenBefore;
    expect(takenBack).toBeLessThanOrEqual(READERS);

    // Each one taken back was cut short: its connection closed before the 54 MB arrived. The
    // others hold their connections, nobody waiting for them, and read on.
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
      `one-row read behind ${READERS} stalled readers (${new Set(addresses).size} address(es)) answered in ${ms} ms; ${POOL_SIZE * 2} more in ${burstMs} ms; one after the rest had their turns in ${after.ms} ms`,
    );
  } finally {
    for (const reader of stalled) reader.close();
  }
}

test('twelve readers at one address that never read: a one-row read there is answered long before the stall timeout', async () => {
  await twelveSlowReaders(Array(READERS).fill('127.0.0.2'), '127.0.0.2');
}, 60_000);

test('twelve readers at twelve addresses that never read: a one-row read is answered long before the stall timeout', async () => {
  const addresses = Array.from({ length: READERS }, (_, i) => `127.0.0.${i + 2}`);
  await twelveSlowReaders(addresses, '127.0.0.1');
}, 60_000);

/** How long the honest readers below read slowly before they take the rest at full speed. */
const READ_SLOWLY_MS = 8000;

/**
 * A fetch of `path` that takes a chunk every 40 ms (as outage.test's readSlowly) for
 * READ_SLOWLY_MS, then the rest as fast as it comes; its status and rows.
 */
async function fetchSlowly(url: string): Promise<{ status: number; rows: number }> {
  const response = await fetch(url);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const slowUntil = Date.now() + READ_SLOWLY_MS;
  const pieces: string[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    pieces.push(decoder.decode(value, { stream: true }));
    if (Date.now() < slowUntil) await sleep(40);
  }
  return { status: response.status, rows: (JSON.parse(pieces.join('')) as unknown[]).length };
}

/**
 * A raw request for `path` that takes 16 KiB every 100 ms for READ_SLOWLY_MS, then the rest as
 * fast as it comes; whether the chunked answer ended whole (its last chunk, after the `]`).
 */
function socketSlowly(port: number, path: string, localAddress: string): Promise<boolean> {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress });
  socket.pause();
  socket.on('error', () => {});
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  let tail = '';
  const take = (chunk: Buffer) => {
    tail = (tail + chunk.subarray(-16).toString('latin1')).slice(-16);
  };
  const pace = setInterval(() => {
    for (let budget = 16 * 1024; budget > 0; ) {
      const chunk: Buffer | null = socket.read(Math.min(budget, socket.readableLength || 1));
      if (chunk === null) break;
      take(chunk);
      budget -= chunk.length;
    }
  }, 100);
  setTimeout(() => {
    clearInterval(pace);
    socket.on('data', take);
    socket.resume();
  }, READ_SLOWLY_MS);
  return new Promise((resolve) => {
    socket.on('close', () => {
      clearInterval(pace);
      resolve(tail.endsWith(']\r\n0\r\n\r\n'));
    });
  });
}

test('honest slow readers holding the whole pool while one-row reads wait are never taken back', async () => {
  const paced = await startTestGateway(db.name, {
    db: { ...testServer(), database: db.name, poolSize: 2 },
    stallTimeoutMs: DEFAULTS.stallTimeoutMs,
    minReadRate: DEFAULTS.minReadRate,
    maxClientRequests: DEFAULTS.maxClientRequests,
  });
  try {
    const port = Number(new URL(paced.url).port);
    const slow = fetchSlowly(`${paced.url}/table/big/read`);
    const slower = socketSlowly(port, '/table/big/read', '127.0.0.3');
    await sleep(300);
    // One-row reads wait for the pool the whole time the two read slowly.
    const waiting = Array.from({ length: 4 }, () =>
      rawRequest(`${paced.url}/table/small/read`, { localAddress: '127.0.0.4' }),
    );
    const stats = paced.gateway.db.stats;
    for (let i = 0; i < 40 && stats().waiting < 4; i++) await sleep(50);
    for (let i = 0; i < (READ_SLOWLY_MS - 2500) / 250; i++) {
      expect([stats().waiting, paced.gateway.db.takenBack()]).toEqual([4, 0]);
      await sleep(250);
    }
    const [fetched, whole] = await Promise.all([slow, slower]);
    expect(fetched).toEqual({ status: 200, rows: ROWS });
    expect(whole).toBe(true);
    expect(paced.gateway.db.takenBack()).toBe(0);
    const answers = await Promise.all(waiting);
    expect(answers.map((answer) => [answer.status, answer.body])).toEqual(
      Array(4).fill([200, ONE_ROW.body]),
    );
  } finally {
    await paced.close();
  }
}, 120_000);
