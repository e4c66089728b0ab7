/**
 * What the answer cache promises (docs/caching.md, "The server cache") and no other test
 * asserts: a write through any of the gateway's write paths (OData, `$batch`, a deep insert, an
 * `/rpc` call, an MCP tool, a table with a trigger) is read back at once while the feed lags;
 * streamed answers are not kept; no cache without the feed; the default bound; a second gateway
 * sees a write within its feed's lag. Against a private MariaDB with the binary log on (and the
 * shared server, whose binary log is off).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type mysql from 'mysql2/promise';
import type { PrivateServer } from '../../src/demo/private-server.js';
import { PAGE_HOLD_BYTES } from '../../src/limits.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testServer } from '../helpers/mysql-url.js';
import { startBinlogDatabase } from '../helpers/private-servers.js';

const DB = `ccontract_${randomBytes(4).toString('hex')}`;
const MIB = 1024 * 1024;
const FAT_ROWS = 400;
const FAT_BYTES = 200_000;
const BIG_ROWS = 30_000;

const SCHEMA = `
CREATE TABLE notes (id INT PRIMARY KEY, body VARCHAR(40) NOT NULL);
INSERT INTO notes VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four');
CREATE TABLE authors (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
CREATE TABLE books (id INT PRIMARY KEY, author_id INT NOT NULL, title VARCHAR(40) NOT NULL,
  FOREIGN KEY (author_id) REFERENCES authors (id));
INSERT INTO authors VALUES (1, 'Ann');
INSERT INTO books VALUES (10, 1, 'first');
CREATE TABLE watched (id INT PRIMARY KEY, v VARCHAR(20) NOT NULL);
CREATE TABLE watch_log (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40) NOT NULL);
CREATE TRIGGER watched_added AFTER INSERT ON watched FOR EACH ROW
  INSERT INTO watch_log (what) VALUES (CONCAT('added ', NEW.v));
INSERT INTO watch_log (what) VALUES ('start');
CREATE PROCEDURE rename_note(IN nid INT, IN b VARCHAR(40)) UPDATE notes SET body = b WHERE id = nid;
CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(100) NOT NULL);
INSERT INTO big SELECT seq, CONCAT('a value of the big table, number ', seq) FROM seq_1_to_${BIG_ROWS};
CREATE TABLE fat (id INT PRIMARY KEY, body MEDIUMTEXT NOT NULL);
INSERT INTO fat SELECT seq, REPEAT('z', ${FAT_BYTES}) FROM seq_1_to_${FAT_ROWS};
`;

let server: PrivateServer;
let writer: mysql.Connection;
/** Cache on by default (the feed is on, no --cache given). */
let gw: TestGateway;

