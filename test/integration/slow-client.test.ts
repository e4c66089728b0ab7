/**
 * Hostile clients (docs/operations.md): a client trickling its headers (slowloris) is cut off
 * with a JSON 408 once the headers timeout passes, and 50 of them at once do not slow anyone
 * else down; an oversized header block is a JSON 431, an oversized body a JSON 413, a request
 * line of garbage a JSON 400.
 *
 * The real headers timeout is 30 s. To keep this test short, the slowloris part runs on a second
 * listener built by the same buildServer (same routes, hooks and client error handler, sharing
 * the gateway's pool and schema) with a 3 s headers timeout, checked every 250 ms.
 */
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { HEADERS_TIMEOUT_MS, MAX_HEADER_BYTES, SOCKET_IDLE_TIMEOUT_MS } from '../../src/limits.js';
import { buildServer } from '../../src/server.js';
import { DiskStorage } from '../../src/uploads/storage.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SHORT_HEADERS_TIMEOUT_MS = 3000;
const CHECK_INTERVAL_MS = 250;
const SLOW_CLIENTS = 50;
const TRICKLE_MS = 500;

let db: TestDatabase;
let gw: TestGateway;
/** The same server with a short headers timeout, on its own port. */
let short: FastifyInstance;
let shortPort: number;

beforeAll(async () => {
  db = await createTestDatabase(`
    CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20));
    INSERT INTO t VALUES (1, 'one'), (2, 'two');
  `);
  gw = await startTestGateway(db.name);
  short = await buildServer({
    config: gw.config,
    db: gw.gateway.db,
    schema: gw.gateway.schema,
    log: gw.gateway.log,
    skiptokens: gw.gateway.skiptokens,
    uploads: new DiskStorage(gw.config.uploadsDir),
  });
  // Read by Node when the server starts listening (connectionsCheckingInterval is missing from
  // @types/node 20's Server type; it is Node's http.Server option of that name).
  const server = short.server as typeof short.server & { connectionsCheckingInterval: number };
  server.headersTimeout = SHORT_HEADERS_TIMEOUT_MS;
  server.connectionsCheckingInterval = CHECK_INTERVAL_MS;
  await short.listen({ port: 0, host: '127.0.0.1' });
  const address = short.server.address();
  shortPort = typeof address === 'object' && address ? address.port : 0;
});

afterAll(async () => {
  await short?.close();
  await gw?.close();
  await db?.drop();
});

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** Milliseconds from connecting to the server closing the connection. */
  readonly closedAfterMs: number;
  /** Parts not yet written when the server closed the connection. */
  readonly unsentParts: number;
}

function parseAnswer(raw: string, closedAfterMs: number, unsentParts: number): RawAnswer {
  const [head = '', ...rest] = raw.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return {
    status: Number(statusLine.split(' ')[1] ?? 0),
    headers,
    body: rest.join('\r\n\r\n'),
    closedAfterMs,
    unsentParts,
  };
}

/**
 * Writes `parts` on a raw socket (`pauseMs` between them), then waits for the server to answer
 * and close (`onClose` then), writing no more once an answer arrives.
 */
function exchange(
  port: number,
  parts: readonly (string | Buffer)[],
  pauseMs = 0,
  timeoutMs = 10_000,
  onClose?: () => void,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let answered = false;
    let written = 0;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      answered = true;
      chunks.push(chunk);
    });
    // A write after the server closed is expected here; the answer is what counts.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      onClose?.();
      const raw = Buffer.concat(chunks).toString('utf8');
      resolve(parseAnswer(raw, Date.now() - started, parts.length - written));
    });
    socket.on('connect', async () => {
      for (const part of parts) {
        if (answered || socket.destroyed) return;
        socket.write(part);
        written++;
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      }
    });
  });
}

function json(answer: RawAnswer): unknown {
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  return JSON.parse(answer.body);
}

test('the limits are set explicitly on the real server', () => {
  const server = gw.gateway.app.server as typeof gw.gateway.app.server & { maxHeaderSize: number };
  expect(HEADERS_TIMEOUT_MS).toBe(30_000);
  expect(server.headersTimeout).toBe(HEADERS_TIMEOUT_MS);
  expect(server.requestTimeout).toBe(0);
  expect(SOCKET_IDLE_TIMEOUT_MS).toBe(60_000);
  expect(server.timeout).toBe(SOCKET_IDLE_TIMEOUT_MS);
  expect(MAX_HEADER_BYTES).toBe(16 * 1024);
  expect(server.maxHeaderSize).toBe(MAX_HEADER_BYTES);
});

