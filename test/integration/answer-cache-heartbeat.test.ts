/**
 * The server cache when the binary-log connection goes silent (docs/changes.md, "A connection
 * gone silent"; docs/caching.md): a network that drops every packet without a reset or a FIN
 * leaves a half-open connection no error ever ends, and a cache that trusted it would serve
 * answers the feed never drops. Against a private MariaDB with the binary log on, the gateway's
 * connections through a fault proxy that freezes the replication connection alone: the feed
 * asks for heartbeats, takes a connection that hears nothing for a few periods as dead, and
 * while it is not streaming the cache serves nothing and keeps nothing; once it streams again
 * the change made meanwhile is read.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import type { PrivateServer } from '../../src/demo/private-server.js';
import { FEED_BINLOG_HEARTBEAT_MS, FEED_SILENT_BEATS } from '../../src/limits.js';
import { type FaultProxy, startFaultProxy } from '../helpers/fault-proxy.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { rootConnection, startBinlogServer } from '../helpers/private-servers.js';

const DB = `acbeat_${randomBytes(4).toString('hex')}`;

let server: PrivateServer;
let writer: mysql.Connection;
let proxy: FaultProxy;
let gw: TestGateway;
/** The feed's connection going (false) and coming back (true), as the cache is told. */
const changes: boolean[] = [];
/** GTIDs of the transactions the feed has read. */
const seen = new Set<string>();

beforeAll(async () => {
  server = await startBinlogServer();
  writer = await rootConnection(server);
  await writer.query(`CREATE DATABASE ${DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await writer.query(`USE ${DB}`);
  await writer.query('CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL)');
  await writer.query("INSERT INTO t VALUES (1, 'one'), (2, 'two')");
  proxy = await startFaultProxy(server);
  gw = await startTestGateway(DB, {
    db: { ...server, host: '127.0.0.1', port: proxy.port, database: DB, poolSize: 4 },
    metricsPort: 0,
    logLevel: (process.env.TG_LOG as 'error') ?? 'silent',
  });
  gw.gateway.feed.watch({
    transaction: (t) => seen.add(t.gtid),
    connection: (c) => changes.push(c),
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await proxy?.close();
  await writer?.end();
  await server?.destroy();
});

const route = '/table/t/read(id,1)';

async function body(): Promise<string> {
  return (await fetch(`${gw.url}${route}`)).text();
}

async function hits(): Promise<number> {
  const text = await (await fetch(String(gw.gateway.metricsUrl))).text();
  const line = text.split('\n').find((l) => l.startsWith('tablegate_cache_hits_total '));
  return Number(line?.split(' ')[1]);
}

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('an idle connection stays up: the server sends heartbeats', async () => {
  expect(gw.gateway.feed.connected).toBe(true);
  const before = changes.length;
  // Twice the silence that would take it as dead, with nothing written.
  await pause(2 * FEED_SILENT_BEATS * FEED_BINLOG_HEARTBEAT_MS);
  expect(changes.slice(before)).toEqual([]);
  expect(gw.gateway.feed.connected).toBe(true);
}, 30_000);

test('a frozen binary-log connection is taken as dead: the cache is bypassed until it streams again, and the change made meanwhile is read', async () => {
  const feed = gw.gateway.feed;
  await body();
  const kept = await hits();
  expect(await body()).toBe('{"id":1,"name":"one"}');
  expect(await hits()).toBe(kept + 1);

  proxy.breaking = { kind: 'freeze-binlog' };
  await until(() => !feed.connected, 30_000, 'the frozen connection taken as dead');
  await writer.query("UPDATE t SET name = 'ONE' WHERE id = 1");
  const [[row]] = (await writer.query('SELECT @@last_gtid AS g')) as unknown as [[{ g: string }]];
  // While frozen (its reconnections freeze too, and never stream), every read is MySQL's own
  // and none is kept: over more than one reconnection's silence, no hit.
  const frozen = await hits();
  const deadline = Date.now() + (FEED_SILENT_BEATS + 2) * FEED_BINLOG_HEARTBEAT_MS;
  let reads = 0;
  while (Date.now() < deadline) {
    expect(await body()).toBe('{"id":1,"name":"ONE"}');
    expect(feed.connected).toBe(false);
    reads++;
    await pause(100);
  }
  expect(reads).toBeGreaterThan(3);
  expect(await hits()).toBe(frozen);
  expect(seen.has(row.g)).toBe(false);

  proxy.breaking = { kind: 'none' };
  await until(() => feed.connected, 30_000, 'the feed streaming again');
  // The change made while frozen is read from the GTID state the reader had reached.
  await until(() => seen.has(row.g), 15_000, 'the change made while frozen read');
  expect(await body()).toBe('{"id":1,"name":"ONE"}');
  const back = await hits();
  expect(await body()).toBe('{"id":1,"name":"ONE"}');
  expect(await hits()).toBe(back + 1);
  // And a change after it is read as before: the kept answer is dropped.
  await writer.query("UPDATE t SET name = 'uno' WHERE id = 1");
  let now = '';
  const until2 = Date.now() + 15_000;
  while (now !== '{"id":1,"name":"uno"}' && Date.now() < until2) {
    now = await body();
    if (now !== '{"id":1,"name":"uno"}') await pause(20);
  }
  expect(now).toBe('{"id":1,"name":"uno"}');
}, 90_000);
