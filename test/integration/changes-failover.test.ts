/**
 * The change feed on a Galera cluster of two private nodes (docs/changes.md, "Several hosts"):
 * the gateway started with `-h node1,node2`, a subscriber connected, node 1 killed with SIGKILL,
 * the writes go on on node 2. The binary-log reader moves to node 2 from the last GTID it read:
 * every event arrives, none twice, in order. A subscriber that resumes with an id of node 1's log
 * after the failover is read again by GTID from node 2's log.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect } from '@jest/globals';
import type mysql from 'mysql2/promise';
import type { PrivateServer } from '../../src/demo/private-server.js';
import { feedClient, type Received, settle } from '../helpers/feed-client.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { galeraAvailable, rootConnection, startGaleraCluster } from '../helpers/private-servers.js';
import { testIf } from '../helpers/skip.js';

const galeraTest = testIf(galeraAvailable, 'no mariadbd with galera-4 (apt-get install galera-4)');
const DB = `failover_${randomBytes(4).toString('hex')}`;
/** Small, so that a resume from before the failover is read again from node 2's log. */
const MEMORY = 5;

let nodes: PrivateServer[] = [];
let writers: mysql.Connection[] = [];
let gw: TestGateway | undefined;

beforeAll(async () => {
  if (!galeraAvailable) return;
  nodes = await startGaleraCluster(2);
  writers = await Promise.all(nodes.map((node) => rootConnection(node)));
  const [first] = writers as [mysql.Connection];
  await first.query(`CREATE DATABASE ${DB}`);
  await first.query(`CREATE TABLE ${DB}.beats (id INT AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL)`);
  const [one, two] = nodes as [PrivateServer, PrivateServer];
  gw = await startTestGateway(DB, {
    db: {
      host: one.host,
      port: one.port,
      otherHosts: [{ host: two.host, port: two.port }],
      user: one.user,
      password: one.password,
      database: DB,
      poolSize: 4,
    },
    feedMemoryTransactions: MEMORY,
    logLevel: (process.env.TG_LOG as 'error') ?? 'silent',
  });
}, 180_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all(writers.map((writer) => writer.end().catch(() => {})));
  await Promise.all(nodes.map((node) => node.destroy().catch(() => {})));
});

const numbers = (events: readonly Received[]) => events.map((e) => (e.data.row as { n: number }).n);

galeraTest(
  'node 1 killed: the reader goes on on node 2 from the last GTID, no event missed or twice',
  async () => {
    const url = `${(gw as TestGateway).url}/table/beats/changes`;
    const [one, two] = writers as [mysql.Connection, mysql.Connection];
    const live = feedClient(url);
    await live.opened();
    for (let n = 0; n < 10; n++) await one.query(`INSERT INTO ${DB}.beats (n) VALUES (?)`, [n]);
    await live.until(10);
    const beforeKill = [...live.events];

    await (nodes[0] as PrivateServer).kill();
    for (let n = 10; n < 30; n++) await two.query(`INSERT INTO ${DB}.beats (n) VALUES (?)`, [n]);
    await live.until(30, 60_000);

    // An id of node 1's log, older than memory holds: read again by GTID on node 2.
    const resumed = feedClient(url, { 'Last-Event-ID': (beforeKill[2] as Received).id });
    await resumed.opened();
    await resumed.until(27, 30_000);
    await settle();
    live.close();
    resumed.close();

    const all = Array.from({ length: 30 }, (_, n) => n);
    expect(numbers(live.events)).toEqual(all);
    expect(new Set(live.events.map((e) => e.data.tx)).size).toBe(30);
    expect(numbers(resumed.events)).toEqual(all.slice(3));
    expect(resumed.events.map((e) => e.data.tx)).toEqual(
      live.events.slice(3).map((e) => e.data.tx),
    );
    expect(gw?.gateway.feed.connected).toBe(true);
  },
  180_000,
);
