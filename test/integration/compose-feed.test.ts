/**
 * docker-compose.yml's database as the change feed needs it, without a Docker engine: the `db`
 * service's server options given to a private MariaDB (what the offline stand-in of mysql:8.4,
 * scripts/offline-images.sh, runs), the image's set-up of MYSQL_DATABASE and MYSQL_USER done by
 * hand as its entrypoint does it, then docker/initdb/ in name order as root. The gateway logs in
 * as the compose file's user and serves the feed; a change made by root arrives on the stream.
 * `npm run test:container` runs the compose file itself (on mysql:8.4 where it can be pulled).
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { parse } from 'yaml';
import type { PrivateServer } from '../../src/demo/private-server.js';
import { startPrivateServer } from '../../src/demo/private-server.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { rootConnection } from '../helpers/private-servers.js';

const compose = parse(readFileSync(path.resolve('docker-compose.yml'), 'utf8')) as {
  services: {
    db: { command: string[]; environment: Record<string, string> };
    tablegate: { environment: Record<string, string> };
  };
};
const { db } = compose.services;
const INITDB = path.resolve('docker/initdb');
const PASSWORD = randomBytes(12).toString('hex');

let server: PrivateServer;
let root: mysql.Connection;
const gateways: TestGateway[] = [];

/** The gateway as the compose file configures it, with the user and password given. */
async function gatewayAs(user: string, password: string): Promise<TestGateway> {
  const gateway = await startTestGateway(db.environment.MYSQL_DATABASE as string, {
    db: {
      host: server.host,
      port: server.port,
      user,
      password,
      database: db.environment.MYSQL_DATABASE as string,
      poolSize: 2,
    },
    changeFeed: compose.services.tablegate.environment.TABLEGATE_CHANGE_FEED as 'auto',
  });
  gateways.push(gateway);
  return gateway;
}

/** The `data:` of the first `insert` event on an event stream, parsed. */
async function firstInsert(body: ReadableStream<Uint8Array>): Promise<unknown> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before an insert event: ${text}`);
    text += decoder.decode(value, { stream: true });
    const event = /^event: insert\ndata: (.*)\n\n/m.exec(text);
    if (event) {
      await reader.cancel();
      return JSON.parse(event[1] as string);
    }
  }
}

beforeAll(async () => {
  server = await startPrivateServer(undefined, db.command);
  root = await rootConnection(server);
  const database = db.environment.MYSQL_DATABASE as string;
  const user = db.environment.MYSQL_USER as string;
  // What the image's entrypoint does with MYSQL_DATABASE, MYSQL_USER and MYSQL_PASSWORD.
  await root.query(`CREATE DATABASE \`${database}\``);
  await root.query('CREATE USER ?@? IDENTIFIED BY ?', [user, '%', PASSWORD]);
  await root.query(`GRANT ALL ON \`${database}\`.* TO ?@?`, [user, '%']);
  await root.query(`USE \`${database}\``);
  for (const file of readdirSync(INITDB).sort()) {
    await root.query(readFileSync(path.join(INITDB, file), 'utf8'));
  }
}, 60_000);

afterAll(async () => {
  for (const gateway of gateways) await gateway.close();
  await root?.end();
  await server?.destroy();
});

test('the db service runs the binary log in row format with full images', async () => {
  const [[settings]] = await root.query<mysql.RowDataPacket[]>(
    'SELECT @@log_bin AS log_bin, @@binlog_format AS format, @@binlog_row_image AS image, @@server_id AS id',
  );
  expect(settings).toEqual({ log_bin: 1, format: 'ROW', image: 'FULL', id: 1 });
});

test("the init scripts give the gateway's user the binary-log grants (MariaDB: BINLOG MONITOR)", async () => {
  const [grants] = await root.query<mysql.RowDataPacket[]>("SHOW GRANTS FOR 'tablegate'@'%'");
  expect(
    grants.map((row) => (Object.values(row)[0] as string).replace(/ IDENTIFIED .*/, '')),
  ).toEqual([
    'GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `tablegate`@`%`',
    'GRANT ALL PRIVILEGES ON `shop`.* TO `tablegate`@`%`',
  ]);
});

test("as the compose file's user the feed is on, and a change made by root arrives", async () => {
  const gateway = await gatewayAs('tablegate', PASSWORD);
  expect(gateway.gateway.feed.status).toEqual({ on: true });
  const stream = await fetch(`${gateway.url}/table/products/changes?$select=id,name,price`);
  expect(stream.status).toBe(200);
  const event = firstInsert(stream.body as ReadableStream<Uint8Array>);
  // As `docker compose exec db mysql` would.
  await root.query(
    "INSERT INTO shop.products (name, category, price, stock) VALUES ('Rooibos, 100 g', 'tea', 5.9, 30)",
  );
  expect(await event).toEqual({
    op: 'insert',
    table: 'products',
    key: { id: 6 },
    row: { id: 6, name: 'Rooibos, 100 g', price: 5.9 },
    at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
    tx: expect.stringMatching(/^0-1-\d+$/),
  });
}, 30_000);

test('without those grants the feed is off, saying what to grant', async () => {
  const other = `nogrants_${randomBytes(3).toString('hex')}`;
  await root.query('CREATE USER ?@? IDENTIFIED BY ?', [other, '%', PASSWORD]);
  await root.query('GRANT ALL ON `shop`.* TO ?@?', [other, '%']);
  const gateway = await gatewayAs(other, PASSWORD);
  const reason = `user ${other} may not read the binary log (MariaDB: GRANT BINLOG MONITOR, REPLICATION SLAVE; MySQL: GRANT REPLICATION CLIENT, REPLICATION SLAVE)`;
  expect(gateway.gateway.feed.status).toEqual({ on: false, reason });
  const answer = await fetch(`${gateway.url}/table/products/changes`);
  expect(answer.status).toBe(503);
  expect(await answer.json()).toEqual({
    success: false,
    message: `The change feed is off: ${reason}`,
    code: 'FEED_UNAVAILABLE',
  });
}, 30_000);
