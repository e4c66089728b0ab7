/**
 * What one client may hold (docs/operations.md), asserted by counting answers on a real
 * gateway: requests in progress per client address (`--max-client-requests`), the time a JSON
 * body may take to arrive (`--body-timeout`; uploads exempt), open connections
 * (`--max-connections`), which address is "the client" (`--trust-proxy`), and the liveness probe.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway } from '../helpers/gateway.js';
import { multipartBody } from '../helpers/multipart.js';
import { countStatuses, rawRequest } from '../helpers/raw-http.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(`
    CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50));
    INSERT INTO t (name) VALUES ('one'), ('two');
  `);
});
afterAll(async () => {
  await db.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A socket from `localAddress` to the gateway, connected. */
function connect(url: string, localAddress = '127.0.0.1'): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress }, () =>
      resolve(socket),
    );
    socket.once('error', reject);
  });
}

/** Everything the server sends until it closes the connection (or `waitMs` passes). */
function collect(socket: net.Socket, waitMs: number): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    const timer = setTimeout(() => resolve({ text, closed: false }), waitMs);
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
    });
    socket.on('error', () => {});
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
  });
}

/** A create whose body never arrives in full: in progress until the body timeout. */
async function stalledCreate(url: string, localAddress?: string): Promise<net.Socket> {
  const socket = await connect(url, localAddress);
  socket.on('error', () => {});
  socket.write(
    'POST /table/t/create HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
      'Content-Length: 100\r\n\r\n{"name":',
  );
  return socket;
}

