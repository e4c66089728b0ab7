/**
 * The change feed read by the clients apps use (docs/changes.md "Examples"), in auth mode under a
 * policy, against a private MariaDB with the binary log on; every change is written by a plain
 * mysql2 connection, not through the gateway:
 * - `@microsoft/fetch-event-source` (the token in an `Authorization` header): the exact events of
 *   the caller's rows, the 401 an invalid or expired token gets, and resuming with the last event
 *   id after the gateway restarts;
 * - the `eventsource` package: it reconnects by itself with `Last-Event-ID` when the gateway
 *   restarts on the same port, and gets exactly the events written meanwhile, none twice.
 * The browser's own EventSource with `?access_token=` is test/browser/changes.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { type EventSourceMessage, fetchEventSource } from '@microsoft/fetch-event-source';
import { EventSource } from 'eventsource';
import { SignJWT } from 'jose';
import type mysql from 'mysql2/promise';
import type { PrivateServer } from '../../src/demo/private-server.js';
import { postCredentials, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { rootConnection, startBinlogServer } from '../helpers/private-servers.js';

/**
 * fetch-event-source is a browser library: it calls `window.fetch`, `window.setTimeout` and
 * `window.clearTimeout`, and `document.removeEventListener` when it stops, even with
 * `openWhenHidden: true`. Node has fetch and the timers but no `window` or `document`: these two
 * globals are all it needs in Node (docs/changes.md says so).
 */
Object.assign(globalThis, { window: globalThis, document: new EventTarget() });

const SECRET = 'changes-clients-secret-0123456789abcdefghijkl';
const PASSWORD = 'correct horse battery';
const ANN = 'ann@example.com';
const BOB = 'bob@example.com';
const POLICY = {
  roles: {
    user: {
      tables: {
        posts: { read: { where: 'owner eq @user.email', columns: ['id', 'owner', 'body'] } },
      },
    },
  },
};
/** The commit time every change of these tests is written with (`SET timestamp`). */
const COMMITTED = 1_767_323_045; // 2026-01-02 03:04:05 UTC
const AT = '2026-01-02 03:04:05';

let server: PrivateServer;
let writer: mysql.Connection;
let gw: TestGateway;
let dir: string;
const tokens: Record<string, string> = {};
const DB = `feed_clients_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  server = await startBinlogServer();
  writer = await rootConnection(server);
  await writer.query(`CREATE DATABASE ${DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await writer.query(`USE ${DB}`);
  await writer.query(
    `CREATE TABLE posts (id INT AUTO_INCREMENT PRIMARY KEY, owner VARCHAR(60) NOT NULL,
      body VARCHAR(100) NOT NULL, secret VARCHAR(20) NULL)`,
  );
  await writer.query(`SET timestamp = ${COMMITTED}`);
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-feed-clients-'));
  const policyFile = path.join(dir, 'policy.json');
  await writeFile(policyFile, JSON.stringify(POLICY));
  gw = await startTestGateway(DB, {
    db: {
      host: server.host,
      port: server.port,
      user: server.user,
      password: server.password,
      database: DB,
      poolSize: 4,
    },
    mode: 'auth',
    jwtSecret: SECRET,
    policyFile,
    stateDir: dir,
    uploadsDir: path.join(dir, 'uploads'),
  });
  for (const email of [ANN, BOB]) {
    await postCredentials(gw.url, '/auth/register', email, PASSWORD);
    const login = await postCredentials(gw.url, '/auth/login', email, PASSWORD);
    tokens[email] = (login.body as { token: string }).token;
  }
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await writer?.end();
  await server?.destroy();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs one autocommitted statement and gives back its transaction's GTID (the events' `tx`). */
async function write(sql: string, values: unknown[] = []): Promise<string> {
  await writer.query(sql, values);
  const [[row]] = (await writer.query('SELECT @@last_gtid AS gtid')) as unknown as [
    { gtid: string }[],
  ];
  return row?.gtid as string;
}

/**
 * A gateway of the test's own, as `gw` (the same secret, so the same ids), that `restart` stops
 * and starts again on the same port. Its own, so that no spare connection an earlier test's
 * fetch opened to it is there when it stops: a stopping gateway answers a request on such a
 * connection with a 503, and an EventSource gives up for good on a 503.
 */
async function ownGateway() {
  let own = await startTestGateway(DB, gw.config);
  return {
    url: own.url,
    async restart(meanwhile: () => Promise<void>): Promise<void> {
      const port = Number(new URL(own.url).port);
      await own.close();
      await meanwhile();
      own = await startTestGateway(DB, { ...own.config, listenPort: port });
      expect(own.url).toBe(`http://127.0.0.1:${port}`);
    },
    close: () => own.close(),
  };
}

