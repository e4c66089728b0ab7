/**
 * The change feed (docs/changes.md): `GET /table/<t>/changes` against a private MariaDB with the
 * binary log on, changes written by a plain mysql2 connection (not the gateway), read with the
 * `eventsource` client as a Node or browser app reads them.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { EventSource } from 'eventsource';
import type mysql from 'mysql2/promise';
import { USERS_TABLE } from '../../src/db/schema.js';
import type { PrivateServer } from '../../src/demo/private-server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startBinlogDatabase } from '../helpers/private-servers.js';

interface Received {
  readonly event: string;
  readonly id: string;
  readonly data: Record<string, unknown>;
  /** The data line as sent. */
  readonly raw: string;
}

const NAMES = ['insert', 'update', 'delete', 'truncate', 'schema', 'overflow', 'expired', 'error'];

/** An EventSource on `url`, its events in arrival order. */
function subscribe(url: string, headers: Record<string, string> = {}) {
  const events: Received[] = [];
  const source = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...(init?.headers as object), ...headers } }),
  });
  for (const event of NAMES) {
    source.addEventListener(event, (message) => {
      const { data, lastEventId } = message as MessageEvent<string>;
      if (data !== undefined)
        events.push({ event, id: lastEventId, data: JSON.parse(data), raw: data });
    });
  }
  const opened = new Promise<void>((resolve, reject) => {
    source.onopen = () => resolve();
    setTimeout(() => reject(new Error('the stream did not open')), 10_000).unref();
  });
  const until = async (count: number, ms = 10_000): Promise<Received[]> => {
    const deadline = Date.now() + ms;
    while (events.length < count && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return events;
  };
  return { source, events, opened, until };
}

/** Waits long enough for anything a change would have sent. */
const settle = (ms = 700) => new Promise((resolve) => setTimeout(resolve, ms));

const SCHEMA = `
CREATE TABLE notes (id INT AUTO_INCREMENT PRIMARY KEY, owner VARCHAR(60) NOT NULL,
  body VARCHAR(200) NOT NULL, secret VARCHAR(20) NULL, price DECIMAL(30,10) NULL,
  at DATETIME(6) NULL, big BIGINT NULL, flags BIT(12) NULL, data BLOB NULL, j JSON NULL,
  ts TIMESTAMP(3) NULL, tm TIME(4) NULL, y YEAR NULL, d DATE NULL, f FLOAT NULL, e ENUM('a','b') NULL,
  st SET('x','y','z') NULL, ub BIGINT UNSIGNED NULL, vb VARBINARY(8) NULL);
`;

