/**
 * The change feed when a decision fails (docs/changes.md, "When a decision fails"): a decision
 * statement the database refuses is tried again, and a stream whose changes still cannot be
 * decided ends with `event: error` whose id makes a resume (`Last-Event-ID`) get them again;
 * a row change larger than max_allowed_packet allows to decide ends its streams with an error
 * that resumes after it, once, never in a loop. Against a private MariaDB with the binary log
 * on. The database refuses by a lock: a table locked by another session keeps the decision
 * connection from making its copy (`CREATE TEMPORARY TABLE … LIKE`) until the statement
 * timeout interrupts it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import type { PrivateServer } from '../../src/demo/private-server.js';
import { feedClient, settle } from '../helpers/feed-client.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { rootConnection, startBinlogServer } from '../helpers/private-servers.js';

const DB = `feedfaults_${randomBytes(4).toString('hex')}`;
const PACKET = 1024 * 1024;

let server: PrivateServer;
let writer: mysql.Connection;
let locker: mysql.Connection;
let gw: TestGateway;

beforeAll(async () => {
  server = await startBinlogServer();
  writer = await rootConnection(server);
  locker = await rootConnection(server);
  await writer.query(`CREATE DATABASE ${DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  for (const connection of [writer, locker]) await connection.query(`USE ${DB}`);
  for (const name of ['given_up', 'retried', 'others']) {
    await writer.query(`CREATE TABLE ${name} (id INT PRIMARY KEY, body VARCHAR(40))`);
  }
  await writer.query('CREATE TABLE big (id INT PRIMARY KEY, a LONGTEXT, b LONGTEXT)');
  // The decision connection reads max_allowed_packet when it opens.
  await writer.query(`SET GLOBAL max_allowed_packet = ${PACKET}`);
  gw = await startTestGateway(DB, {
    db: { ...server, database: DB, poolSize: 4 },
    queryTimeoutMs: 500,
    metricsPort: 0,
    logLevel: (process.env.TG_LOG as 'error') ?? 'silent',
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await locker?.end();
  await writer?.end();
  await server?.destroy();
});

/** A counter of the gateway's metrics. */
async function metric(name: string): Promise<number> {
  const text = await (await fetch(gw.gateway.metricsUrl as string)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no metric ${name}`);
  return Number(line.slice(name.length + 1));
}

test('a decision that still fails after its tries: event: error, and the resume gets the change', async () => {
  const stream = feedClient(`${gw.url}/table/given_up/changes`);
  const others = feedClient(`${gw.url}/table/others/changes`);
  await Promise.all([stream.opened(), others.opened()]);
  const failedBefore = await metric('tablegate_feed_streams_failed_total');
  await locker.query('LOCK TABLES given_up WRITE');
  await locker.query("INSERT INTO given_up VALUES (1, 'lost?')");
  const [error] = await stream.until(1, 30_000);
  // While the lock holds, the client may reconnect and fail again; what came first:
  expect(error).toMatchObject({
    event: 'error',
    data: {
      code: 'FEED_DECISION_FAILED',
      message:
        'The changes could not be decided (the database refused): reconnect with Last-Event-ID to get them again',
    },
  });
  expect(error?.id).not.toBe('');
  expect(await metric('tablegate_feed_streams_failed_total')).toBeGreaterThan(failedBefore);
  await locker.query('UNLOCK TABLES');
  // The client reconnects by itself with Last-Event-ID, the error's id: the change comes.
  const deadline = Date.now() + 30_000;
  while (!stream.events.some((e) => e.event === 'insert') && Date.now() < deadline)
    await settle(50);
  stream.close();
  const insert = stream.events.filter((e) => e.event !== 'error');
  expect(insert.map((e) => [e.event, e.data.row])).toEqual([['insert', { id: 1, body: 'lost?' }]]);
  expect(stream.events.every((e) => e.event === 'error' || e.event === 'insert')).toBe(true);
  // Another table's stream did not end, and goes on.
  await writer.query("INSERT INTO others VALUES (1, 'after')");
  await others.until(1);
  others.close();
  expect(others.events.map((e) => [e.event, e.data.row])).toEqual([
    ['insert', { id: 1, body: 'after' }],
  ]);
  expect(others.opens()).toBe(1);
}, 90_000);

test('a decision that fails and then succeeds when tried again: the change comes, once', async () => {
  const stream = feedClient(`${gw.url}/table/retried/changes`);
  await stream.opened();
  const failures = await metric('tablegate_feed_decision_failures_total');
  await locker.query('LOCK TABLES retried WRITE');
  await locker.query("INSERT INTO retried VALUES (1, 'late')");
  const deadline = Date.now() + 20_000;
  while ((await metric('tablegate_feed_decision_failures_total')) === failures) {
    if (Date.now() > deadline) throw new Error('no decision failed');
    await settle(20);
  }
  await locker.query('UNLOCK TABLES');
  await stream.until(1, 20_000);
  await writer.query("INSERT INTO retried VALUES (2, 'next')");
  await stream.until(2, 20_000);
  stream.close();
  expect(stream.events.map((e) => [e.event, e.data.row])).toEqual([
    ['insert', { id: 1, body: 'late' }],
    ['insert', { id: 2, body: 'next' }],
  ]);
  expect(stream.opens()).toBe(1);
}, 60_000);

test('a row change larger than max_allowed_packet allows: event: error once, then the stream goes on after it', async () => {
  const stream = feedClient(`${gw.url}/table/big/changes?$select=id`);
  await stream.opened();
  // Each value fits the packet; the row after the update (two of them) does not.
  await writer.query(`INSERT INTO big VALUES (1, REPEAT('x', ${0.6 * PACKET}), '')`);
  await writer.query('BEGIN');
  await writer.query("INSERT INTO big VALUES (2, 'small', 'small')");
  await writer.query('UPDATE big SET b = a WHERE id = 1');
  await writer.query('COMMIT');
  await writer.query("INSERT INTO big VALUES (3, 'after', 'after')");
  await stream.until(3, 30_000);
  await settle();
  stream.close();
  expect(stream.events.map((e) => [e.event, e.data.row ?? e.data])).toEqual([
    ['insert', { id: 1 }],
    [
      'error',
      {
        code: 'FEED_CHANGE_TOO_LARGE',
        message: expect.stringMatching(
          /^A row change of transaction 0-1-\d+ is larger than the database's max_allowed_packet allows to decide, and was not sent: read the table again; Last-Event-ID goes on after it$/,
        ),
      },
    ],
    ['insert', { id: 3 }],
  ]);
  expect(stream.opens()).toBe(2);
}, 60_000);
