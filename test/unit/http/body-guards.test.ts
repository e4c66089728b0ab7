import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { hasBody, nestsDeeperThan } from '../../../src/http/body-guards.js';

describe('nestsDeeperThan', () => {
  const arrays = (levels: number) => JSON.parse('['.repeat(levels) + ']'.repeat(levels));

  test.each([
    [null, 0, false],
    ['text', 0, false],
    [{}, 1, false],
    [{}, 0, true],
    [[{ a: [1] }], 3, false],
    [[{ a: [1] }], 2, true],
    [{ a: 1, b: { c: { d: [] } } }, 4, false],
    [{ a: 1, b: { c: { d: [] } } }, 3, true],
  ])('%j deeper than %d: %s', (value, limit, expected) => {
    expect(nestsDeeperThan(value, limit)).toBe(expected);
  });

  test('any depth, without recursion', () => {
    expect(nestsDeeperThan(arrays(64), 64)).toBe(false);
    expect(nestsDeeperThan(arrays(65), 64)).toBe(true);
    expect(nestsDeeperThan(arrays(200_000), 64)).toBe(true);
  });
});

describe('hasBody', () => {
  test.each([
    [{}, false],
    [{ 'content-length': '0' }, false],
    [{ 'content-length': '12' }, true],
    [{ 'transfer-encoding': 'chunked' }, true],
    [{ 'transfer-encoding': 'chunked', 'content-length': '0' }, true],
  ])('%j: %s', (headers, expected) => {
    expect(hasBody(headers)).toBe(expected);
  });

  // The edge the body timer's shortcut relies on: Node's parser reads no body without these
  // headers, so such a request is complete right after its headers (before any timer could fire).
  test.each([
    ['GET /x HTTP/1.1\r\nHost: a\r\n\r\n', false],
    ['POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n', false],
    ['POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n', true],
    ['POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n', true],
  ])('Node completes %j at once: %s', async (head, waits) => {
    const server = http.createServer();
    const seen = new Promise<{ hasBody: boolean; complete: boolean }>((resolve) => {
      server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
        const body = hasBody(request.headers);
        setImmediate(() => {
          resolve({ hasBody: body, complete: request.complete });
          response.end();
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
    socket.on('error', () => {});
    try {
      // A request without a body is complete without one more byte; one with a body waits.
      expect(await seen).toEqual({ hasBody: waits, complete: !waits });
    } finally {
      socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  // The edge the body timer relies on (http/body-guards.ts): a small body in the same packet as
  // its headers is not yet read when the next tick runs (the parser calls back for the headers
  // before it reads on), and is complete by setImmediate, so no timer is armed for it.
  test('a body in the packet of its headers: not complete on the next tick, complete by setImmediate', async () => {
    const server = http.createServer();
    const seen = new Promise<{ tick: boolean; immediate: boolean }>((resolve) => {
      server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
        let tick = true;
        process.nextTick(() => {
          tick = request.complete;
        });
        setImmediate(() => {
          resolve({ tick, immediate: request.complete });
          response.end();
        });
        request.resume();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const body = '{"qty":42}';
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write(
        `PUT /x HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      ),
    );
    socket.on('error', () => {});
    try {
      expect(await seen).toEqual({ tick: false, immediate: true });
    } finally {
      socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