let server: PrivateServer;
let writer: mysql.Connection;
let gw: TestGateway;
const DB = `changes_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  ({ server, writer } = await startBinlogDatabase(DB, SCHEMA));
  gw = await startTestGateway(DB, {
    db: {
      host: server.host,
      port: server.port,
      user: server.user,
      password: server.password,
      database: DB,
      poolSize: 4,
    },
    logLevel: (process.env.TG_LOG as 'error') ?? 'silent',
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await writer?.end();
  await server?.destroy();
});

describe('open mode', () => {
  test('a change made by the mysql client arrives, typed as a read types it', async () => {
    const feed = subscribe(`${gw.url}/table/notes/changes`);
    await feed.opened;
    await writer.query(
      `INSERT INTO notes (owner, body, price, at, big, flags, data, j, ts, tm, y, d, f, e, st, ub, vb)
        VALUES ('ann', 'héllo 😀', 12345678901234567890.0123456789, '2024-01-02 03:04:05.123456',
         -9223372036854775807, b'101010101010', X'00FF10', '{"a": [1, 2.5]}',
         '2024-01-02 03:04:05.120', '-838:59:58.1234', 2024, '2024-02-29', 0.1, 'b', 'x,z',
         18446744073709551615, X'0001')`,
    );
    const [event] = await feed.until(1);
    feed.source.close();
    const read = await (await fetch(`${gw.url}/table/notes/read`)).text();
    expect(event?.event).toBe('insert');
    const data = event?.data as Record<string, unknown>;
    expect(Object.keys(data)).toEqual(['op', 'table', 'key', 'row', 'at', 'tx']);
    expect(data.op).toBe('insert');
    expect(data.table).toBe('notes');
    expect(data.key).toEqual({ id: 1 });
    expect(data.at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(data.tx).toMatch(/^\d+-\d+-\d+$/);
    // Byte for byte the row a read answers.
    expect(event?.raw).toContain(`"row":${read.slice(1, -1)},"at"`);
    expect(read).toContain('"price":12345678901234567890.0123456789');
    expect(read).toContain('"at":"2024-01-02 03:04:05.123456"');
    expect(read).toContain(
      '"ts":"2024-01-02 03:04:05.120","tm":"-838:59:58.1234","y":2024,"d":"2024-02-29"',
    );
    expect(read).toContain('"e":"b","st":"x,z","ub":"18446744073709551615","vb":"AAE="');
  });

  test("a transaction's events arrive together and in order; a rolled-back one sends nothing", async () => {
    const feed = subscribe(`${gw.url}/table/notes/changes`);
    await feed.opened;
    await writer.query("BEGIN; INSERT INTO notes (owner, body) VALUES ('bob', 'rolled back')");
    await writer.query('ROLLBACK');
    await writer.query(
      "BEGIN; INSERT INTO notes (id, owner, body) VALUES (10, 'bob', 'one'); UPDATE notes SET body = 'two' WHERE id = 10; DELETE FROM notes WHERE id = 10; COMMIT",
    );
    const events = await feed.until(3);
    await settle();
    feed.source.close();
    expect(events.map((e) => e.event)).toEqual(['insert', 'update', 'delete']);
    expect(events.map((e) => e.data.key)).toEqual([{ id: 10 }, { id: 10 }, { id: 10 }]);
    expect(events[1]?.data.row).toMatchObject({ id: 10, body: 'two' });
    expect(events[2]?.data).not.toHaveProperty('row');
    expect(new Set(events.map((e) => e.data.tx)).size).toBe(1);
  });

  test('$filter and $select: only matching rows, an update moving a row in is an insert, out a delete', async () => {
    const feed = subscribe(
      `${gw.url}/table/notes/changes?$filter=${encodeURIComponent("owner eq 'cat'")}&$select=id,body`,
    );
    await feed.opened;
    await writer.query("INSERT INTO notes (id, owner, body) VALUES (20, 'dan', 'not mine')");
    await writer.query("UPDATE notes SET owner = 'cat' WHERE id = 20");
    await writer.query("UPDATE notes SET body = 'edited' WHERE id = 20");
    await writer.query("UPDATE notes SET owner = 'dan' WHERE id = 20");
    const events = await feed.until(3);
    await settle();
    feed.source.close();
    expect(events.map((e) => [e.event, e.data.row])).toEqual([
      ['insert', { id: 20, body: 'not mine' }],
      ['update', { id: 20, body: 'edited' }],
      ['delete', undefined],
    ]);
  });

  test('resumes with Last-Event-ID right after the last event it had', async () => {
    const first = subscribe(`${gw.url}/table/notes/changes`);
    await first.opened;
    for (let i = 0; i < 20; i++) {
      await writer.query('INSERT INTO notes (owner, body) VALUES (?, ?)', ['eve', `n${i}`]);
    }
    const seen = await first.until(20);
    first.source.close();
    expect(seen).toHaveLength(20);
    const tenth = seen[9] as Received;
    const resumed = subscribe(`${gw.url}/table/notes/changes`, { 'Last-Event-ID': tenth.id });
    await resumed.opened;
    const again = await resumed.until(10);
    await settle();
    resumed.source.close();
    expect(again.map((e) => e.data.row)).toEqual(seen.slice(10).map((e) => e.data.row));
    // $since does the same.
    const since = subscribe(
      `${gw.url}/table/notes/changes?$since=${encodeURIComponent((seen[18] as Received).id)}`,
    );
    await since.opened;
    const last = await since.until(1);
    await settle();
    since.source.close();
    expect(last.map((e) => e.data.row)).toEqual([seen[19]?.data.row]);
  });

  test('TRUNCATE sends truncate; ALTER TABLE sends schema and the stream goes on in the new shape', async () => {
    await writer.query('CREATE TABLE tags (id INT PRIMARY KEY, name VARCHAR(20))');
    await writer.query("INSERT INTO tags VALUES (1, 'a')");
    const feed = subscribe(`${gw.url}/table/tags/changes`);
    await feed.opened;
    await writer.query('TRUNCATE tags');
    await writer.query('ALTER TABLE tags ADD COLUMN colour VARCHAR(10) NULL');
    await writer.query("INSERT INTO tags VALUES (2, 'b', 'red')");
    const events = await feed.until(3);
    feed.source.close();
    expect(events.map((e) => e.event)).toEqual(['truncate', 'schema', 'insert']);
    expect(events[0]?.data).toMatchObject({ op: 'truncate', table: 'tags' });
    expect(events[2]?.data.row).toEqual({ id: 2, name: 'b', colour: 'red' });
  });

  test('bad options are 400 with a stable code; an unknown table 404', async () => {
    const answer = async (query: string, headers: Record<string, string> = {}) => {
      const response = await fetch(`${gw.url}/table/notes/changes?${query}`, { headers });
      return { status: response.status, body: await response.json() };
    };
    expect(await answer('$top=3')).toEqual({
      status: 400,
      body: {
        success: false,
        message: 'The change feed takes $select, $filter and $since (or Last-Event-ID), not $top',
        code: 'UNSUPPORTED_IN_FEED',
      },
    });
    expect((await answer('$since=nonsense')).body).toEqual({
      success: false,
      message:
        'The position (Last-Event-ID or $since) is not one this change feed gave: send the id of an event unchanged',
      code: 'BAD_FEED_POSITION',
    });
    expect((await answer('', { 'Last-Event-ID': 'f1.e30.AAAAAAAAAAAAAAAAAAAAAA' })).status).toBe(
      400,
    );
    expect((await answer(`$filter=${encodeURIComponent('nope eq 1')}`)).status).toBe(400);
    const missing = await fetch(`${gw.url}/table/nothing/changes`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('UNKNOWN_TABLE');
  });

  test('a slow subscriber is closed with overflow; others and the reader go on', async () => {
    const slow = await startTestGateway(DB, { ...gw.config, feedMaxLag: 5 });
    try {
      // A client that opens the stream and never reads from it.
      const controller = new AbortController();
      const stalled = await fetch(`${slow.url}/table/notes/changes`, {
        signal: controller.signal,
      });
      expect(stalled.status).toBe(200);
      const healthy = subscribe(`${slow.url}/table/notes/changes?$select=id`);
      await healthy.opened;
      const big = 'x'.repeat(190);
      for (let round = 0; round < 10; round++) {
        const values = Array.from({ length: 300 }, () => `('slow', '${big}')`).join(', ');
        await writer.query(`INSERT INTO notes (owner, body) VALUES ${values}`);
      }
      await healthy.until(3000, 30_000);
      await settle();
      healthy.source.close();
      const got = healthy.events.filter(
        (e) => e.data.row && (e.data.row as { id: number }).id > 40,
      );
      expect(new Set(got.map((e) => e.id)).size).toBe(3000);
      expect(got).toHaveLength(3000);
      // The stalled one got its overflow at the end of what it was sent.
      const reader = (stalled.body as ReadableStream<Uint8Array>).getReader();
      let text = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString('utf8');
      }
      expect(text).toContain('event: overflow');
      expect(text.split('event: insert').length - 1).toBeLessThan(3000);
    } finally {
      await slow.close();
    }
  }, 60_000);
});

const POLICY = {
  roles: {
    anonymous: {
      tables: { posts: { read: { where: "owner eq 'public'", columns: ['id', 'body'] } } },
    },
    user: {
      tables: {
        posts: { read: { where: 'owner eq @user.email', columns: ['id', 'owner', 'body'] } },
      },
    },
  },
};
const SECRET = 'changes-test-secret-0123456789abcdefghijklmnop';
const PASSWORD = 'correct horse battery';

describe('auth mode with a policy', () => {
  let auth: TestGateway;
  let dir: string;
  const tokens: Record<string, string> = {};

  async function signUp(base: string, email: string): Promise<string> {
    const json = { email, password: PASSWORD };
    const post = (route: string) =>
      fetch(`${base}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(json),
      });
    await post('/auth/register');
    const answer = (await (await post('/auth/login')).json()) as { token: string };
    return answer.token;
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-changes-'));
    const policyFile = path.join(dir, 'policy.json');
    await writeFile(policyFile, JSON.stringify(POLICY));
    await writer.query(
      'CREATE TABLE posts (id INT AUTO_INCREMENT PRIMARY KEY, owner VARCHAR(60) COLLATE utf8mb4_bin NOT NULL, body VARCHAR(100) NOT NULL, secret VARCHAR(20) NULL)',
    );
    auth = await startTestGateway(DB, {
      ...gw.config,
      stateDir: dir,
      uploadsDir: path.join(dir, 'uploads'),
      mode: 'auth',
      jwtSecret: SECRET,
      policyFile,
    });
    tokens.ann = await signUp(auth.url, 'ann@example.com');
    tokens.bob = await signUp(auth.url, 'bob@example.com');
    tokens.accent = await signUp(auth.url, 'ánn@example.com');
  });
  afterAll(async () => {
    await auth?.close();
    await writer.query(`DELETE FROM ${USERS_TABLE}`);
    await rm(dir, { recursive: true, force: true });
  });

  const bearer = (name: string) => ({ authorization: `Bearer ${tokens[name]}` });

  test('row conditions and hidden columns for two users and anonymous, as a read decides', async () => {
    const streams = {
      ann: subscribe(`${auth.url}/table/posts/changes`, bearer('ann')),
      bob: subscribe(`${auth.url}/table/posts/changes`, bearer('bob')),
      accent: subscribe(`${auth.url}/table/posts/changes`, bearer('accent')),
      // A browser's EventSource sends no header: the token in the query string.
      bobInQuery: subscribe(`${auth.url}/table/posts/changes?access_token=${tokens.bob}`),
      anonymous: subscribe(`${auth.url}/table/posts/changes`),
    };
    await Promise.all(Object.values(streams).map((s) => s.opened));
    await writer.query(
      `INSERT INTO posts (owner, body, secret) VALUES ('ann@example.com', 'ann 1', 's1'),
        ('bob@example.com', 'bob 1', 's2'), ('public', 'hello', 's3')`,
    );
    // Bob's post handed to ann: out of bob's view (delete), into ann's (insert).
    await writer.query("UPDATE posts SET owner = 'ann@example.com' WHERE body = 'bob 1'");
    await streams.ann.until(2);
    await settle();
    for (const s of Object.values(streams)) s.source.close();
    const rows = (name: keyof typeof streams) =>
      streams[name].events.map((e) => [e.event, e.data.key, e.data.row ?? null]);
    expect(rows('ann')).toEqual([
      ['insert', { id: 1 }, { id: 1, owner: 'ann@example.com', body: 'ann 1' }],
      ['insert', { id: 2 }, { id: 2, owner: 'ann@example.com', body: 'bob 1' }],
    ]);
    expect(rows('bob')).toEqual([
      ['insert', { id: 2 }, { id: 2, owner: 'bob@example.com', body: 'bob 1' }],
      ['delete', { id: 2 }, null],
    ]);
    expect(rows('bobInQuery')).toEqual(rows('bob'));
    expect(rows('accent')).toEqual([]);
    expect(rows('anonymous')).toEqual([['insert', { id: 3 }, { id: 3, body: 'hello' }]]);
    // What each of them reads now agrees with what the feed sent last.
    const read = async (headers: Record<string, string>) =>
      (await fetch(`${auth.url}/table/posts/read`, { headers })).json();
    expect(await read(bearer('accent'))).toEqual([]);
    expect(await read(bearer('ann'))).toEqual(rows('ann').map((r) => r[2]));
  });

  test('a token that expires mid-stream ends it with event: expired', async () => {
    const short = await startTestGateway(DB, { ...auth.config, tokenTtlSeconds: 2 });
    try {
      const token = await signUp(short.url, 'ann@example.com');
      const feed = subscribe(`${short.url}/table/posts/changes`, {
        authorization: `Bearer ${token}`,
      });
      await feed.opened;
      const started = Date.now();
      const [event] = await feed.until(1, 15_000);
      feed.source.close();
      expect(event?.event).toBe('expired');
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await short.close();
    }
  }, 30_000);

  test('a table the role may not read answers as for reads: 404 with a token, 401 without', async () => {
    const answer = async (route: string, headers: Record<string, string> = {}) => {
      const response = await fetch(`${auth.url}/table/notes/${route}`, { headers });
      return { status: response.status, body: await response.json() };
    };
    const hidden = await answer('changes', bearer('ann'));
    expect(hidden.status).toBe(404);
    expect(hidden).toEqual(await answer('read', bearer('ann')));
    const anonymous = await answer('changes');
    expect(anonymous.status).toBe(401);
    expect(anonymous).toEqual(await answer('read'));
  });
});

describe('a gateway whose server has no binary log', () => {
  let shared: TestDatabase;
  let off: TestGateway;
  beforeAll(async () => {
    shared = await createTestDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
    await shared.admin.query('SET @tg_probe = 1');
    off = await startTestGateway(shared.name);
  });
  afterAll(async () => {
    await off?.close();
    await shared?.drop();
  });

  test('answers 503 FEED_UNAVAILABLE with the reason', async () => {
    const [[row]] = (await shared.admin.query('SELECT @@log_bin AS on_')) as unknown as [
      { on_: number }[],
    ];
    const reason = row?.on_ === 1 ? null : 'log_bin is OFF';
    if (reason === null) return;
    const response = await fetch(`${off.url}/table/t/changes`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      success: false,
      message: 'The change feed is off: log_bin is OFF',
      code: 'FEED_UNAVAILABLE',
    });
    expect(off.gateway.feed.status).toEqual({ on: false, reason: 'log_bin is OFF' });
  });
});
