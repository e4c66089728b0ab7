/**
 * A Galera node that stops being ready (docs/operations.md): it keeps answering SELECT 1 but
 * refuses every statement on a table (1047), as a node that lost quorum does. Made here by pointing
 * a one-node cluster at an address where nobody is. Then /health answers 503 there, and a gateway
 * with `-h node,other` moves to the other host, once.
 */
import { afterAll, beforeAll, expect } from '@jest/globals';
import type mysql from 'mysql2/promise';
import { freePort, type PrivateServer } from '../../src/demo/private-server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testServer } from '../helpers/mysql-url.js';
import { galeraAvailable, rootConnection, startGaleraNode } from '../helpers/private-servers.js';
import { testIf } from '../helpers/skip.js';

const galeraTest = testIf(galeraAvailable, 'no mariadbd with galera-4 (apt-get install galera-4)');
/** How long the test waits for the switch before it fails: generous, not a measurement. */
const GIVE_UP_MS = 30_000;

let node: PrivateServer | undefined;
let other: TestDatabase;
let admin: mysql.Connection;

beforeAll(async () => {
  if (!galeraAvailable) return;
  other = await createTestDatabase(
    "CREATE TABLE items (server VARCHAR(10) NOT NULL); INSERT INTO items VALUES ('other')",
  );
  node = await startGaleraNode();
  admin = await rootConnection(node);
  await admin.query(`
    CREATE DATABASE ${other.name};
    CREATE TABLE ${other.name}.items (server VARCHAR(10) NOT NULL PRIMARY KEY);
    INSERT INTO ${other.name}.items VALUES ('galera');
  `);
}, 60_000);

afterAll(async () => {
  await admin?.end();
  await node?.destroy();
  await other?.drop();
});

const read = async (gw: TestGateway) => {
  const response = await fetch(`${gw.url}/table/items/read`);
  return [response.status, await response.json()];
};

galeraTest(
  'a node that is no longer ready: /health 503 on it, and -h moves to the next host',
  async () => {
    const galera = node as PrivateServer;
    const db = { user: 'root', password: '', database: other.name, poolSize: 2 };
    const alone = await startTestGateway(other.name, {
      db: { ...db, host: galera.host, port: galera.port },
    });
    const server = testServer();
    const both = await startTestGateway(other.name, {
      db: {
        ...db,
        host: galera.host,
        port: galera.port,
        otherHosts: [{ host: server.host, port: server.port }],
      },
    });
    const switches: string[] = [];
    both.gateway.db.events = { switched: (from, to) => switches.push(`${from} -> ${to}`) };
    try {
      expect(both.gateway.db.cluster).toBe('galera');
      expect(await read(both)).toEqual([200, [{ server: 'galera' }]]);
      expect((await fetch(`${alone.url}/health`)).status).toBe(200);

      // The node leaves its cluster of one for one that is not there: not ready, still answering.
      await admin.query(
        `SET GLOBAL wsrep_cluster_address = 'gcomm://127.0.0.1:${await freePort()}?pc.wait_prim=no'`,
      );
      const [[ready]] = await admin.query<mysql.RowDataPacket[]>("SHOW STATUS LIKE 'wsrep_ready'");
      expect(ready?.Value).toBe('OFF');

      const health = await fetch(`${alone.url}/health`);
      expect([health.status, await health.json()]).toEqual([503, { status: 'unavailable' }]);
      const start = Date.now();
      let outcome = await read(both);
      while (outcome[0] !== 200 && Date.now() - start < GIVE_UP_MS) {
        expect(outcome).toEqual([
          503,
          { success: false, message: 'Database unavailable', code: 'DATABASE_UNAVAILABLE' },
        ]);
        await new Promise((resolve) => setTimeout(resolve, 50));
        outcome = await read(both);
      }
      const switchMs = Date.now() - start;
      expect(outcome).toEqual([200, [{ server: 'other' }]]);
      // Moved by itself, while the node was still not ready (and still answering SELECT 1).
      const [[still]] = await admin.query<mysql.RowDataPacket[]>("SHOW STATUS LIKE 'wsrep_ready'");
      expect(still?.Value).toBe('OFF');
      expect(switches).toEqual([`${galera.host}:${galera.port} -> ${server.host}:${server.port}`]);
      expect((await fetch(`${both.url}/health`)).status).toBe(200);
      console.log(`galera node not ready: -h moved to the next host in ${switchMs} ms`);
    } finally {
      await both.close();
      await alone.close();
    }
  },
  60_000,
);
