/**
 * Webhooks on a Galera cluster of two private nodes (docs/webhooks.md, "Several gateways"): two
 * gateways, one started with `-h node1,node2` (it takes the lease), the other with
 * `-h node2,node1`, one webhook. Changes are written on node 2 while node 1, the node the lease
 * holder talks to, is killed with SIGKILL mid-stream. The holder moves to node 2; the lease, a
 * row of the cluster, moved with the data: delivery goes on by exactly one
 * gateway at a time, nothing is lost (at least once, in commit order, the repeats counted), and
 * the receiver never has two deliveries under way at once.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from '@jest/globals';
import type mysql from 'mysql2/promise';
import { Webhook } from 'standardwebhooks';
import { WEBHOOKS_TABLE } from '../../src/db/schema.js';
import type { PrivateServer } from '../../src/demo/private-server.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { galeraAvailable, rootConnection, startGaleraCluster } from '../helpers/private-servers.js';
import { testIf } from '../helpers/skip.js';

const galeraTest = testIf(galeraAvailable, 'no mariadbd with galera-4 (apt-get install galera-4)');
const DB = `whfailover_${randomBytes(4).toString('hex')}`;
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const TOTAL = 60;

interface Arrival {
  readonly id: string;
  readonly n: number;
  readonly verified: boolean;
}

let nodes: PrivateServer[] = [];
let writers: mysql.Connection[] = [];
const gateways: TestGateway[] = [];
let receiver: http.Server;
let receiverUrl = '';
let dir = '';
const arrivals: Arrival[] = [];
/** Deliveries under way at the receiver now, and the most there ever were. */
let open = 0;
let mostOpen = 0;

beforeAll(async () => {
  if (!galeraAvailable) return;
  receiver = http.createServer((request, response) => {
    open += 1;
    mostOpen = Math.max(mostOpen, open);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let verified = true;
      try {
        new Webhook(SECRET).verify(raw, {
          'webhook-id': String(request.headers['webhook-id']),
          'webhook-timestamp': String(request.headers['webhook-timestamp']),
          'webhook-signature': String(request.headers['webhook-signature']),
        });
      } catch {
        verified = false;
      }
      const body = JSON.parse(raw) as { row: { n: number } };
      arrivals.push({ id: String(request.headers['webhook-id']), n: body.row.n, verified });
      // A receiver that takes a moment: two gateways delivering at once would overlap here.
      setTimeout(() => {
        open -= 1;
        response.writeHead(204).end();
      }, 5);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-webhooks-failover-'));

  nodes = await startGaleraCluster(2);
  writers = await Promise.all(nodes.map((node) => rootConnection(node)));
  const [first] = writers as [mysql.Connection];
  await first.query(`CREATE DATABASE ${DB}`);
  await first.query(`CREATE TABLE ${DB}.beats (id INT AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL)`);
  const file = path.join(dir, 'webhooks.json');
  await writeFile(
    file,
    JSON.stringify([
      { name: 'beats', table: 'beats', url: `${receiverUrl}/beats`, secret: SECRET },
    ]),
  );
  const [one, two] = nodes as [PrivateServer, PrivateServer];
  // The first gateway (which takes the lease, started first) talks to node 1, the second to
  // node 2: node 1 killed is the lease holder's node, while the other gateway's goes on.
  for (const [first, second] of [
    [one, two],
    [two, one],
  ] as const) {
    gateways.push(
      await startTestGateway(DB, {
        db: {
          host: first.host,
          port: first.port,
          otherHosts: [{ host: second.host, port: second.port }],
          user: one.user,
          password: one.password,
          database: DB,
          poolSize: 4,
        },
        webhooksFile: file,
        logLevel: (process.env.TG_LOG as 'error') ?? 'silent',
      }),
    );
  }
}, 240_000);

afterAll(async () => {
  for (const gw of gateways) await gw.close().catch(() => {});
  await Promise.all(writers.map((writer) => writer.end().catch(() => {})));
  await Promise.all(nodes.map((node) => node.destroy().catch(() => {})));
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check()) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const delivering = () => gateways.map((gw) => gw.gateway.webhooks?.delivering.includes('beats'));

galeraTest(
  'node 1 killed mid-stream: one gateway at a time delivers on node 2, nothing lost, in order',
  async () => {
    const [, two] = writers as [mysql.Connection, mysql.Connection];
    // Who delivers, seen every 10 ms for the whole test: never both gateways at once.
    let both = 0;
    let atKill = 0;
    const watch = setInterval(() => {
      if (delivering().every(Boolean)) both += 1;
    }, 10);
    try {
      await until(() => delivering().some(Boolean), 30_000);
      expect(delivering()).toEqual([true, false]);
      let n = 0;
      for (; n < 20; n++) await two.query(`INSERT INTO ${DB}.beats (n) VALUES (?)`, [n]);
      await until(() => arrivals.length >= 5, 30_000);
      // Mid-stream: the gateways are still delivering the first twenty when node 1 goes.
      atKill = arrivals.length;
      const killing = (nodes[0] as PrivateServer).kill();
      for (; n < 40; n++) await two.query(`INSERT INTO ${DB}.beats (n) VALUES (?)`, [n]);
      await killing;
      for (; n < TOTAL; n++) await two.query(`INSERT INTO ${DB}.beats (n) VALUES (?)`, [n]);
      await until(() => new Set(arrivals.map((a) => a.n)).size >= TOTAL, 90_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      clearInterval(watch);
    }

    // At least once and in commit order: the first arrival of each is 0, 1, 2, …; a repeat is an
    // event already delivered, sent again with its id (counted, never a new id).
    const seen = new Map<number, string>();
    const firsts: number[] = [];
    let repeats = 0;
    for (const arrival of arrivals) {
      const id = seen.get(arrival.n);
      if (id === undefined) {
        seen.set(arrival.n, arrival.id);
        firsts.push(arrival.n);
      } else {
        expect(arrival.id).toBe(id);
        repeats += 1;
      }
    }
    expect(firsts).toEqual(Array.from({ length: TOTAL }, (_, i) => i));
    expect(new Set(seen.values()).size).toBe(TOTAL);
    expect(arrivals.every((a) => a.verified)).toBe(true);
    expect(mostOpen).toBe(1);
    expect(both).toBe(0);
    expect(delivering().filter(Boolean)).toEqual([true]);

    // The lease, on node 2 now: one row, held by one gateway, the position past the last event.
    const [rows] = await two.query<mysql.RowDataPacket[]>(
      `SELECT name, holder IS NOT NULL AS held, lease_until > NOW(3) AS live,
        position IS NOT NULL AS placed FROM ${DB}.${WEBHOOKS_TABLE}`,
    );
    expect(rows).toEqual([{ name: 'beats', held: 1, live: 1, placed: 1 }]);
    expect(gateways.map((gw) => gw.gateway.feed.connected)).toEqual([true, true]);
    console.log(
      `webhook failover: node 1 killed after ${atKill} deliveries; ${arrivals.length} deliveries of ${TOTAL} events, ${repeats} repeats`,
    );
  },
  240_000,
);
