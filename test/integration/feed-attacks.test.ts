/**
 * An outsider's attacks on the change feed and on webhooks (docs/changes.md, docs/webhooks.md):
 * each tries to get what the role may not see, or to make the gateway do what it should not —
 * hidden columns named in a webhooks file, a `$select` or a `$filter` (probing a hidden value
 * through a filter); collation and ENUM tricks in a row condition (the feed must decide as a
 * read does); a user removed mid-stream; forged, tampered and borrowed `Last-Event-ID`s; two
 * gateways racing for one lease; a receiver that redirects, or answers without end; a webhook
 * to a private address. Every case asserts the exact answer or the exact events received.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import type { Config } from '../../src/config.js';
import { USERS_TABLE, WEBHOOKS_TABLE } from '../../src/db/schema.js';
import type { PrivateServer } from '../../src/demo/private-server.js';
import { StartupError } from '../../src/main.js';
import { feedClient, type Received, settle } from '../helpers/feed-client.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { rootConnection, startBinlogServer } from '../helpers/private-servers.js';

const DB = `attacks_${randomBytes(4).toString('hex')}`;
const JWT_SECRET = 'feed-attacks-secret-0123456789abcdefghijklmnop';
const PASSWORD = 'correct horse battery';
const HOOK_SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
/** The hidden column's values: they must never appear in anything a caller receives. */
const HIDDEN = 'TOPSECRET';

const POLICY = {
  roles: {
    anonymous: {
      tables: {
        docs: { read: { where: "kind eq 'open'", columns: ['id', 'kind', 'body'] } },
        other: { read: {} },
      },
    },
    user: {
      tables: {
        docs: { read: { where: 'owner eq @user.email', columns: ['id', 'owner', 'kind', 'body'] } },
        other: { read: {} },
      },
    },
  },
};

let server: PrivateServer;
let writer: mysql.Connection;
let dir: string;
let gw: TestGateway;
const tokens: Record<string, string> = {};

function dbConfig(): Config['db'] {
  return {
    host: server.host,
    port: server.port,
    user: server.user,
    password: server.password,
    database: DB,
    poolSize: 4,
  };
}

async function authGateway(overrides: Partial<Config> = {}): Promise<TestGateway> {
  const policyFile = path.join(dir, 'policy.json');
  await writeFile(policyFile, JSON.stringify(POLICY));
  return startTestGateway(DB, {
    db: dbConfig(),
    mode: 'auth',
    jwtSecret: JWT_SECRET,
    policyFile,
    logLevel: (process.env.TG_LOG as 'error') ?? 'silent',
    ...overrides,
  });
}