describe('--max-client-requests', () => {
  test('ten stalled requests from one address with a cap of 3: 3 held, 7 × 429; others are served', async () => {
    const gw = await startTestGateway(db.name, { maxClientRequests: 3 });
    const sockets: net.Socket[] = [];
    try {
      for (let i = 0; i < 3; i++) sockets.push(await stalledCreate(gw.url));
      await sleep(200);
      const refused = await Promise.all(
        Array.from({ length: 7 }, () => rawRequest(`${gw.url}/table/t/read`)),
      );
      expect(countStatuses(refused)).toEqual({ 429: 7 });
      expect(refused[0]?.headers['retry-after']).toBe('1');
      expect(refused[0]?.body).toEqual({
        success: false,
        message: 'Too many requests from this address at once; retry in 1 second',
        code: 'TOO_MANY_CONCURRENT_REQUESTS',
      });
      // Another client is served; the probes are never refused.
      const other = await rawRequest(`${gw.url}/table/t/read`, { localAddress: '127.0.0.2' });
      expect(other.status).toBe(200);
      expect((await rawRequest(`${gw.url}/health`)).status).toBe(200);
      expect((await rawRequest(`${gw.url}/live`)).status).toBe(200);
      // A request that ends gives its place back.
      sockets.pop()?.destroy();
      await sleep(200);
      expect((await rawRequest(`${gw.url}/table/t/read`)).status).toBe(200);
    } finally {
      for (const socket of sockets) socket.destroy();
      await gw.close();
    }
  });

  test('a request refused before its body is in holds its connection no longer than the body bound', async () => {
    const gw = await startTestGateway(db.name, { maxClientRequests: 1, bodyTimeoutMs: 1500 });
    try {
      const holder = await stalledCreate(gw.url);
      const held = collect(holder, 10_000);
      await sleep(200);
      const refused = await stalledCreate(gw.url);
      const answer = collect(refused, 10_000);
      const trickle = setInterval(() => refused.writable && refused.write(' '), 300);
      const { text, closed } = await answer;
      clearInterval(trickle);
      expect(text).toMatch(/^HTTP\/1\.1 429 /);
      expect(closed).toBe(true);
      expect((await held).text).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      await gw.close();
    }
  });

  test("a $batch's reads are its caller's: not counted again, nor as the loopback address's", async () => {
    const gw = await startTestGateway(db.name, { maxClientRequests: 1 });
    const batch = {
      json: { requests: [{ id: '1', method: 'GET', url: 't(1)' }] },
      headers: { accept: 'application/json' },
    };
    const expectRead = (answer: { status: number; body: unknown }) => {
      expect(answer.status).toBe(200);
      const [part] = (answer.body as { responses: { status: number; body: unknown }[] }).responses;
      expect({ status: part?.status, body: part?.body }).toEqual({
        status: 200,
        body: {
          '@odata.context': expect.stringMatching(/\$metadata#t\/\$entity$/),
          '@odata.etag': expect.any(String),
          id: 1,
          name: 'one',
        },
      });
    };
    let holder: net.Socket | undefined;
    try {
      // The batch's own place is its one; its read takes no second one.
      expectRead(await rawRequest(`${gw.url}/odata/$batch`, batch));
      // 127.0.0.1's place is taken: a batch from 127.0.0.2 still reads (its reads went to the
      // gateway from 127.0.0.1, and were refused as that address's).
      holder = await stalledCreate(gw.url);
      await sleep(200);
      expect((await rawRequest(`${gw.url}/table/t/read`)).status).toBe(429);
      expectRead(
        await rawRequest(`${gw.url}/odata/$batch`, { ...batch, localAddress: '127.0.0.2' }),
      );
    } finally {
      holder?.destroy();
      await gw.close();
    }
  });

  test("a forged loopback seal is ignored: the request is its socket address's", async () => {
    const gw = await startTestGateway(db.name, { maxClientRequests: 1 });
    const holder = await stalledCreate(gw.url);
    try {
      await sleep(200);
      // Naming another client (and a short or wrong key) must not take a place of its own.
      for (const seal of ['x 127.0.0.9 http://evil', `${'A'.repeat(32)} 127.0.0.9 http://evil`]) {
        const answer = await rawRequest(`${gw.url}/table/t/read`, {
          headers: { 'x-tablegate-loopback': seal },
        });
        expect(answer.status).toBe(429);
      }
    } finally {
      holder.destroy();
      await gw.close();
    }
  });

  test('0 means no cap', async () => {
    const gw = await startTestGateway(db.name, { maxClientRequests: 0 });
    const sockets: net.Socket[] = [];
    try {
      for (let i = 0; i < 12; i++) sockets.push(await stalledCreate(gw.url));
      await sleep(200);
      expect((await rawRequest(`${gw.url}/table/t/read`)).status).toBe(200);
    } finally {
      for (const socket of sockets) socket.destroy();
      await gw.close();
    }
  });
});

// contains() with a 201-character pattern cost 30 s of database CPU, and
// ten at once made a one-row read take 28 s. Now the filter is refused before any SQL.
describe('$filter patterns', () => {
  test('ten reads with a 201-character contains pattern at once: 10 × 400, no statement run', async () => {
    const gw = await startTestGateway(db.name);
    try {
      const filter = encodeURIComponent(`contains(name,'${'x'.repeat(201)}')`);
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => rawRequest(`${gw.url}/table/t/read?$filter=${filter}`)),
      );
      expect(countStatuses(answers)).toEqual({ 400: 10 });
      expect(answers[0]?.body).toEqual({
        success: false,
        message:
          'Invalid $filter at position 15: contains, startswith and endswith patterns may have at most 100 characters in all',
        code: 'LIMIT_EXCEEDED',
      });
      const short = encodeURIComponent(`contains(name,'${'n'.repeat(100)}')`);
      expect(await rawRequest(`${gw.url}/table/t/read?$filter=${short}`)).toMatchObject({
        status: 200,
        body: [],
      });
    } finally {
      await gw.close();
    }
  });
});

