/**
 * What the change feed promises (docs/changes.md) and no other test asserts: a trigger's change
 * is sent, paths and lambdas are refused, reads have the new shape when `event: schema` arrives,
 * the `retry:` line and the keep-alive comment, the byte bound of `--feed-max-lag`, one
 * binary-log connection per gateway, and why the feed is off (`binlog_format is MIXED`,
 * `log_bin is OFF`) as the command says it. Against private MariaDBs with the binary log on,
 * changes written by a plain mysql2 connection.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import {
  binlogArgs,
  freePort,
  type PrivateServer,
  startPrivateServer,
} from '../../src/demo/private-server.js';
import { FEED_HEARTBEAT_MS, FEED_RETRY_MS } from '../../src/limits.js';
import { builtCli, connectionFlags } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { feedClient, settle } from '../helpers/feed-client.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { rootConnection, startBinlogDatabase } from '../helpers/private-servers.js';

const DB = `fcontract_${randomBytes(4).toString('hex')}`;

const SCHEMA = `
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL, note VARCHAR(40) NULL,
  FOREIGN KEY (customer_id) REFERENCES customers (id));
CREATE TABLE items (id INT PRIMARY KEY, order_id INT NOT NULL, qty INT NOT NULL,
  FOREIGN KEY (order_id) REFERENCES orders (id));
CREATE TABLE audited (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20) NOT NULL);
CREATE TABLE audit_log (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40) NOT NULL);
CREATE TRIGGER audited_added AFTER INSERT ON audited FOR EACH ROW
  INSERT INTO audit_log (what) VALUES (CONCAT('added ', NEW.v));
CREATE TABLE shapes (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
INSERT INTO shapes VALUES (1, 'circle');
CREATE TABLE idle (id INT PRIMARY KEY);
CREATE TABLE blobs (id INT AUTO_INCREMENT PRIMARY KEY, body MEDIUMTEXT NOT NULL);
INSERT INTO customers VALUES (1, 'Ann');
`;

let server: PrivateServer;
let writer: mysql.Connection;
let gw: TestGateway;

beforeAll(async () => {
  ({ server, writer } = await startBinlogDatabase(DB, SCHEMA));
  gw = await startTestGateway(DB, {
    db: { ...server, database: DB, poolSize: 4 },
    // The gateway would not read the schema again by itself within a test: only the feed's
    // reading of a DDL statement can show a read a new column.
    schemaRefreshMs: 3_600_000,
    logLevel: (process.env.TG_LOG as 'error') ?? 'silent',
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await writer?.end();
  await server?.destroy();
});

/** A raw event stream over node:http: its text as it arrives, and a wait for a piece of it. */
function rawStream(url: string) {
  let text = '';
  const waiters: { needle: string; resolve: () => void }[] = [];
  let response: http.IncomingMessage | undefined;
  const request = http.get(url, { agent: false }, (res) => {
    response = res;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      text += chunk;
      for (const waiter of waiters.splice(0)) {
        if (text.includes(waiter.needle)) waiter.resolve();
        else waiters.push(waiter);
      }
    });
  });
  request.on('error', () => {});
  return {
    text: () => text,
    status: () => response?.statusCode,
    /** Resolves in the data handler that received `needle` (no polling). */
    until: (needle: string, ms = 15_000) =>
      new Promise<void>((resolve, reject) => {
        if (text.includes(needle)) return resolve();
        const timer = setTimeout(() => reject(new Error(`no ${needle} in ${text}`)), ms);
        waiters.push({
          needle,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
    close: () => request.destroy(),
  };
}

describe('what is sent', () => {
  test("a trigger's change to another table arrives on that table's stream", async () => {
    const feed = feedClient(`${gw.url}/table/audit_log/changes`);
    await feed.opened();
    await writer.query("INSERT INTO audited (v) VALUES ('x1')");
    const events = await feed.until(1);
    await settle();
    feed.close();
    expect(events.map((e) => [e.event, e.data.key, e.data.row])).toEqual([
      ['insert', { id: 1 }, { id: 1, what: 'added x1' }],
    ]);
    expect(events[0]?.data.table).toBe('audit_log');
  });

  test.each([
    ['a path over a foreign key', "customer/name eq 'x'"],
    ['a lambda over a to-many relation', 'items/any(i: i/qty gt 1)'],
  ])('$filter with %s: 400 UNSUPPORTED_IN_FEED', async (_, filter) => {
    const response = await fetch(
      `${gw.url}/table/orders/changes?$filter=${encodeURIComponent(filter)}`,
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      success: false,
      message:
        "The change feed's $filter takes the table's own columns only, not paths or lambdas over relations",
      code: 'UNSUPPORTED_IN_FEED',
    });
    // The same filter reads: it is the feed that refuses it, not the filter language.
    const read = await fetch(`${gw.url}/table/orders/read?$filter=${encodeURIComponent(filter)}`);
    expect(read.status).toBe(200);
  });

  test('reads have the new columns from the moment event: schema arrives', async () => {
    // Kept by the answer cache and by the schema the gateway holds.
    for (let i = 0; i < 2; i++) {
      expect(await (await fetch(`${gw.url}/table/shapes/read(id,1)`)).text()).toBe(
        '{"id":1,"name":"circle"}',
      );
    }
    const stream = rawStream(`${gw.url}/table/shapes/changes`);
    await stream.until('retry:');
    await writer.query("ALTER TABLE shapes ADD COLUMN colour VARCHAR(10) NOT NULL DEFAULT 'red'");
    await stream.until('event: schema');
    // At once: no sleep, no retry.
    const [key, all, selected] = await Promise.all(
      ['/table/shapes/read(id,1)', '/table/shapes/read', '/table/shapes/read?$select=colour'].map(
        async (route) => (await fetch(`${gw.url}${route}`)).text(),
      ),
    );
    stream.close();
    expect(key).toBe('{"id":1,"name":"circle","colour":"red"}');
    expect(all).toBe('[{"id":1,"name":"circle","colour":"red"}]');
    expect(selected).toBe('[{"colour":"red"}]');
  });
});

describe('the stream itself', () => {
  test('retry: is the value docs/changes.md prints, FEED_RETRY_MS', async () => {
    const docs = await readFile('docs/changes.md', 'utf8');
    const documented = /^retry: (\d+)$/m.exec(docs)?.[1];
    expect(documented).toBe(String(FEED_RETRY_MS));
    const stream = rawStream(`${gw.url}/table/idle/changes`);
    await stream.until('\n\n');
    stream.close();
    expect(stream.status()).toBe(200);
    expect(stream.text()).toBe(`retry: ${documented}\n\n`);
  });

  test('an idle stream gets a comment line within 15 s', async () => {
    expect(FEED_HEARTBEAT_MS).toBe(15_000);
    const stream = rawStream(`${gw.url}/table/idle/changes`);
    await stream.until('retry:');
    const opened = stream.text();
    await new Promise((resolve) => setTimeout(resolve, 16_000));
    stream.close();
    // The retry line, then one comment and nothing else: no event, no data.
    expect(opened).toBe(`retry: ${FEED_RETRY_MS}\n\n`);
    expect(stream.text()).toBe(`retry: ${FEED_RETRY_MS}\n\n: keep-alive\n\n`);
  }, 30_000);

  test('past 16 MiB untaken (events far below --feed-max-lag): overflow and closed; others go on', async () => {
    const roomy = await startTestGateway(DB, { ...gw.config, feedMaxLag: 10_000_000 });
    try {
      // A client that opens the stream and does not read it: its socket fills, then the
      // gateway's buffer for it grows.
      let stalledText = '';
      const stalled = await new Promise<http.IncomingMessage>((resolve, reject) => {
        http.get(`${roomy.url}/table/blobs/changes`, { agent: false }, resolve).on('error', reject);
      });
      expect(stalled.statusCode).toBe(200);
      const healthy = feedClient(`${roomy.url}/table/blobs/changes?$select=id`);
      await healthy.opened();
      // 800 rows of 64 KiB: 50 MiB of events, far more than the sockets hold.
      const body = 'y'.repeat(64 * 1024);
      for (let round = 0; round < 16; round++) {
        const values = Array.from({ length: 50 }, () => '(?)').join(', ');
        await writer.query(
          `INSERT INTO blobs (body) VALUES ${values}`,
          Array.from({ length: 50 }, () => body),
        );
      }
      const got = await healthy.until(800, 60_000);
      await settle();
      healthy.close();
      expect(got).toHaveLength(800);
      expect(got.every((e) => e.event === 'insert')).toBe(true);
      expect(new Set(got.map((e) => (e.data.row as { id: number }).id)).size).toBe(800);
      // The stalled one: read now, it ends with overflow, having been sent less than all.
      stalled.setEncoding('utf8');
      await new Promise<void>((resolve) => {
        stalled.on('data', (chunk: string) => {
          stalledText += chunk;
        });
        stalled.on('end', () => resolve());
        stalled.on('close', () => resolve());
      });
      expect(
        stalledText.endsWith(
          'event: overflow\ndata: {"reason":"the client fell too far behind; reconnect with Last-Event-ID"}\n\n',
        ),
      ).toBe(true);
      const sent = stalledText.split('event: insert').length - 1;
      expect(sent).toBeGreaterThan(0);
      expect(sent).toBeLessThan(800);
    } finally {
      await roomy.close();
    }
  }, 120_000);
});

describe('one binary-log connection', () => {
  test('5 subscribers on 3 tables: one Binlog Dump connection of the gateway', async () => {
    // The gateway connects as a user of its own, so its connections are told from the others'.
    for (const host of ['%', 'localhost', '127.0.0.1']) {
      await writer.query(`CREATE USER 'feeder'@'${host}' IDENTIFIED BY 'feeder-pw'`);
      await writer.query(`GRANT ALL PRIVILEGES ON *.* TO 'feeder'@'${host}'`);
    }
    const own = await startTestGateway(DB, {
      ...gw.config,
      db: { ...gw.config.db, user: 'feeder', password: 'feeder-pw' },
    });
    const dumps = async () => {
      const [rows] = (await writer.query(
        "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'feeder' AND COMMAND LIKE 'Binlog Dump%'",
      )) as unknown as [{ ID: number }[]];
      return rows.length;
    };
    const feeds = ['customers', 'customers', 'orders', 'orders', 'items'].map((table) =>
      feedClient(`${own.url}/table/${table}/changes`),
    );
    try {
      await Promise.all(feeds.map((feed) => feed.opened()));
      // Every stream live: a change of each table reaches its streams.
      await writer.query("INSERT INTO orders VALUES (1, 1, 'one')");
      await writer.query('INSERT INTO items VALUES (1, 1, 2)');
      await writer.query("UPDATE customers SET name = 'Ann B' WHERE id = 1");
      for (const feed of feeds) expect(await feed.until(1)).toHaveLength(1);
      expect(await dumps()).toBe(1);
      // Not one of the root's: the shared gateway of this file has its own.
      const [all] = (await writer.query(
        "SELECT USER FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' ORDER BY USER",
      )) as unknown as [{ USER: string }[]];
      expect(all.map((r) => r.USER)).toEqual(['feeder', 'root']);
    } finally {
      for (const feed of feeds) feed.close();
      await own.close();
    }
  }, 60_000);
});

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built command, to its end. */
function runCli(args: string[], home: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [builtCli(), ...args], {
      env: { PATH: process.env.PATH, HOME: home },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The built command, resolved with what it printed once it printed `lines` lines. */
function startCli(args: string[], home: string, lines: number) {
  return new Promise<{ child: ChildProcess; stdout: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [builtCli(), ...args], {
      env: { PATH: process.env.PATH, HOME: home },
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => {
      stdout += d;
      if (stdout.split('\n').length > lines) resolve({ child, stdout });
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${stdout}${stderr}`)));
  });
}

function stopped(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

describe('--change-feed and why the feed is off', () => {
  let mixed: PrivateServer;
  let shared: TestDatabase;
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'tablegate-feedmode-'));
    mixed = await startPrivateServer(undefined, [...binlogArgs(), '--binlog-format=MIXED']);
    const admin = await rootConnection(mixed);
    await admin.query('CREATE DATABASE mixed; CREATE TABLE mixed.t (id INT PRIMARY KEY)');
    await admin.end();
    shared = await createTestDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
  }, 60_000);
  afterAll(async () => {
    await mixed?.destroy();
    await shared?.drop();
    await rm(home, { recursive: true, force: true });
  });

  test('binlog_format MIXED: auto says why at start-up and the route answers 503 with it', async () => {
    const port = await freePort();
    const { child, stdout } = await startCli(
      ['run', ...connectionFlags('mixed', mixed), '-o', String(port), '--change-feed', 'auto'],
      home,
      2,
    );
    try {
      const lines = stdout.split('\n');
      expect(lines[0]).toMatch(/^tablegate listening on /);
      expect(lines[1]).toBe('change feed: off (binlog_format is MIXED)');
      const response = await fetch(`http://127.0.0.1:${port}/table/t/changes`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({
        success: false,
        message: 'The change feed is off: binlog_format is MIXED',
        code: 'FEED_UNAVAILABLE',
      });
    } finally {
      await stopped(child);
    }
  }, 30_000);

  test('binlog_format MIXED: on exits 1 with the reason', async () => {
    const port = await freePort();
    const outcome = await runCli(
      ['run', ...connectionFlags('mixed', mixed), '-o', String(port), '--change-feed', 'on'],
      home,
    );
    expect(outcome).toEqual({
      code: 1,
      stdout: '',
      stderr: 'tablegate: change feed: off (binlog_format is MIXED)\n',
    });
  }, 30_000);

  test('the shared server (log_bin OFF): on exits 1 with the reason', async () => {
    const [[row]] = (await shared.admin.query('SELECT @@log_bin AS on_')) as unknown as [
      { on_: number }[],
    ];
    expect(Number(row?.on_)).toBe(0);
    const port = await freePort();
    const outcome = await runCli(
      ['run', ...connectionFlags(shared.name), '-o', String(port), '--change-feed', 'on'],
      home,
    );
    expect(outcome).toEqual({
      code: 1,
      stdout: '',
      stderr: 'tablegate: change feed: off (log_bin is OFF)\n',
    });
  }, 30_000);
});
