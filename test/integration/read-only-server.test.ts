/**
 * A write that reaches a read-only server — a replica or standby that `-h` or a proxy settled
 * on, a primary in the middle of a switch-over (docs/operations.md) — is the server's state, not
 * the client's mistake: 503 with the server's error name and nothing written (it was a 500 before).
 * Reads are served. A private server, since `SET GLOBAL read_only` on the shared one would
 * refuse other test files' writes.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import { type PrivateServer, startPrivateServer } from '../../src/demo/private-server.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { rootConnection } from '../helpers/private-servers.js';

let server: PrivateServer;
let admin: mysql.Connection;
let gw: TestGateway;

const READ_ONLY = {
  success: false,
  message:
    'The database server is read-only right now (a replica, or a primary being switched over); nothing was written',
  code: 'ER_OPTION_PREVENTS_STATEMENT',
};

beforeAll(async () => {
  server = await startPrivateServer();
  admin = await rootConnection(server);
  // A user without READ ONLY ADMIN (root would write through read_only).
  await admin.query(`
    CREATE DATABASE shop;
    CREATE TABLE shop.notes (id INT PRIMARY KEY, body VARCHAR(20) NOT NULL);
    INSERT INTO shop.notes VALUES (1, 'one');
    CREATE USER 'gateway'@'127.0.0.1' IDENTIFIED BY 'gateway-password';
    GRANT SELECT, INSERT, UPDATE, DELETE ON shop.* TO 'gateway'@'127.0.0.1';
  `);
  gw = await startTestGateway('shop', {
    db: {
      host: server.host,
      port: server.port,
      user: 'gateway',
      password: 'gateway-password',
      database: 'shop',
      poolSize: 2,
    },
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await admin?.end();
  await server?.destroy();
});

async function send(method: string, path: string, body?: unknown) {
  const response = await fetch(`${gw.url}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return [response.status, await response.json()];
}

test('read_only: creates, updates and deletes answer 503 with nothing written; reads are served; writes work again once it is off', async () => {
  await admin.query('SET GLOBAL read_only = ON');
  expect(await send('POST', '/table/notes/create', { id: 2, body: 'two' })).toEqual([
    503,
    READ_ONLY,
  ]);
  expect(
    await send('POST', '/table/notes/create', [
      { id: 3, body: 'x' },
      { id: 4, body: 'y' },
    ]),
  ).toEqual([503, READ_ONLY]);
  expect(await send('PUT', '/table/notes/update(id,1)', { body: 'changed' })).toEqual([
    503,
    READ_ONLY,
  ]);
  expect(await send('DELETE', '/table/notes/delete(id,1)')).toEqual([503, READ_ONLY]);
  expect(await send('GET', '/table/notes/read')).toEqual([200, [{ id: 1, body: 'one' }]]);
  const [rows] = await admin.query('SELECT id, body FROM shop.notes');
  expect(rows).toEqual([{ id: 1, body: 'one' }]);

  await admin.query('SET GLOBAL read_only = OFF');
  expect(await send('POST', '/table/notes/create', { id: 2, body: 'two' })).toEqual([
    200,
    { success: true, message: 'Data inserted successfully', insertId: null, affectedRows: 1 },
  ]);
});
