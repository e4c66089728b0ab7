/**
 * Clients that stop reading a large result: a streamed read may hold its MySQL
 * connection only while its client takes data; once the client has taken nothing for the stall
 * timeout, the response is cut and the connection freed. Here as many such clients as the pool
 * has connections ask for a 54 MB read (more than the kernel's socket buffers hold) and never read it: /health stays 200 throughout (its
 * ping does not wait behind the pool), and an unrelated one-row read is served once the stalls
 * are cut — before this bound it waited for ever behind them.
 */
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { HEALTH_TIMEOUT_MS } from '../../src/limits.js';
import { createTestDatabase, integers, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testServer } from '../helpers/mysql-url.js';

const POOL_SIZE = 3;
// Well above HEALTH_TIMEOUT_MS: a /health that waited behind the pool would time out first.
const STALL_MS = 4000;
const ROWS = 200_000;

let db: TestDatabase;
let gw: TestGateway;

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
    stallTimeoutMs: STALL_MS,
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

interface Stalled {
  readonly socket: net.Socket;
  /** Starts reading; resolves with the bytes received once the server closed the connection. */
  drain(): Promise<number>;
}

/** Asks for every row of `big`, then reads nothing until `drain()`. */
function stalledReader(port: number): Stalled {
  const socket = net.connect(port, '127.0.0.1');
  socket.pause();
  socket.on('error', () => {});
  socket.write(`GET /table/big/read HTTP/1.1\r\nHost: x\r\n\r\n`);
  return {
    socket,
    drain: () =>
      new Promise<number>((resolve) => {
        let received = 0;
        socket.on('data', (chunk: Buffer) => {
          received += chunk.length;
        });
        socket.on('close', () => resolve(received));
        socket.resume();
      }),
  };
}

/** Polls the gateway's pool until `done` holds of its figures, at most `tries` × 50 ms. */
async function poolUntil(done: (inUse: number) => boolean, tries = 400): Promise<number> {
  for (let i = 0; i < tries && !done(gw.gateway.db.stats().inUse); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return gw.gateway.db.stats().inUse;
}

test('stalled readers are cut after the stall timeout; /health and other reads are served', async () => {
  const port = Number(new URL(gw.url).port);
  const stalled = Array.from({ length: POOL_SIZE }, () => stalledReader(port));
  // Every stalled read has taken its connection: the pool is all theirs.
  expect(await poolUntil((inUse) => inUse === POOL_SIZE)).toBe(POOL_SIZE);

  const healthStarted = Date.now();
  const health = await fetch(`${gw.url}/health`);
  // Answered while the stalled reads still held every connection: its ping did not wait behind
  // the pool (had it waited, it would have timed out after HEALTH_TIMEOUT_MS, well inside the
  // stall timeout, and answered 503).
  const inUseWhenAnswered = gw.gateway.db.stats().inUse;
  const healthMs = Date.now() - healthStarted;
  expect([health.status, await health.json(), inUseWhenAnswered]).toEqual([
    200,
    { status: 'ok' },
    POOL_SIZE,
  ]);

  // Waits behind the stalls, and is served once they are cut: before this bound it waited for
  // ever (the abort is a generous bound, not a measurement).
  const started = Date.now();
  const read = await fetch(`${gw.url}/table/small/read`, { signal: AbortSignal.timeout(30_000) });
  const waited = Date.now() - started;
  expect([read.status, await read.json()]).toEqual([200, [{ id: 1, name: 'one' }]]);

  // The stalled responses were cut short: once their connections are back in the pool, each
  // socket was closed before the 54 MB arrived (read now, a response still going would deliver
  // them all).
  expect(await poolUntil((inUse) => inUse === 0)).toBe(0);
  const received = await Promise.all(stalled.map((s) => s.drain()));
  for (const bytes of received) expect(bytes).toBeLessThan(ROWS * 250);

  // Every pool connection is free again: as many concurrent reads as the pool has all succeed.
  const after = await Promise.all(
    Array.from({ length: POOL_SIZE * 3 }, () => fetch(`${gw.url}/table/small/read`)),
  );
  expect(after.map((r) => r.status)).toEqual(Array(POOL_SIZE * 3).fill(200));
  console.log(
    `/health answered in ${healthMs} ms (its bound ${HEALTH_TIMEOUT_MS} ms) beside ${POOL_SIZE} stalled readers; one-row read behind them answered in ${waited} ms (stall timeout ${STALL_MS} ms)`,
  );
}, 60_000);
