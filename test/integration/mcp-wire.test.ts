/**
 * `POST /mcp` on the wire: exact statuses, headers and bodies of the Streamable HTTP transport's
 * answers — a single call (the path the gateway answers without the SDK's Web transport, see
 * mcp/single-call.ts), and every request that path hands on to the SDK's transport: batches,
 * notifications, `initialize`, a missing Accept type, another Content-Type, an unsupported
 * protocol version and messages that are not JSON-RPC. Both paths must answer byte for byte
 * what the SDK's transport answers.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const ACCEPT = 'application/json, text/event-stream';

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(`
    CREATE TABLE products (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,2) NOT NULL);
    INSERT INTO products VALUES (1, 'tea', 12.50), (2, 'cup', 3.00);
  `);
  gw = await startTestGateway(db.name);
});
afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

interface Answer {
  status: number;
  contentType: string | null;
  text: string;
}

async function post(
  body: unknown,
  headers: Record<string, string> = {},
  raw?: string,
): Promise<Answer> {
  const response = await fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: { accept: ACCEPT, 'content-type': 'application/json', ...headers },
    body: raw ?? JSON.stringify(body),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    text: await response.text(),
  };
}

const call = (id: number | string, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

const transportError = (code: number, message: string) =>
  JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });

describe('a single request', () => {
  test('tools/call: the result, as JSON, with the request id', async () => {
    const answer = await post(call(7, 'read_rows', { table: 'products', filter: 'id eq 1' }));
    expect(answer).toEqual({
      status: 200,
      contentType: 'application/json; charset=utf-8',
      text: JSON.stringify({
        result: {
          content: [
            { type: 'text', text: '{"rows":[{"id":1,"name":"tea","price":12.50}],"more":false}' },
          ],
        },
        jsonrpc: '2.0',
        id: 7,
      }),
    });
  });

  test('a string id, every supported protocol version header, and none', async () => {
    const expected = (id: string) =>
      JSON.stringify({
        result: { content: [{ type: 'text', text: '{"rows":[{"id":2}],"more":false}' }] },
        jsonrpc: '2.0',
        id,
      });
    const args = { table: 'products', filter: 'id eq 2', select: 'id' };
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
      const answer = await post(call('a-1', 'read_rows', args), {
        'mcp-protocol-version': version,
      });
      expect(answer.text).toBe(expected('a-1'));
    }
    expect((await post(call('b', 'read_rows', args))).text).toBe(expected('b'));
  });

  test('a tool error is a result marked isError', async () => {
    const answer = await post(call(1, 'read_rows', { table: 'nope' }));
    expect(answer.status).toBe(200);
    const message = JSON.parse(answer.text);
    expect(message).toMatchObject({ jsonrpc: '2.0', id: 1, result: { isError: true } });
    expect(JSON.parse(message.result.content[0].text)).toMatchObject({
      success: false,
      code: 'UNKNOWN_TABLE',
    });
  });

  test('an unknown tool and bad params are JSON-RPC errors', async () => {
    const unknown = await post(call(2, 'drop_tables', {}));
    expect(unknown).toEqual({
      status: 200,
      contentType: 'application/json; charset=utf-8',
      text: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        error: { code: -32602, message: 'MCP error -32602: Unknown tool: drop_tables' },
      }),
    });
    const bad = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 5 } });
    expect(bad.status).toBe(200);
    expect(JSON.parse(bad.text)).toMatchObject({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32603 },
    });
  });

  test('ping, tools/list and a method the server does not have', async () => {
    expect((await post({ jsonrpc: '2.0', id: 4, method: 'ping' })).text).toBe(
      JSON.stringify({ result: {}, jsonrpc: '2.0', id: 4 }),
    );
    const listed = JSON.parse((await post({ jsonrpc: '2.0', id: 5, method: 'tools/list' })).text);
    expect(listed.result.tools.map((t: { name: string }) => t.name)).toContain('read_rows');
    expect((await post({ jsonrpc: '2.0', id: 6, method: 'resources/list' })).text).toBe(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 6,
        error: { code: -32601, message: 'Method not found' },
      }),
    );
  });

  test('initialize: the server, its version and the negotiated protocol', async () => {
    const answer = await post({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'wire', version: '1' },
      },
    });
    expect(answer.status).toBe(200);
    const message = JSON.parse(answer.text);
    expect(message).toMatchObject({
      jsonrpc: '2.0',
      id: 0,
      result: { protocolVersion: LATEST_PROTOCOL_VERSION, serverInfo: { name: 'tablegate' } },
    });
  });
});

describe('what the SDK transport answers', () => {
  test('a batch: every answer, in order, as one array', async () => {
    const answer = await post([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      call(2, 'read_rows', { table: 'products', filter: 'id eq 1', select: 'name' }),
    ]);
    expect(answer).toEqual({
      status: 200,
      contentType: 'application/json; charset=utf-8',
      text: JSON.stringify([
        { result: {}, jsonrpc: '2.0', id: 1 },
        {
          result: { content: [{ type: 'text', text: '{"rows":[{"name":"tea"}],"more":false}' }] },
          jsonrpc: '2.0',
          id: 2,
        },
      ]),
    });
  });

  test('notifications only: 202 and no body', async () => {
    const answer = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(answer.status).toBe(202);
    expect(answer.text).toBe('');
  });

  test('Accept without text/event-stream: 406', async () => {
    expect(await post(call(1, 'list_tables', {}), { accept: 'application/json' })).toEqual({
      status: 406,
      contentType: 'application/json; charset=utf-8',
      text: transportError(
        -32000,
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      ),
    });
  });

  test('another Content-Type: 415', async () => {
    const answer = await post(
      undefined,
      { 'content-type': 'text/plain' },
      JSON.stringify(call(1, 'list_tables', {})),
    );
    expect(answer.status).toBe(415);
  });

  test('a Content-Type no route parses: the same 415 as text/plain, not the REST one', async () => {
    for (const type of ['application/xml', 'text/plain', 'application/x-www-form-urlencoded']) {
      expect(await post(undefined, { 'content-type': type }, '<a/>')).toEqual({
        status: 415,
        contentType: 'application/json; charset=utf-8',
        text: transportError(
          -32000,
          'Unsupported Media Type: Content-Type must be application/json',
        ),
      });
    }
  });

  test('an unsupported protocol version: 400', async () => {
    const answer = await post(call(1, 'list_tables', {}), { 'mcp-protocol-version': '1999-01-01' });
    expect(answer).toEqual({
      status: 400,
      contentType: 'application/json; charset=utf-8',
      text: transportError(
        -32000,
        `Bad Request: Unsupported protocol version: 1999-01-01 (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      ),
    });
  });

  test('a body that is not JSON (or none): 400 with the JSON-RPC parse error, as the SDK answers it', async () => {
    // A stateless transport answers one request.
    const sdk = () =>
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
    for (const raw of ['{', 'not json', '', '{"jsonrpc": "2.0", "id": 1,', '\u00ff']) {
      const answer = await post(undefined, {}, raw);
      expect(answer).toEqual({
        status: 400,
        contentType: 'application/json; charset=utf-8',
        text: transportError(-32700, 'Parse error: Invalid JSON'),
      });
      const own = await sdk().handleRequest(
        new Request('http://sdk.invalid/mcp', {
          method: 'POST',
          headers: { accept: ACCEPT, 'content-type': 'application/json' },
          body: raw,
        }),
      );
      expect([own.status, await own.text()]).toEqual([answer.status, answer.text]);
    }
    // The transport's checks come first, as for any body.
    expect(await post(undefined, { accept: 'application/json' }, '{')).toEqual({
      status: 406,
      contentType: 'application/json; charset=utf-8',
      text: transportError(
        -32000,
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      ),
    });
    // JSON with a `__proto__` key is refused before the transport, as on every route.
    expect(await post(undefined, {}, '{"__proto__": {"x": 1}}')).toEqual({
      status: 400,
      contentType: 'application/json; charset=utf-8',
      text: JSON.stringify({
        success: false,
        message: 'Request body is not valid JSON',
        code: 'INVALID_JSON',
      }),
    });
  });

  test('JSON that is not a JSON-RPC message: 400', async () => {
    for (const body of [
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 'ping', extra: true },
      { jsonrpc: '2.0', id: null, method: 'ping' },
      { jsonrpc: '2.0', id: 1 },
      42,
    ]) {
      expect(await post(body)).toEqual({
        status: 400,
        contentType: 'application/json; charset=utf-8',
        text: transportError(-32700, 'Parse error: Invalid JSON-RPC message'),
      });
    }
  });
});
