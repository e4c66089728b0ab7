/**
 * `--shutdown-delay` (rolling restarts behind a load balancer, docs/operations.md): from the moment
 * the gateway is told to stop, /health answers 503 `shutting down` and every answer closes its
 * connection, while every other request is still served; only after the delay does the gateway
 * stop accepting connections.
 */
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const DELAY_MS = 1500;
let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(`
    CREATE TABLE notes (id INT PRIMARY KEY, body VARCHAR(20) NOT NULL);
    INSERT INTO notes VALUES (1, 'one');
  `);
  gw = await startTestGateway(db.name, { shutdownDelayMs: DELAY_MS });
});

afterAll(async () => {
  await gw.close();
  await db.drop();
});

function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

test('during the delay: /health 503 "shutting down", reads and writes served, connections closed after each answer; then the port closes', async () => {
  expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  const stopAsked = Date.now();
  const closing = gw.gateway.close();

  const health = await fetch(`${gw.url}/health`);
  expect(health.status).toBe(503);
  expect(health.headers.get('connection')).toBe('close');
  expect(await health.json()).toEqual({ status: 'shutting down' });

  const live = await fetch(`${gw.url}/live`);
  expect(live.status).toBe(200);

  const read = await fetch(`${gw.url}/table/notes/read?$filter=id%20eq%201`);
  expect(read.status).toBe(200);
  expect(read.headers.get('connection')).toBe('close');
  expect(await read.json()).toEqual([{ id: 1, body: 'one' }]);

  const write = await fetch(`${gw.url}/table/notes/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 2, body: 'two' }),
  });
  expect(write.status).toBe(200);
  const [rows] = await db.admin.query('SELECT body FROM notes WHERE id = 2');
  expect(rows).toEqual([{ body: 'two' }]);

  expect(await refused(gw.url)).toBe(false);
  await closing;
  expect(Date.now() - stopAsked).toBeGreaterThanOrEqual(DELAY_MS);
  expect(await refused(gw.url)).toBe(true);
});