beforeAll(async () => {
  ({ server, writer } = await startBinlogDatabase(DB, SCHEMA));
  await writer.query("SET GLOBAL log_output = 'TABLE', general_log = 1");
  gw = await startTestGateway(DB, {
    db: { ...server, database: DB, poolSize: 4 },
    metricsPort: 0,
    logLevel: (process.env.TG_LOG as 'error') ?? 'silent',
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await writer?.end();
  await server?.destroy();
});

async function read(route: string, from: TestGateway = gw) {
  const response = await fetch(`${from.url}${route}`);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function send(method: string, route: string, body?: unknown, type = 'application/json') {
  const response = await fetch(`${gw.url}${route}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': type },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

/** One series of /metrics; NaN when absent. */
async function metric(name: string, from: TestGateway = gw): Promise<number> {
  const text = await (await fetch(String(from.gateway.metricsUrl))).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

/**
 * Holds back every transaction the gateway's feed reads by `ms` (its reader hands each to the
 * feed's `read`): only the gateway's own drop can then make a write read back at once. 0 puts
 * it back.
 */
function feedLag(of: TestGateway, ms: number): void {
  const feed = of.gateway.feed as unknown as { read: (t: unknown) => void };
  const own = Object.getPrototypeOf(feed).read as (t: unknown) => void;
  if (ms === 0) {
    delete (feed as { read?: unknown }).read;
    return;
  }
  feed.read = (t) => setTimeout(() => own.call(feed, t), ms);
}

/** `route` read until it is kept: its second read is a hit. */
async function kept(route: string, from: TestGateway = gw): Promise<string> {
  const first = await read(route, from);
  expect(first.status).toBe(200);
  const hits = await metric('tablegate_cache_hits_total', from);
  const second = await read(route, from);
  expect(await metric('tablegate_cache_hits_total', from)).toBe(hits + 1);
  expect(second.text).toBe(first.text);
  return second.text;
}

const NOTES = '/table/notes/read?$orderby=id&$top=50';
const notes = (...rows: [number, string][]) =>
  JSON.stringify(rows.map(([id, body]) => ({ id, body })));

describe('read your writes, through every write path', () => {
  beforeAll(() => feedLag(gw, 3000));
  afterAll(async () => {
    feedLag(gw, 0);
    // What the lagging feed still holds arrives; nothing of it is asserted on.
    await new Promise((resolve) => setTimeout(resolve, 3500));
  });

  test('OData POST, PATCH, PUT and DELETE', async () => {
    const base = notes([1, 'one'], [2, 'two'], [3, 'three'], [4, 'four']);
    expect(await kept(NOTES)).toBe(base);
    const created = await send('POST', '/odata/notes', { id: 5, body: 'five' });
    expect(created.status).toBe(201);
    expect((await read(NOTES)).text).toBe(
      notes([1, 'one'], [2, 'two'], [3, 'three'], [4, 'four'], [5, 'five']),
    );
    await kept(NOTES);
    expect((await send('PATCH', '/odata/notes(5)', { body: 'FIVE' })).status).toBe(204);
    expect((await read(NOTES)).text).toBe(
      notes([1, 'one'], [2, 'two'], [3, 'three'], [4, 'four'], [5, 'FIVE']),
    );
    await kept(NOTES);
    expect((await send('PUT', '/odata/notes(5)', { body: 'Five' })).status).toBe(204);
    expect((await read(NOTES)).text).toBe(
      notes([1, 'one'], [2, 'two'], [3, 'three'], [4, 'four'], [5, 'Five']),
    );
    await kept(NOTES);
    expect((await send('DELETE', '/odata/notes(5)')).status).toBe(204);
    expect((await read(NOTES)).text).toBe(base);
  });

  test('an OData $batch change set', async () => {
    await kept(NOTES);
    const answer = await send('POST', '/odata/$batch', {
      requests: [
        {
          id: 'a',
          method: 'PATCH',
          url: 'notes(1)',
          body: { body: 'batch 1' },
          atomicityGroup: 'g',
        },
        {
          id: 'b',
          method: 'PATCH',
          url: 'notes(2)',
          body: { body: 'batch 2' },
          atomicityGroup: 'g',
        },
      ],
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).responses.map((r: { status: number }) => r.status)).toEqual([
      204, 204,
    ]);
    expect((await read(NOTES)).text).toBe(
      notes([1, 'batch 1'], [2, 'batch 2'], [3, 'three'], [4, 'four']),
    );
  });

  test('a deep insert: the related table’s kept answer too', async () => {
    const books = '/table/books/read?$orderby=id&$top=50';
    expect(await kept(books)).toBe('[{"id":10,"author_id":1,"title":"first"}]');
    const created = await send('POST', '/table/authors/create', {
      id: 2,
      name: 'Ben',
      books: [{ id: 20, title: 'deep' }],
    });
    expect(created.status).toBe(200);
    expect((await read(books)).text).toBe(
      '[{"id":10,"author_id":1,"title":"first"},{"id":20,"author_id":2,"title":"deep"}]',
    );
  });

  test('an /rpc procedure that writes', async () => {
    await kept(NOTES);
    const called = await send('POST', '/rpc/rename_note', { nid: 3, b: 'by rpc' });
    expect(called.status).toBe(200);
    expect((await read(NOTES)).text).toBe(
      notes([1, 'batch 1'], [2, 'batch 2'], [3, 'by rpc'], [4, 'four']),
    );
  });

  test('an MCP write tool', async () => {
    const client = new Client({ name: 'cache-contract', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`)));
    try {
      await kept(NOTES);
      const result = (await client.callTool({
        name: 'update_rows',
        arguments: { table: 'notes', key: 'id', value: '4', values: { body: 'by mcp' } },
      })) as { isError?: boolean; content: { text: string }[] };
      expect(result.isError).not.toBe(true);
      expect(JSON.parse(result.content[0]?.text ?? '')).toEqual({
        success: true,
        message: 'Data updated successfully',
        affectedRows: 1,
      });
      expect((await read(NOTES)).text).toBe(
        notes([1, 'batch 1'], [2, 'batch 2'], [3, 'by rpc'], [4, 'by mcp']),
      );
    } finally {
      await client.close();
    }
  });

  test('a table with a trigger: the table the trigger writes to', async () => {
    const log = '/table/watch_log/read?$orderby=id&$top=50';
    expect(await kept(log)).toBe('[{"id":1,"what":"start"}]');
    const created = await send('POST', '/table/watched/create', { id: 1, v: 'w1' });
    expect(created.status).toBe(200);
    expect((await read(log)).text).toBe('[{"id":1,"what":"start"},{"id":2,"what":"added w1"}]');
  });

  test('the feed lags for real: a change by the mysql client is not seen at once', async () => {
    // Without this, the reads above would prove nothing of the gateway's own drops.
    const before = await kept(NOTES);
    await writer.query("UPDATE notes SET body = 'by client' WHERE id = 1");
    expect((await read(NOTES)).text).toBe(before);
  });
});

