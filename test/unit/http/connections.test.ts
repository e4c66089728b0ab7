/**
 * trackConnections on a real Node HTTP server: at a stop, closeUnused closes a connection that
 * never sent a request and one idle between keep-alive requests, and leaves the one whose
 * answer is still on its way.
 */
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { afterEach, expect, test } from '@jest/globals';
import { trackConnections } from '../../../src/http/connections.js';

let server: http.Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

/** A connection to `port` that records whether it was closed and what it received. */
async function connect(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString();
  });
  socket.on('close', () => {
    closed = true;
  });
  return {
    ask: (path: string) => socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`),
    received: () => received,
    closed: () => closed,
  };
}

const until = async (holds: () => boolean) => {
  for (let i = 0; i < 200 && !holds(); i++) await new Promise((r) => setTimeout(r, 10));
};

test('closes the unused and the idle connections, not one with an answer on its way', async () => {
  let finishSlow: (() => void) | undefined;
  server = http.createServer((request, response) => {
    if (request.url === '/slow') finishSlow = () => response.end('slow');
    else response.end('quick');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  const connections = trackConnections(server);

  const unused = await connect(port);
  const idle = await connect(port);
  idle.ask('/quick');
  await until(() => idle.received().endsWith('quick'));
  const busy = await connect(port);
  busy.ask('/slow');
  await until(() => finishSlow !== undefined);

  connections.closeUnused();
  await until(() => unused.closed() && idle.closed());
  expect([unused.closed(), idle.closed(), busy.closed()]).toEqual([true, true, false]);
  finishSlow?.();
  await until(() => busy.received().endsWith('slow'));
  expect(busy.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*slow$/);
});
