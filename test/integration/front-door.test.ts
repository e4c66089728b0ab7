/**
 * REST and MCP are two front doors of one application (pipeline/handle.ts): the same Operation
 * answers the same bytes through either, and a table's 404 comes before any error in the rest of
 * the request, whichever door it came through and whatever else is wrong with it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SHOP = `
CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(100) NULL);
CREATE FUNCTION with_tax(p DECIMAL(10,2)) RETURNS DECIMAL(10,2) DETERMINISTIC RETURN p * 1.2;
`;

const UNKNOWN = { success: false, message: "Table 'nope' does not exist", code: 'UNKNOWN_TABLE' };

type Tool = { content: { type: string; text: string }[]; isError?: boolean };

let db: TestDatabase;
let gw: TestGateway;
let client: Client;

/** A tool's answer text, and whether it is an error. */
async function tool(name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as Tool;
  return { error: result.isError === true, text: result.content[0]?.text ?? '' };
}

async function rest(method: string, path: string, body?: string, type = 'application/json') {
  const response = await fetch(`${gw.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': type },
    body,
  });
  return { status: response.status, text: await response.text() };
}

beforeAll(async () => {
  db = await createTestDatabase(SHOP);
  gw = await startTestGateway(db.name);
  client = new Client({ name: 'tablegate-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`)));
});
afterAll(async () => {
  await client?.close();
  await gw?.close();
  await db?.drop();
});

test('REST: the 404 of an unknown table before a 415, a bad key or a bad option', async () => {
  for (const [method, path, body, type] of [
    ['POST', '/table/nope/create', 'x', 'text/plain'],
    ['PUT', '/table/nope/update(id,1)', 'x', 'text/plain'],
    ['GET', '/table/nope/read(id,)', undefined, undefined],
    ['GET', '/table/nope/read?$top=-1', undefined, undefined],
  ] as const) {
    const answer = await rest(method, path, body, type);
    expect({ path, ...answer }).toEqual({ path, status: 404, text: JSON.stringify(UNKNOWN) });
  }
});

test('MCP: the 404 of an unknown table before an error in the other arguments', async () => {
  for (const [name, args] of [
    ['read_rows', { table: 'nope', top: -1 }],
    ['aggregate_rows', { table: 'nope', apply: 'aggregate($count as n)', skip: -1 }],
    ['create_rows', { table: 'nope' }],
    ['update_rows', { table: 'nope', key: 'id', value: '1' }],
    ['delete_rows', { table: 'nope' }],
  ] as const) {
    expect({ name, ...(await tool(name, args)) }).toEqual({
      name,
      error: true,
      text: JSON.stringify(UNKNOWN),
    });
  }
});

test('a write and a call answer the same bytes through REST and MCP', async () => {
  const byRest = await rest('POST', '/table/orders/create', '{"note":"a"}');
  const byTool = await tool('create_rows', { table: 'orders', rows: { note: 'b' } });
  expect(byRest.status).toBe(200);
  expect(byTool.error).toBe(false);
  expect(byTool.text.replace('"insertId":2', '"insertId":1')).toBe(byRest.text);
  const updated = await rest('PUT', '/table/orders/update(id,1)', '{"note":"c"}');
  const toolUpdated = await tool('update_rows', {
    table: 'orders',
    key: 'id',
    value: '2',
    values: { note: 'c' },
  });
  expect(toolUpdated).toEqual({ error: false, text: updated.text });
  const deleted = await rest('DELETE', '/table/orders/delete(id,1)');
  expect(await tool('delete_rows', { table: 'orders', key: 'id', value: '2' })).toEqual({
    error: false,
    text: deleted.text,
  });
  expect(deleted.text).toBe(
    '{"success":true,"message":"Data deleted successfully","affectedRows":1}',
  );
  const called = await rest('POST', '/rpc/with_tax', '{"p":10}');
  expect(called).toEqual({ status: 200, text: '{"success":true,"value":12.00}' });
  expect(await tool('call_routine', { name: 'with_tax', arguments: { p: 10 } })).toEqual({
    error: false,
    text: called.text,
  });
});