describe('what is not kept', () => {
  let roomy: TestGateway;
  beforeAll(async () => {
    // Room for a whole streamed answer: only its being streamed keeps it out.
    roomy = await startTestGateway(DB, {
      ...gw.config,
      cacheMiB: 256,
      cacheMaxEntryKiB: 64 * 1024,
      metricsPort: 0,
    });
  });
  afterAll(async () => {
    await roomy?.close();
  });

  test('a streamed read past the hold bound: two reads, two misses, no hit, two SELECTs', async () => {
    const selects = async () => {
      const [[row]] = (await writer.query(
        "SELECT COUNT(*) AS n FROM mysql.general_log WHERE thread_id <> CONNECTION_ID() AND command_type IN ('Query', 'Execute') AND argument LIKE '%FROM `big`%'",
      )) as unknown as [[{ n: number }]];
      return Number(row.n);
    };
    const hits = await metric('tablegate_cache_hits_total', roomy);
    const misses = await metric('tablegate_cache_misses_total', roomy);
    const at = await selects();
    const first = await read('/table/big/read', roomy);
    const second = await read('/table/big/read', roomy);
    expect(first.status).toBe(200);
    expect(Buffer.byteLength(first.text)).toBeGreaterThan(PAGE_HOLD_BYTES);
    expect(first.headers.get('etag')).toBeNull();
    expect(second.text).toBe(first.text);
    expect(await metric('tablegate_cache_misses_total', roomy)).toBe(misses + 2);
    expect(await metric('tablegate_cache_hits_total', roomy)).toBe(hits);
    expect(await selects()).toBe(at + 2);
    // The same gateway keeps a page of the same table.
    await kept('/table/big/read?$orderby=id&$top=100', roomy);
  });
});