test('50 slowloris clients are cut off with a JSON 408 and hold up nobody else', async () => {
  // Each sends a request line, then one byte of a header every 500 ms, never finishing (30 s of
  // bytes, far past the headers timeout).
  const trickle = Array.from({ length: 60 }, () => 'a');
  let slowClosed = 0;
  const slow = Array.from({ length: SLOW_CLIENTS }, () =>
    exchange(
      shortPort,
      ['GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ', ...trickle],
      TRICKLE_MS,
      25_000,
      () => slowClosed++,
    ),
  );
  // Meanwhile, ordinary requests on the same listener, one after another, counted while every
  // slow client is still connected: had they held the listener up, none would be answered before
  // the first of them was cut.
  await new Promise((r) => setTimeout(r, 300));
  const latencies: number[] = [];
  let answeredBesideAll = 0;
  for (let round = 0; round < 10 && slowClosed === 0; round++) {
    for (const path of ['/health', '/table/t/read?$orderby=id']) {
      const started = Date.now();
      const response = await fetch(`http://127.0.0.1:${shortPort}${path}`);
      await response.text();
      expect(response.status).toBe(200);
      latencies.push(Date.now() - started);
      if (slowClosed === 0) answeredBesideAll++;
    }
  }
  const answers = await Promise.all(slow);
  for (const answer of answers) {
    expect(answer.status).toBe(408);
    expect(answer.headers.connection).toBe('close');
    expect(json(answer)).toEqual({
      success: false,
      message: 'The request took too long to arrive',
      code: 'REQUEST_TIMEOUT',
    });
    // Not before the timeout (load only makes it later), and by the server: the client still
    // had bytes of its trickle to send.
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(SHORT_HEADERS_TIMEOUT_MS - 100);
    expect(answer.unsentParts).toBeGreaterThan(0);
  }
  // At least one /health and one read answered while all 50 were held open.
  expect(answeredBesideAll).toBeGreaterThanOrEqual(2);
  const slowest = Math.max(...latencies);
  const cut = answers.map((a) => a.closedAfterMs);
  console.log(
    `slowloris: ${SLOW_CLIENTS} clients cut off with 408 after ${Math.min(...cut)}–${Math.max(...cut)} ms ` +
      `(headers timeout ${SHORT_HEADERS_TIMEOUT_MS} ms, checked every ${CHECK_INTERVAL_MS} ms); meanwhile ${answeredBesideAll} ordinary requests answered beside all of them, slowest ${slowest} ms`,
  );
}, 40_000);

test('a header block over 16 KiB is a JSON 431', async () => {
  const port = Number(new URL(gw.url).port);
  const header = await exchange(port, [
    `GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(MAX_HEADER_BYTES + 1)}\r\n\r\n`,
  ]);
  expect(header.status).toBe(431);
  expect(json(header)).toEqual({
    success: false,
    message: 'The request line or headers are too large',
    code: 'HEADERS_TOO_LARGE',
  });
  // Many small headers that add up, and a request line alone that is too long.
  const many = Array.from({ length: 400 }, (_, i) => `X-H${i}: ${'b'.repeat(50)}\r\n`).join('');
  const headers = await exchange(port, [`GET /health HTTP/1.1\r\nHost: localhost\r\n${many}\r\n`]);
  expect(headers.status).toBe(431);
  const line = await exchange(port, [
    `GET /table/t/read?$filter=${'x'.repeat(MAX_HEADER_BYTES + 1)} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
  ]);
  expect(line.status).toBe(431);
  expect((json(line) as { code: string }).code).toBe('HEADERS_TOO_LARGE');
});

test('a body over the limit is a JSON 413, declared or streamed', async () => {
  const port = Number(new URL(gw.url).port);
  const limit = gw.config.bodyLimit;
  const tooLarge = {
    success: false,
    message: 'Request body is too large',
    code: 'BODY_TOO_LARGE',
  };
  // Declared: refused from the Content-Length alone, before any body byte.
  const declared = await exchange(port, [
    `POST /table/t/create HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${limit + 1}\r\n\r\n`,
  ]);
  expect(declared.status).toBe(413);
  expect(json(declared)).toEqual(tooLarge);
  // Streamed (chunked, no length): refused once the limit is passed.
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const chunks = Array.from({ length: Math.ceil(limit / chunk.length) + 2 }, () =>
    Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]),
  );
  const streamed = await exchange(port, [
    'POST /table/t/create HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    '1\r\n[\r\n',
    ...chunks,
  ]);
  expect(streamed.status).toBe(413);
  expect(json(streamed)).toEqual(tooLarge);
  // The server is fine afterwards.
  expect((await fetch(`${gw.url}/health`)).status).toBe(200);
});

test('garbage instead of a request line is a JSON 400', async () => {
  const port = Number(new URL(gw.url).port);
  const malformed = {
    success: false,
    message: 'The request is not valid HTTP',
    code: 'MALFORMED_REQUEST',
  };
  for (const garbage of [
    'HELLO WORLD\r\n\r\n',
    'GET / HTTP/9.9\r\n\r\n',
    '\u0000\u0001\u0002\r\n\r\n',
    'GET /health HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n',
    'GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n',
  ]) {
    const answer = await exchange(port, [garbage]);
    expect({ garbage, status: answer.status }).toEqual({ garbage, status: 400 });
    expect(json(answer)).toEqual(malformed);
  }
});