async function waitFor<T>(items: T[], count: number, ms = 15_000): Promise<T[]> {
  const deadline = Date.now() + ms;
  while (items.length < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return items;
}

/** Waits long enough for anything a change would have sent. */
const settle = (ms = 700) => new Promise((resolve) => setTimeout(resolve, ms));

/** What fetch-event-source's onopen saw when the answer was not the stream. */
class RefusedError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly authenticate: string | null,
  ) {
    super(`the feed answered ${status}`);
  }
}
/** The server ended the stream: fetch-event-source retries when onclose throws. */
class StreamEndedError extends Error {}

interface Received {
  readonly id: string;
  readonly event: string;
  readonly data: unknown;
}

/**
 * The feed read with fetch-event-source as docs/changes.md shows it: the token in a header, a
 * refused answer stops it (the promise rejects with what onopen saw), a stream the server ends
 * is opened again with the last event id.
 */
function follow(url: string, token: string) {
  const events: Received[] = [];
  const opened: Response[] = [];
  const controller = new AbortController();
  const done = fetchEventSource(url, {
    headers: { Authorization: `Bearer ${token}` },
    openWhenHidden: true,
    signal: controller.signal,
    async onopen(response) {
      opened.push(response);
      if (response.ok) return;
      // A 4xx (but 429) will not change by retrying: stop; anything else is retried.
      const retry = response.status >= 500 || response.status === 429;
      if (retry) throw new Error(`the feed answered ${response.status}`);
      throw new RefusedError(
        response.status,
        await response.json(),
        response.headers.get('www-authenticate'),
      );
    },
    onmessage(message: EventSourceMessage) {
      // It hands on every blank line, also the one after `retry:` and after a keep-alive comment.
      if (message.event === '') return;
      events.push({ id: message.id, event: message.event, data: JSON.parse(message.data) });
    },
    onclose() {
      throw new StreamEndedError();
    },
    onerror(error) {
      if (error instanceof RefusedError) throw error;
      // Anything else (the stream ended, the gateway is not there): retry after `retry:`.
    },
  });
  return { events, opened, done, stop: () => controller.abort() };
}

describe('@microsoft/fetch-event-source with the token in the Authorization header', () => {
  test("the caller's rows arrive as the exact events, others' never", async () => {
    const feed = follow(`${gw.url}/table/posts/changes`, tokens[ANN] as string);
    await waitFor(feed.opened, 1);
    const first = await write(
      'INSERT INTO posts (id, owner, body, secret) VALUES (1, ?, ?, ?), (2, ?, ?, ?)',
      [ANN, 'ann 1', 's1', BOB, 'bob 1', 's2'],
    );
    const edited = await write(
      "UPDATE posts SET body = 'ann 1 edited', secret = 's3' WHERE id = 1",
    );
    const bobsOwn = await write("UPDATE posts SET body = 'bob 1 edited' WHERE id = 2");
    // Bob's post handed to ann comes into her view: an insert for her.
    const handed = await write('UPDATE posts SET owner = ? WHERE id = 2', [ANN]);
    const removed = await write('DELETE FROM posts WHERE id = 1');
    await waitFor(feed.events, 4);
    await settle();
    feed.stop();
    await feed.done;
    expect(new Set([first, edited, bobsOwn, handed, removed]).size).toBe(5);
    expect(feed.events.map(({ event, data }) => ({ event, data }))).toEqual([
      {
        event: 'insert',
        data: {
          op: 'insert',
          table: 'posts',
          key: { id: 1 },
          row: { id: 1, owner: ANN, body: 'ann 1' },
          at: AT,
          tx: first,
        },
      },
      {
        event: 'update',
        data: {
          op: 'update',
          table: 'posts',
          key: { id: 1 },
          row: { id: 1, owner: ANN, body: 'ann 1 edited' },
          at: AT,
          tx: edited,
        },
      },
      {
        event: 'insert',
        data: {
          op: 'insert',
          table: 'posts',
          key: { id: 2 },
          row: { id: 2, owner: ANN, body: 'bob 1 edited' },
          at: AT,
          tx: handed,
        },
      },
      {
        event: 'delete',
        data: { op: 'delete', table: 'posts', key: { id: 1 }, at: AT, tx: removed },
      },
    ]);
    expect(feed.events.every((e) => /^f1\.[\w-]+\.[\w-]+$/.test(e.id))).toBe(true);
    expect(new Set(feed.events.map((e) => e.id)).size).toBe(4);
    expect(feed.opened).toHaveLength(1);
    expect(feed.opened[0]?.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  });

  test('an invalid or an expired token: onopen sees the 401 JSON body, and it does not retry', async () => {
    const accessDenied = { success: false, message: 'Access Denied', code: 'ACCESS_DENIED' };
    const invalid = follow(`${gw.url}/table/posts/changes`, 'not.a.token');
    const refused = (await invalid.done.catch((error: unknown) => error)) as RefusedError;
    expect(refused).toBeInstanceOf(RefusedError);
    expect([refused.status, refused.body, refused.authenticate]).toEqual([
      401,
      accessDenied,
      'Bearer',
    ]);

    // Ann's own token, signed with the gateway's secret, its lifetime over a minute ago.
    const claims = JSON.parse(
      Buffer.from((tokens[ANN] as string).split('.')[1] as string, 'base64url').toString(),
    ) as Record<string, unknown>;
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ ...claims, iat: now - 3600, exp: now - 60 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode(SECRET));
    const late = follow(`${gw.url}/table/posts/changes`, expired);
    const lateRefusal = (await late.done.catch((error: unknown) => error)) as RefusedError;
    expect(lateRefusal).toBeInstanceOf(RefusedError);
    expect([lateRefusal.status, lateRefusal.body, lateRefusal.authenticate]).toEqual([
      401,
      accessDenied,
      'Bearer error="invalid_token", error_description="The access token expired"',
    ]);
    expect([invalid.opened.length, late.opened.length, late.events]).toEqual([1, 1, []]);
  });

  test('resumes with the last event id after the gateway restarts', async () => {
    const own = await ownGateway();
    const feed = follow(`${own.url}/table/posts/changes`, tokens[BOB] as string);
    try {
      await waitFor(feed.opened, 1);
      const before = await write('INSERT INTO posts (id, owner, body) VALUES (10, ?, ?)', [
        BOB,
        'before',
      ]);
      await waitFor(feed.events, 1);
      const meanwhile: string[] = [];
      await own.restart(async () => {
        meanwhile.push(
          await write('INSERT INTO posts (id, owner, body) VALUES (11, ?, ?)', [BOB, 'while down']),
          await write("UPDATE posts SET body = 'edited while down' WHERE id = 10"),
        );
      });
      const after = await write('INSERT INTO posts (id, owner, body) VALUES (12, ?, ?)', [
        BOB,
        'after',
      ]);
      await waitFor(feed.events, 4);
      await settle();
      expect(feed.events.map((e) => [e.event, (e.data as { tx: string }).tx])).toEqual([
        ['insert', before],
        ['insert', meanwhile[0]],
        ['update', meanwhile[1]],
        ['insert', after],
      ]);
      expect(feed.events.map((e) => (e.data as { row: unknown }).row)).toEqual([
        { id: 10, owner: BOB, body: 'before' },
        { id: 11, owner: BOB, body: 'while down' },
        { id: 10, owner: BOB, body: 'edited while down' },
        { id: 12, owner: BOB, body: 'after' },
      ]);
      // Opened again once the port answered (the tries before failed to connect).
      expect(feed.opened.map((r) => r.status)).toEqual([200, 200]);
    } finally {
      feed.stop();
      await feed.done;
      await own.close();
    }
  }, 45_000);
});