async function signUp(base: string, email: string): Promise<string> {
  const post = (route: string) =>
    fetch(`${base}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
  await post('/auth/register');
  return ((await (await post('/auth/login')).json()) as { token: string }).token;
}

const bearer = (name: string) => ({ authorization: `Bearer ${tokens[name]}` });

/** The answer's status and JSON body; a stream that opened is `{ status, body: 'a stream' }`. */
async function answer(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    controller.abort();
    return { status: response.status, body: 'a stream' as unknown };
  }
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as unknown };
}

beforeAll(async () => {
  server = await startBinlogServer();
  writer = await rootConnection(server);
  await writer.query(`CREATE DATABASE ${DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await writer.query(`USE ${DB}`);
  // A case- and accent-insensitive collation that pads with spaces: 'Alice@x' = 'alice@x ' =
  // 'álice@x' to MySQL; the feed must say what a read says.
  await writer.query(`
    CREATE TABLE docs (id INT AUTO_INCREMENT PRIMARY KEY,
      owner VARCHAR(60) COLLATE utf8mb4_unicode_ci NOT NULL,
      kind ENUM('open', 'closed') NOT NULL, body VARCHAR(100) NOT NULL, secret VARCHAR(20) NULL);
    CREATE TABLE other (id INT PRIMARY KEY, note VARCHAR(20) NULL);
  `);
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-feed-attacks-'));
  gw = await authGateway();
  tokens.alice = await signUp(gw.url, 'alice@x.com');
  tokens.bob = await signUp(gw.url, 'bob@x.com');
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await writer?.end();
  await server?.destroy();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const rowsOf = (events: readonly Received[]) =>
  events.map((e) => [e.event, e.data.key, e.data.row ?? null]);

describe('hidden columns', () => {
  test('a $select or $filter naming a hidden column is refused as a read refuses it, never evaluated', async () => {
    const cases = [
      '$select=id,secret',
      `$filter=${encodeURIComponent(`secret eq '${HIDDEN}'`)}`,
      `$filter=${encodeURIComponent("startswith(secret,'T')")}`,
      `$filter=${encodeURIComponent('secret ne null or id gt 0')}`,
      `$filter=${encodeURIComponent('length(secret) gt 3')}`,
    ];
    for (const query of cases) {
      const feed = await answer(`${gw.url}/table/docs/changes?${query}`, bearer('alice'));
      const read = await answer(`${gw.url}/table/docs/read?${query}`, bearer('alice'));
      expect([query, feed.status]).toEqual([query, 400]);
      expect(feed).toEqual(read);
    }
    expect(await answer(`${gw.url}/table/docs/changes?$select=id,secret`, bearer('alice'))).toEqual(
      {
        status: 400,
        body: {
          success: false,
          message: "Column 'secret' does not exist in table 'docs'",
          code: 'UNKNOWN_COLUMN',
        },
      },
    );
  });

  test('the hidden value never appears in any event, whatever the stream asks', async () => {
    const streams = [
      feedClient(`${gw.url}/table/docs/changes`, bearer('alice')),
      feedClient(`${gw.url}/table/docs/changes?$select=id,body`, bearer('alice')),
      feedClient(`${gw.url}/table/docs/changes`),
    ];
    await Promise.all(streams.map((s) => s.opened()));
    await writer.query(
      `INSERT INTO docs (owner, kind, body, secret) VALUES ('alice@x.com', 'open', 'a1', '${HIDDEN}');
       UPDATE docs SET secret = '${HIDDEN}2' WHERE body = 'a1';
       UPDATE docs SET body = 'a1b' WHERE body = 'a1';`,
    );
    await Promise.all(streams.map((s) => s.until(2)));
    await settle();
    for (const s of streams) s.close();
    const all = streams.flatMap((s) => s.events);
    expect(JSON.stringify(all)).not.toContain(HIDDEN);
    expect(JSON.stringify(all)).not.toContain('secret');
    // An update of the hidden column alone changes nothing the caller sees: it is still sent
    // (a change of the row), with the row as the caller may read it.
    expect(rowsOf(streams[0]?.events ?? [])).toEqual([
      ['insert', { id: 1 }, { id: 1, owner: 'alice@x.com', kind: 'open', body: 'a1' }],
      ['update', { id: 1 }, { id: 1, owner: 'alice@x.com', kind: 'open', body: 'a1' }],
      ['update', { id: 1 }, { id: 1, owner: 'alice@x.com', kind: 'open', body: 'a1b' }],
    ]);
    expect(rowsOf(streams[2]?.events ?? [])).toEqual([
      ['insert', { id: 1 }, { id: 1, kind: 'open', body: 'a1' }],
      ['update', { id: 1 }, { id: 1, kind: 'open', body: 'a1' }],
      ['update', { id: 1 }, { id: 1, kind: 'open', body: 'a1b' }],
    ]);
  });

  test('a webhooks file naming a hidden column in select or filter: exit 2, one line each', async () => {
    const file = path.join(dir, 'hidden-hooks.json');
    const hook = {
      table: 'docs',
      role: 'anonymous',
      url: 'http://127.0.0.1:9/x',
      secret: HOOK_SECRET,
    };
    await writeFile(
      file,
      JSON.stringify([
        { ...hook, name: 'sel', select: 'id,secret' },
        { ...hook, name: 'fil', filter: `secret eq '${HIDDEN}'` },
        { ...hook, name: 'own', filter: "owner eq 'alice@x.com'" },
      ]),
    );
    const started = authGateway({ webhooksFile: file });
    const error = (await started.catch((e: unknown) => e)) as StartupError;
    expect(error).toBeInstanceOf(StartupError);
    expect(error.exitCode).toBe(2);
    expect(error.message.split('\n')).toEqual([
      `webhooks ${file}: webhook 'sel': its select does not fit table 'docs': Column 'secret' does not exist in table 'docs'`,
      `webhooks ${file}: webhook 'fil': its filter does not fit table 'docs': Column 'secret' does not exist in table 'docs'`,
      `webhooks ${file}: webhook 'own': its filter does not fit table 'docs': Column 'owner' does not exist in table 'docs'`,
    ]);
  });
});

describe('row conditions decide as a read does', () => {
  test('case, trailing spaces and accents in owner eq @user.email: the feed sends exactly the rows a read answers (the exact one)', async () => {
    const alice = feedClient(`${gw.url}/table/docs/changes?$select=id,owner`, bearer('alice'));
    const bob = feedClient(`${gw.url}/table/docs/changes?$select=id,owner`, bearer('bob'));
    await Promise.all([alice.opened(), bob.opened()]);
    const owners = [
      'Alice@X.com',
      'alice@x.com',
      'alice@x.com ',
      'alice@x.com  ',
      'álice@x.com',
      'ALİCE@x.com',
      ' alice@x.com',
      'alice@x.co',
      'alice@x.com\t',
      'bob@x.com ',
      'Bób@x.com',
      'bob@x.com',
    ];
    await writer.query('DELETE FROM docs');
    for (const owner of owners) {
      await writer.query("INSERT INTO docs (owner, kind, body) VALUES (?, 'closed', 'c')", [owner]);
    }
    await settle(2000);
    alice.close();
    bob.close();
    for (const [name, stream] of [
      ['alice', alice],
      ['bob', bob],
    ] as const) {
      const inserted = stream.events.filter((e) => e.event === 'insert').map((e) => e.data.row);
      const read = await answer(`${gw.url}/table/docs/read?$select=id,owner`, bearer(name));
      expect([name, inserted]).toEqual([name, read.body]);
    }
    // An @user value matches byte for byte, whatever the column's collation (docs/policies.md):
    // not in another case, with an accent, or with a trailing space the collation pads away.
    const ownersOf = (events: readonly Received[]) =>
      events
        .filter((e) => e.event === 'insert')
        .map((e) => (e.data.row as { owner: string }).owner);
    expect(ownersOf(alice.events)).toEqual(['alice@x.com']);
    expect(ownersOf(bob.events)).toEqual(['bob@x.com']);
  }, 30_000);

  test("ENUM values in a $filter and in the role's condition: as a read decides", async () => {
    const filters = [
      "kind eq 'OPEN'",
      "kind eq 'open '",
      "kind eq 'öpen'",
      "kind gt 'closed'",
      "kind eq ''",
    ];
    const streams = filters.map((filter) =>
      feedClient(
        `${gw.url}/table/docs/changes?$select=id,kind&$filter=${encodeURIComponent(filter)}`,
      ),
    );
    await Promise.all(streams.map((s) => s.opened()));
    await writer.query('DELETE FROM docs');
    await writer.query(
      "INSERT INTO docs (owner, kind, body) VALUES ('z', 'open', 'o'), ('z', 'closed', 'c'), ('z', 2, 'two')",
    );
    await settle(1500);
    const answers: [string, string[]][] = [];
    for (const [index, filter] of filters.entries()) {
      const stream = streams[index] as ReturnType<typeof feedClient>;
      stream.close();
      const inserted = stream.events.filter((e) => e.event === 'insert').map((e) => e.data.row);
      const read = await answer(
        `${gw.url}/table/docs/read?$select=id,kind&$filter=${encodeURIComponent(filter)}`,
      );
      expect([filter, inserted]).toEqual([filter, read.body]);
      answers.push([filter, inserted.map((row) => (row as { kind: string }).kind)]);
    }
    // The collation compares an ENUM as its text: case, accents and trailing spaces aside; the
    // anonymous role's own condition (kind eq 'open') leaves the other rows out of every stream.
    expect(answers).toEqual([
      ["kind eq 'OPEN'", ['open']],
      ["kind eq 'open '", ['open']],
      ["kind eq 'öpen'", ['open']],
      ["kind gt 'closed'", ['open']],
      ["kind eq ''", []],
    ]);
  });
});

describe('who holds the stream', () => {
  test('a user removed mid-stream: event expired within 10 s, and nothing after it', async () => {
    const token = await signUp(gw.url, 'carol@x.com');
    const feed = feedClient(`${gw.url}/table/docs/changes`, { authorization: `Bearer ${token}` });
    await feed.opened();
    await writer.query(`DELETE FROM ${USERS_TABLE} WHERE email = 'carol@x.com'`);
    const removedAt = Date.now();
    const [event] = await feed.until(1, 15_000);
    const took = Date.now() - removedAt;
    await writer.query(
      "INSERT INTO docs (owner, kind, body) VALUES ('carol@x.com', 'open', 'late')",
    );
    await settle();
    feed.close();
    expect(event).toEqual({
      event: 'expired',
      id: '',
      data: { reason: "the token's user was removed, or given another role or password" },
    });
    expect(took).toBeLessThan(10_000);
    // The EventSource reconnects by itself: the removed user's token is refused, nothing comes.
    expect(feed.events).toHaveLength(1);
    const refused = await answer(`${gw.url}/table/docs/changes`, {
      authorization: `Bearer ${token}`,
    });
    expect(refused).toMatchObject({ status: 401, body: { success: false, code: 'ACCESS_DENIED' } });
    expect(refused).toEqual(
      await answer(`${gw.url}/table/docs/read`, { authorization: `Bearer ${token}` }),
    );
  }, 30_000);
});

describe('Last-Event-ID', () => {
  test('forged, tampered or truncated: 400 BAD_FEED_POSITION, never a stream', async () => {
    const feed = feedClient(`${gw.url}/table/docs/changes`, bearer('alice'));
    await feed.opened();
    await writer.query("INSERT INTO docs (owner, kind, body) VALUES ('alice@x.com', 'open', 'id')");
    const [event] = await feed.until(1);
    feed.close();
    const id = (event as Received).id;
    const [version, text, mac] = id.split('.') as [string, string, string];
    const position = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    const moved = Buffer.from(
      JSON.stringify([...position.slice(0, 3), 4, ...position.slice(4)]),
    ).toString('base64url');
    // A letter of the MAC changed where every bit counts.
    const flip = (s: string) => `${s.startsWith('A') ? 'B' : 'A'}${s.slice(1)}`;
    const forged = [
      `${version}.${moved}.${mac}`,
      `${version}.${text}.${flip(mac)}`,
      `${version}.${text}`,
      `${version}.${text}.${mac}.x`,
      `f2.${text}.${mac}`,
      `${version}.${Buffer.from('[1,2,3]').toString('base64url')}.${mac}`,
      'x'.repeat(10_000),
      // The same MAC spelt with other unused bits in its last letter, or a stray character.
      `${version}.${text}.${mac.slice(0, -1)}${String.fromCharCode(mac.charCodeAt(mac.length - 1) ^ 1)}`,
      `${version}.${text}.${mac}=`,
      `${version}.${text}.!${mac}`,
      '.'.repeat(5),
      `${id}\u0000`,
    ];
    const refused = {
      status: 400,
      body: {
        success: false,
        message:
          'The position (Last-Event-ID or $since) is not one this change feed gave: send the id of an event unchanged',
        code: 'BAD_FEED_POSITION',
      },
    };
    for (const bad of forged) {
      if (bad.includes('\u0000')) {
        // Not a header's character: only $since can carry it.
        expect(
          await answer(
            `${gw.url}/table/docs/changes?$since=${encodeURIComponent(bad)}`,
            bearer('alice'),
          ),
        ).toEqual(refused);
        continue;
      }
      expect([
        forged.indexOf(bad),
        await answer(`${gw.url}/table/docs/changes`, { ...bearer('alice'), 'last-event-id': bad }),
      ]).toEqual([forged.indexOf(bad), refused]);
      expect(
        await answer(
          `${gw.url}/table/docs/changes?$since=${encodeURIComponent(bad)}`,
          bearer('alice'),
        ),
      ).toEqual(refused);
    }
    // An empty position is no position: the stream starts now (the route's rule, as before).
    expect(await answer(`${gw.url}/table/docs/changes?$since=`, bearer('alice'))).toEqual({
      status: 200,
      body: 'a stream',
    });
    // An id signed by another deployment's secret is not this feed's either.
    const otherKey = await authGateway({ jwtSecret: `${JWT_SECRET}-other`, skiptokenSecret: null });
    try {
      const token = await signUp(otherKey.url, 'dora@x.com');
      expect(
        await answer(`${otherKey.url}/table/docs/changes`, {
          authorization: `Bearer ${token}`,
          'last-event-id': id,
        }),
      ).toEqual(refused);
    } finally {
      await otherKey.close();
    }
  }, 60_000);

  test("another role's id, or another table's: a place in the log, from which the caller gets only its own view", async () => {
    await writer.query('DELETE FROM docs');
    const bobFeed = feedClient(`${gw.url}/table/docs/changes`, bearer('bob'));
    const otherFeed = feedClient(`${gw.url}/table/other/changes`, bearer('bob'));
    const anonymousFeed = feedClient(`${gw.url}/table/docs/changes`);
    await Promise.all([bobFeed.opened(), otherFeed.opened(), anonymousFeed.opened()]);
    await writer.query("INSERT INTO docs (owner, kind, body) VALUES ('bob@x.com', 'open', 'pub')");
    await writer.query("INSERT INTO docs (owner, kind, body) VALUES ('bob@x.com', 'closed', 'b1')");
    await writer.query('INSERT INTO other VALUES (1, null)');
    await writer.query(
      "INSERT INTO docs (owner, kind, body, secret) VALUES ('alice@x.com', 'closed', 'after', 's'), ('bob@x.com', 'closed', 'b2', 's')",
    );
    // The DELETE above may reach a stream opened before the feed read it (a stream starts where
    // the feed is): its deletes are left out, and only inserts are waited for and compared.
    const inserts = (feed: ReturnType<typeof feedClient>) =>
      feed.events.filter((e) => e.event === 'insert');
    const untilInserts = async (feed: ReturnType<typeof feedClient>, count: number) => {
      const deadline = Date.now() + 15_000;
      while (inserts(feed).length < count && Date.now() < deadline) await settle(20);
    };
    await untilInserts(bobFeed, 3);
    await untilInserts(otherFeed, 1);
    await untilInserts(anonymousFeed, 1);
    bobFeed.close();
    otherFeed.close();
    anonymousFeed.close();
    // Alice hands in an id of the anonymous role's stream, one of bob's (another user), and
    // one of another table's stream.
    expect(rowsOf(inserts(anonymousFeed)).map((r) => r[2])).toEqual([
      { id: expect.any(Number), kind: 'open', body: 'pub' },
    ]);
    for (const borrowed of [
      (inserts(anonymousFeed)[0] as Received).id,
      (inserts(bobFeed)[1] as Received).id,
      (inserts(otherFeed)[0] as Received).id,
    ]) {
      const alice = feedClient(`${gw.url}/table/docs/changes`, {
        ...bearer('alice'),
        'last-event-id': borrowed,
      });
      await alice.opened();
      await alice.until(1);
      await settle();
      alice.close();
      expect(rowsOf(alice.events)).toEqual([
        [
          'insert',
          expect.anything(),
          { id: expect.any(Number), owner: 'alice@x.com', kind: 'closed', body: 'after' },
        ],
      ]);
    }
    expect(rowsOf(inserts(bobFeed)).map((r) => (r[2] as { body: string }).body)).toEqual([
      'pub',
      'b1',
      'b2',
    ]);
  }, 30_000);
});

/** A receiver: each path records what came; `answer` says what it does. */
class Receiver {
  readonly got = new Map<string, { id: string; body: string }[]>();
  answer: (place: string, response: http.ServerResponse) => void = (_, response) =>
    response.writeHead(204).end();
  private readonly server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const place = request.url ?? '/';
      const list = this.got.get(place) ?? [];
      list.push({
        id: String(request.headers['webhook-id']),
        body: Buffer.concat(chunks).toString(),
      });
      this.got.set(place, list);
      this.answer(place, response);
    });
  });
  url = '';
  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }
  of(place: string) {
    return this.got.get(place) ?? [];
  }
  async until(place: string, count: number, ms = 20_000) {
    const deadline = Date.now() + ms;
    while (this.of(place).length < count && Date.now() < deadline) await settle(25);
    return this.of(place);
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('webhooks under attack', () => {
  let receiver: Receiver;
  let elsewhere: Receiver;

  beforeAll(async () => {
    receiver = await new Receiver().start();
    elsewhere = await new Receiver().start();
  });
  afterAll(async () => {
    await receiver?.close();
    await elsewhere?.close();
  });

  async function hooks(name: string, list: Record<string, unknown>[]) {
    const file = path.join(dir, `${name}.json`);
    await writeFile(
      file,
      JSON.stringify(
        list.map((h) => ({ table: 'other', role: 'anonymous', secret: HOOK_SECRET, ...h })),
      ),
    );
    return file;
  }

  test('two gateways started at the same moment: one holds the lease, one delivers, each event once', async () => {
    const file = await hooks('race', [{ name: 'race', url: `${receiver.url}/race` }]);
    const [a, b] = await Promise.all([
      authGateway({ webhooksFile: file }),
      authGateway({ webhooksFile: file }),
    ]);
    try {
      const delivering = [a, b].map((g) => g.gateway.webhooks?.delivering);
      expect(delivering.filter((d) => d?.includes('race'))).toEqual([['race']]);
      const [rows] = await writer.query<mysql.RowDataPacket[]>(
        `SELECT COUNT(*) AS n, COUNT(holder) AS held FROM ${WEBHOOKS_TABLE} WHERE name = 'race'`,
      );
      expect(rows).toEqual([{ n: 1, held: 1 }]);
      await writer.query('INSERT INTO other VALUES (100, null), (101, null)');
      await receiver.until('/race', 2);
      await settle();
      expect(receiver.of('/race').map((d) => JSON.parse(d.body).key)).toEqual([
        { id: 100 },
        { id: 101 },
      ]);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);

  test('a receiver answering 302 to another host: not followed, tried again at the same URL', async () => {
    receiver.answer = (place, response) => {
      if (place === '/redirect')
        response.writeHead(302, { location: `${elsewhere.url}/stolen` }).end();
      else response.writeHead(204).end();
    };
    const file = await hooks('redirect', [{ name: 'redirect', url: `${receiver.url}/redirect` }]);
    const g = await authGateway({ webhooksFile: file, metricsPort: 0 });
    try {
      await writer.query('INSERT INTO other VALUES (200, null)');
      const got = await receiver.until('/redirect', 2, 10_000);
      expect(got.slice(0, 2).map((d) => JSON.parse(d.body).key)).toEqual([
        { id: 200 },
        { id: 200 },
      ]);
      expect(got[1]?.id).toBe(got[0]?.id);
      expect(elsewhere.got.size).toBe(0);
      const scrape = await (await fetch(g.gateway.metricsUrl as string)).text();
      expect(scrape).not.toContain('tablegate_webhook_deliveries_total{webhook="redirect"} 1');
    } finally {
      receiver.answer = (_, response) => response.writeHead(204).end();
      await g.close();
    }
  }, 30_000);

  test('a receiver whose answer never ends: its status is taken, the body not read on, the next event goes', async () => {
    receiver.answer = (place, response) => {
      if (place !== '/endless') return void response.writeHead(204).end();
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = 'x'.repeat(64 * 1024);
      // Sends as fast as the gateway reads, without end, until the connection goes.
      const more = () => {
        while (!response.destroyed && response.write(chunk));
        if (!response.destroyed) response.once('drain', more);
      };
      response.on('close', () => response.removeAllListeners('drain'));
      more();
    };
    const file = await hooks('endless', [{ name: 'endless', url: `${receiver.url}/endless` }]);
    const g = await authGateway({ webhooksFile: file });
    try {
      await writer.query('INSERT INTO other VALUES (300, null)');
      await writer.query('INSERT INTO other VALUES (301, null)');
      const got = await receiver.until('/endless', 2, 15_000);
      expect(got.map((d) => JSON.parse(d.body).key)).toEqual([{ id: 300 }, { id: 301 }]);
    } finally {
      receiver.answer = (_, response) => response.writeHead(204).end();
      await g.close();
    }
  }, 30_000);

  test('a webhook to a private address is the operator’s choice: accepted and delivered', async () => {
    const file = await hooks('private', [
      { name: 'loopback', url: `${receiver.url.replace('127.0.0.1', 'localhost')}/private` },
    ]);
    const g = await authGateway({ webhooksFile: file });
    try {
      expect(g.gateway.webhooks?.delivering).toEqual(['loopback']);
      await writer.query('INSERT INTO other VALUES (400, null)');
      const got = await receiver.until('/private', 1);
      expect(got.map((d) => JSON.parse(d.body).key)).toEqual([{ id: 400 }]);
    } finally {
      await g.close();
    }
  }, 30_000);
});