describe('two gateways on one binary log', () => {
  let other: TestGateway;
  beforeAll(async () => {
    other = await startTestGateway(DB, { ...gw.config, metricsPort: 0 });
  });
  afterAll(async () => {
    await other?.close();
  });

  test('a write through A is seen by B within its feed’s lag; B’s answer was kept', async () => {
    const route = '/table/notes/read(id,2)';
    const before = await kept(route, other);
    expect(before).toBe('{"id":2,"body":"batch 2"}');
    expect((await send('PUT', '/table/notes/update(id,2)', { body: 'through A' })).status).toBe(
      200,
    );
    const deadline = Date.now() + 10_000;
    let body = before;
    while (body === before && Date.now() < deadline) {
      body = (await read(route, other)).text;
      if (body === before) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(body).toBe('{"id":2,"body":"through A"}');
  });
});

describe('the bound', () => {
  test('the feed on and no --cache: at most 64 MiB kept, the oldest answers out', async () => {
    const entries = await metric('tablegate_cache_entries');
    expect(entries).toBeLessThan(50);
    let most = 0;
    for (let id = 1; id <= FAT_ROWS; id++) {
      const answer = await read(`/table/fat/read(id,${id})`);
      expect(answer.status).toBe(200);
      expect(answer.text.length).toBe(FAT_BYTES + 17 + String(id).length);
      if (id % 10 === 0 || id === FAT_ROWS) {
        most = Math.max(most, await metric('tablegate_cache_bytes'));
      }
    }
    const bytes = await metric('tablegate_cache_bytes');
    // Full: within one entry of 64 MiB, never past it.
    expect(most).toBeLessThanOrEqual(64 * MIB);
    expect(bytes).toBeGreaterThan(64 * MIB - FAT_BYTES - 1024);
    expect(await metric('tablegate_cache_entries')).toBeLessThan(FAT_ROWS);
    // The newest is still kept, the first is gone.
    const hits = await metric('tablegate_cache_hits_total');
    await read(`/table/fat/read(id,${FAT_ROWS})`);
    expect(await metric('tablegate_cache_hits_total')).toBe(hits + 1);
    await read('/table/fat/read(id,1)');
    expect(await metric('tablegate_cache_hits_total')).toBe(hits + 1);
  }, 120_000);
});

describe('the shared server, its binary log off', () => {
  const USER = `tgcount_${randomBytes(3).toString('hex')}`;
  let shared: TestDatabase;
  let off: TestGateway;
  let userstat: number;
  beforeAll(async () => {
    shared = await createTestDatabase(
      "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10) NOT NULL); INSERT INTO t VALUES (1, 'a')",
    );
    const [[row]] = (await shared.admin.query('SELECT @@userstat AS u')) as unknown as [
      { u: number }[],
    ];
    userstat = Number(row?.u);
    // Per-user statement counts (USER_STATISTICS), so the gateway's SELECTs are told from
    // every other session's on the shared server.
    await shared.admin.query('SET GLOBAL userstat = 1');
    await shared.admin.query(`CREATE USER '${USER}'@'%' IDENTIFIED BY 'count-pw'`);
    await shared.admin.query(`GRANT ALL PRIVILEGES ON \`${shared.name}\`.* TO '${USER}'@'%'`);
    off = await startTestGateway(shared.name, {
      db: {
        ...testServer(),
        user: USER,
        password: 'count-pw',
        database: shared.name,
        poolSize: 4,
      },
      changeFeed: 'auto',
      metricsPort: 0,
    });
  });
  afterAll(async () => {
    await off?.close();
    await shared?.admin.query(`DROP USER IF EXISTS '${USER}'@'%'`);
    await shared?.admin.query(`SET GLOBAL userstat = ${userstat}`);
    await shared?.drop();
  });

  test('--change-feed auto: no cache, two identical reads are two SELECTs, no cache metrics', async () => {
    expect(off.gateway.feed.status).toEqual({ on: false, reason: 'log_bin is OFF' });
    const selects = async () => {
      const [[row]] = (await shared.admin.query(
        'SELECT SELECT_COMMANDS AS n FROM information_schema.USER_STATISTICS WHERE USER = ?',
        [USER],
      )) as unknown as [{ n: number }[]];
      return Number(row?.n ?? 0);
    };
    const route = '/table/t/read(id,1)';
    expect((await read(route, off)).text).toBe('{"id":1,"v":"a"}');
    const at = await selects();
    expect((await read(route, off)).text).toBe('{"id":1,"v":"a"}');
    expect((await read(route, off)).text).toBe('{"id":1,"v":"a"}');
    const [log] = await writer.query(
      "SELECT thread_id, command_type, LEFT(argument, 200) AS a FROM mysql.general_log WHERE argument LIKE '%big%' ORDER BY event_time",
    );
    console.log(JSON.stringify(log, null, 1));
    expect(await selects()).toBe(at + 2);
    const metrics = await (await fetch(String(off.gateway.metricsUrl))).text();
    expect(metrics).toContain('tablegate_feed_binlog_connected 0');
    expect(metrics).not.toContain('tablegate_cache_');
  });
});