describe('the eventsource package', () => {
  test('reconnects by itself with Last-Event-ID and gets exactly the events written meanwhile', async () => {
    const own = await ownGateway();
    const token = tokens[ANN] as string;
    const received: { op: string; id: string; data: Record<string, unknown> }[] = [];
    let opens = 0;
    let opened: () => void = () => {};
    const open = new Promise<void>((resolve) => {
      opened = resolve;
    });
    // As docs/changes.md's Node example: the header through its fetch option.
    const feed = new EventSource(`${own.url}/table/posts/changes`, {
      fetch: (url, init) =>
        fetch(url, { ...init, headers: { ...init.headers, Authorization: `Bearer ${token}` } }),
    });
    feed.onopen = () => {
      opens += 1;
      opened();
    };
    for (const op of ['insert', 'update', 'delete']) {
      feed.addEventListener(op, (e) =>
        received.push({ op, id: e.lastEventId, data: JSON.parse(e.data) }),
      );
    }
    try {
      await open;
      const before = await write('INSERT INTO posts (id, owner, body) VALUES (20, ?, ?)', [
        ANN,
        'before',
      ]);
      await waitFor(received, 1);
      const meanwhile: string[] = [];
      await own.restart(async () => {
        meanwhile.push(
          await write('INSERT INTO posts (id, owner, body) VALUES (21, ?, ?), (22, ?, ?)', [
            ANN,
            'one',
            BOB,
            'not hers',
          ]),
          await write('DELETE FROM posts WHERE id = 20'),
        );
      });
      const after = await write("UPDATE posts SET body = 'after' WHERE id = 21");
      await waitFor(received, 4);
      await settle();
      expect(received.map((e) => [e.op, e.data.tx, e.data.key, e.data.row ?? null])).toEqual([
        ['insert', before, { id: 20 }, { id: 20, owner: ANN, body: 'before' }],
        ['insert', meanwhile[0], { id: 21 }, { id: 21, owner: ANN, body: 'one' }],
        ['delete', meanwhile[1], { id: 20 }, null],
        ['update', after, { id: 21 }, { id: 21, owner: ANN, body: 'after' }],
      ]);
      expect(new Set(received.map((e) => e.id)).size).toBe(4);
      expect([opens, feed.readyState]).toEqual([2, EventSource.OPEN]);
    } finally {
      feed.close();
      await own.close();
    }
  }, 45_000);
});
