/**
 * The change feed in operation (docs/changes.md): a stream whose user is removed from the
 * gateway's users table ends with `event: expired` within 10 s, and the feed's metrics on
 * --metrics-port (subscribers, events sent, lag, the binary-log connection). Against a private
 * MariaDB with the binary log on, the gateway in auth mode.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import { USERS_TABLE } from '../../src/db/schema.js';
import type { PrivateServer } from '../../src/demo/private-server.js';
import { feedClient, settle } from '../helpers/feed-client.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startBinlogDatabase } from '../helpers/private-servers.js';

const DB = `feedops_${randomBytes(4).toString('hex')}`;
const PASSWORD = 'correct horse battery';

let server: PrivateServer;
let writer: mysql.Connection;
let gw: TestGateway;

beforeAll(async () => {
  ({ server, writer } = await startBinlogDatabase(
    DB,
    'CREATE TABLE notes (id INT AUTO_INCREMENT PRIMARY KEY, body VARCHAR(40))',
  ));
  gw = await startTestGateway(DB, {
    db: { ...server, database: DB, poolSize: 4 },
    mode: 'auth',
    jwtSecret: 'changes-ops-test-secret-0123456789abcdefghij',
    metricsPort: 0,
    logLevel: (process.env.TG_LOG as 'error') ?? 'silent',
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await writer?.end();
  await server?.destroy();
});

async function tokenOf(email: string): Promise<string> {
  const post = (route: string) =>
    fetch(`${gw.url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
  await post('/auth/register');
  return ((await (await post('/auth/login')).json()) as { token: string }).token;
}

test('a user removed from the users table: the stream ends with event: expired within 10 s', async () => {
  const token = await tokenOf('gone@example.com');
  const kept = await tokenOf('kept@example.com');
  const removed = feedClient(`${gw.url}/table/notes/changes`, { authorization: `Bearer ${token}` });
  const other = feedClient(`${gw.url}/table/notes/changes?access_token=${kept}`);
  await Promise.all([removed.opened(), other.opened()]);
  await writer.query("INSERT INTO notes (body) VALUES ('before')");
  await removed.until(1);
  await writer.query(`DELETE FROM ${USERS_TABLE} WHERE email = 'gone@example.com'`);
  const at = Date.now();
  const events = await removed.until(2, 15_000);
  const took = Date.now() - at;
  removed.close();
  expect(events.map((e) => [e.event, e.data.row ?? e.data])).toEqual([
    ['insert', { id: 1, body: 'before' }],
    ['expired', { reason: "the token's user was removed, or given another role or password" }],
  ]);
  expect(took).toBeLessThan(10_000);
  // The user's other requests are refused too; another user's stream goes on.
  expect(
    (await fetch(`${gw.url}/table/notes/read`, { headers: { authorization: `Bearer ${token}` } }))
      .status,
  ).toBe(401);
  await writer.query("INSERT INTO notes (body) VALUES ('after')");
  await other.until(2);
  other.close();
  expect(other.events.map((e) => e.event)).toEqual(['insert', 'insert']);
}, 30_000);

/** The values of one metric without labels in Prometheus' text format. */
function values(text: string, name: string): number[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `))
    .map((line) => Number(line.slice(name.length + 1)));
}

async function feedMetrics(on: TestGateway = gw): Promise<Record<string, number | undefined>> {
  const text = await (await fetch(on.gateway.metricsUrl as string)).text();
  const one = (name: string) => {
    const found = values(text, name);
    expect(found).toHaveLength(1);
    return found[0];
  };
  return {
    subscribers: one('tablegate_feed_subscribers'),
    events: one('tablegate_feed_events_total'),
    lag: one('tablegate_feed_lag_seconds'),
    connected: one('tablegate_feed_binlog_connected'),
  };
}

describe('metrics', () => {
  test('subscribers, events sent, lag and the binary-log connection', async () => {
    const token = await tokenOf('metrics@example.com');
    const headers = { authorization: `Bearer ${token}` };
    const before = await feedMetrics();
    expect(before).toMatchObject({ subscribers: 0, connected: 1 });
    const sentBefore = before.events as number;

    const first = feedClient(`${gw.url}/table/notes/changes`, headers);
    const second = feedClient(`${gw.url}/table/notes/changes?$select=id`, headers);
    await Promise.all([first.opened(), second.opened()]);
    expect((await feedMetrics()).subscribers).toBe(2);
    await writer.query(
      "BEGIN; INSERT INTO notes (body) VALUES ('m1'), ('m2'); INSERT INTO notes (body) VALUES ('m3'); COMMIT",
    );
    await Promise.all([first.until(3), second.until(3)]);
    await settle();
    const during = await feedMetrics();
    expect(during.events).toBe(sentBefore + 6);
    expect(during.subscribers).toBe(2);
    expect(Number.isFinite(during.lag)).toBe(true);
    expect(during.lag).toBeGreaterThanOrEqual(0);

    first.close();
    const deadline = Date.now() + 5000;
    while ((await feedMetrics()).subscribers !== 1 && Date.now() < deadline) await settle(50);
    expect((await feedMetrics()).subscribers).toBe(1);
    second.close();
  }, 30_000);

  test('a stream that overflows partway through a batch counts only the events written before', async () => {
    // A resume from memory is one batch of its transactions: with --feed-max-lag 5 the stream
    // takes the first (more than Node's buffer holds) and overflows at the second.
    const lagging = await startTestGateway(DB, { ...gw.config, feedMaxLag: 5 });
    try {
      const token = await tokenOf('lagging@example.com');
      const headers = { authorization: `Bearer ${token}` };
      const marker = feedClient(
        `${lagging.url}/table/notes/changes?$filter=${encodeURIComponent("body eq 'marker'")}`,
        headers,
      );
      const start = feedClient(`${lagging.url}/table/notes/changes?$select=id`, headers);
      await Promise.all([marker.opened(), start.opened()]);
      await writer.query("INSERT INTO notes (body) VALUES ('start')");
      const [first] = await start.until(1);
      start.close();
      const body = 'x'.repeat(38);
      for (let round = 0; round < 4; round++) {
        const values = Array.from({ length: 200 }, () => `('${body}')`).join(', ');
        await writer.query(`INSERT INTO notes (body) VALUES ${values}`);
      }
      await writer.query("INSERT INTO notes (body) VALUES ('marker')");
      // The marker's event went out: every transaction before it was handled.
      expect(await marker.until(1)).toHaveLength(1);
      await settle();
      const before = (await feedMetrics(lagging)).events as number;

      const resumed = await fetch(`${lagging.url}/table/notes/changes`, {
        headers: { ...headers, 'last-event-id': (first as { id: string }).id },
      });
      expect(resumed.status).toBe(200);
      const text = await resumed.text();
      expect(text).toContain('event: overflow');
      const written = text.split('event: insert').length - 1;
      expect(written).toBe(200);
      expect((await feedMetrics(lagging)).events).toBe(before + written);
      marker.close();
    } finally {
      await lagging.close();
    }
  }, 60_000);
});