describe('--body-timeout', () => {
  test('a JSON body trickled past the bound is cut with a JSON 408 and the connection closed', async () => {
    const gw = await startTestGateway(db.name, { bodyTimeoutMs: 1000 });
    try {
      const socket = await stalledCreate(gw.url);
      const answer = collect(socket, 10_000);
      // One byte every 300 ms: never idle, never done.
      const trickle = setInterval(() => socket.writable && socket.write(' '), 300);
      const { text, closed } = await answer;
      clearInterval(trickle);
      expect(closed).toBe(true);
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
      expect(text).toMatch(/\r\nconnection: close\r\n/i);
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual({
        success: false,
        message: 'The request took too long to arrive',
        code: 'REQUEST_TIMEOUT',
      });
      const [rows] = await db.admin.query('SELECT COUNT(*) AS n FROM t');
      expect(Number((rows as { n: string }[])[0]?.n)).toBe(2);
    } finally {
      await gw.close();
    }
  });

  test('a body that arrives in time is served; an upload may take longer', async () => {
    const gw = await startTestGateway(db.name, { bodyTimeoutMs: 1000 });
    try {
      const created = await rawRequest(`${gw.url}/table/t/create`, { json: { name: 'quick' } });
      expect(created.status).toBe(200);
      // An upload sent in pieces over about 2.5 s: files stream, the body bound does not apply.
      const { contentType, body } = multipartBody([
        { name: 'files', filename: 'slow.txt', contentType: 'text/plain', body: 'x'.repeat(5000) },
      ]);
      const socket = await connect(gw.url);
      const answer = collect(socket, 15_000);
      socket.write(
        `POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${contentType}\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      const pieces = 5;
      const size = Math.ceil(body.length / pieces);
      for (let i = 0; i < pieces; i++) {
        socket.write(body.subarray(i * size, (i + 1) * size));
        await sleep(500);
      }
      const { text } = await answer;
      expect(text).toMatch(/^HTTP\/1\.1 200 /);
      expect(text).toContain('"originalname":"slow.txt"');
    } finally {
      await gw.close();
    }
  });
});

describe('--max-connections', () => {
  test('connections past the cap are closed at once; those already open are served', async () => {
    const gw = await startTestGateway(db.name, { maxConnections: 4 });
    const open: net.Socket[] = [];
    try {
      for (let i = 0; i < 4; i++) open.push(await connect(gw.url));
      await sleep(100);
      const refused = await Promise.all(
        Array.from({ length: 3 }, async () => {
          const socket = await connect(gw.url).catch(() => null);
          if (socket === null) return { text: '', closed: true };
          const answer = collect(socket, 5000);
          socket.write('GET /live HTTP/1.1\r\nHost: localhost\r\n\r\n');
          return answer;
        }),
      );
      expect(refused).toEqual([
        { text: '', closed: true },
        { text: '', closed: true },
        { text: '', closed: true },
      ]);
      // The open ones still work.
      const first = open[0] as net.Socket;
      const answer = collect(first, 5000);
      first.write('GET /live HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      expect((await answer).text).toMatch(/^HTTP\/1\.1 200 /);
      // A place that frees up is taken again.
      await sleep(200);
      expect((await rawRequest(`${gw.url}/live`)).status).toBe(200);
    } finally {
      for (const socket of open) socket.destroy();
      await gw.close();
    }
  });
});

describe('--trust-proxy', () => {
  /** 11 failed logins for one email, each claiming another client in X-Forwarded-For. */
  async function spoofedFailures(url: string) {
    const answers = [];
    for (let i = 0; i < 11; i++) {
      answers.push(
        await rawRequest(`${url}/auth/login`, {
          json: { email: 'victim@example.com', password: 'wrong password' },
          headers: { 'x-forwarded-for': `203.0.113.${i + 1}` },
        }),
      );
    }
    return countStatuses(answers);
  }

  test('off by default: X-Forwarded-For is ignored, the limits count the socket address', async () => {
    const gw = await startTestGateway(db.name, { mode: 'auth', jwtSecret: 'x'.repeat(32) });
    try {
      expect(await spoofedFailures(gw.url)).toEqual({ 401: 10, 429: 1 });
    } finally {
      await gw.close();
    }
  });

  test('trusted (here: the loopback proxy): the limits count the forwarded client', async () => {
    const gw = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: 'y'.repeat(32),
      trustProxy: ['loopback'],
    });
    try {
      expect(await spoofedFailures(gw.url)).toEqual({ 401: 11 });
      // The same forwarded client, again and again, is limited as one.
      const again = [];
      for (let i = 0; i < 10; i++) {
        again.push(
          await rawRequest(`${gw.url}/auth/login`, {
            json: { email: 'victim@example.com', password: 'wrong password' },
            headers: { 'x-forwarded-for': '203.0.113.1' },
          }),
        );
      }
      expect(countStatuses(again)).toEqual({ 401: 9, 429: 1 });
    } finally {
      await gw.close();
    }
  });

  test('a hop count trusts that many proxies', async () => {
    const gw = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: 'z'.repeat(32),
      trustProxy: 1,
    });
    try {
      expect(await spoofedFailures(gw.url)).toEqual({ 401: 11 });
    } finally {
      await gw.close();
    }
  });
});

describe('GET /live', () => {
  test('answers while MySQL does not (readiness /health says 503); no token needed', async () => {
    const gw = await startTestGateway(db.name, { mode: 'auth', jwtSecret: 'l'.repeat(32) });
    try {
      expect(await rawRequest(`${gw.url}/live`)).toMatchObject({
        status: 200,
        body: { status: 'ok' },
      });
      await gw.gateway.db.close();
      expect(await rawRequest(`${gw.url}/live`)).toMatchObject({
        status: 200,
        body: { status: 'ok' },
      });
      expect(await rawRequest(`${gw.url}/health`)).toMatchObject({
        status: 503,
        body: { status: 'unavailable' },
      });
    } finally {
      await gw.close().catch(() => {});
    }
  });
});
