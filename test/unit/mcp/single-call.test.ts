/**
 * Which POSTs to /mcp the gateway answers itself (mcp/single-call.ts) and which it leaves to
 * the SDK's transport, and the transport of one request: it hands the request over and resolves
 * with the reply to it, nothing else. The answers of both paths on the wire:
 * test/integration/mcp-wire.test.ts.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { SingleCallTransport, singleCall } from '../../../src/mcp/single-call.js';

const HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
};
const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

describe('singleCall', () => {
  test('one JSON-RPC request with the transport’s headers is answered directly', () => {
    expect(singleCall(HEADERS, PING)).toEqual(PING);
    const call = { jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'read_rows' } };
    expect(singleCall({ ...HEADERS, 'mcp-protocol-version': '2025-06-18' }, call)).toEqual(call);
    expect(
      singleCall({ ...HEADERS, 'content-type': 'application/json; charset=utf-8' }, PING),
    ).toEqual(PING);
  });

  test('everything else goes to the SDK’s transport', () => {
    const handedOn: [Record<string, string | undefined>, unknown][] = [
      [HEADERS, [PING]],
      [HEADERS, { jsonrpc: '2.0', method: 'notifications/initialized' }],
      [HEADERS, { jsonrpc: '2.0', id: 1, result: {} }],
      [HEADERS, { jsonrpc: '2.0', id: 0, method: 'initialize', params: {} }],
      [HEADERS, { ...PING, extra: 1 }],
      [HEADERS, { ...PING, id: null }],
      [HEADERS, { ...PING, jsonrpc: '1.0' }],
      [HEADERS, 'ping'],
      [HEADERS, null],
      [HEADERS, undefined],
      [{ ...HEADERS, accept: undefined }, PING],
      [{ ...HEADERS, accept: 'application/json' }, PING],
      [{ ...HEADERS, accept: 'text/event-stream' }, PING],
      [{ ...HEADERS, 'content-type': 'text/plain' }, PING],
      [{ ...HEADERS, 'content-type': 'text/plain; a=application/json' }, PING],
      [{ ...HEADERS, 'content-type': undefined }, PING],
      [{ ...HEADERS, 'mcp-protocol-version': '1999-01-01' }, PING],
    ];
    for (const [headers, body] of handedOn) expect(singleCall(headers, body)).toBeUndefined();
  });
});

describe('SingleCallTransport', () => {
  test('the server’s reply to the request, after its notifications', async () => {
    const server = new Server(
      { name: 't', version: '1' },
      { capabilities: { tools: {}, logging: {} } },
    );
    server.setRequestHandler(CallToolRequestSchema, async (_call, extra) => {
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', data: 'working' },
      });
      return { content: [{ type: 'text', text: 'done' }] };
    });
    const transport = new SingleCallTransport({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'x' },
    });
    await server.connect(transport);
    transport.deliver();
    expect(await transport.answer).toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: { content: [{ type: 'text', text: 'done' }] },
    });
  });

  test('a method the server does not have: its JSON-RPC error', async () => {
    const server = new Server({ name: 't', version: '1' }, { capabilities: {} });
    const transport = new SingleCallTransport({ jsonrpc: '2.0', id: 'q', method: 'tools/list' });
    await server.connect(transport);
    transport.deliver();
    expect(await transport.answer).toEqual({
      jsonrpc: '2.0',
      id: 'q',
      error: { code: -32601, message: 'Method not found' },
    });
  });
});
