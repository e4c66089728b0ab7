/**
 * The MCP endpoint with the official SDK's client over HTTP against a running gateway: the tools
 * and their answers in open mode (compared with the REST answers of the same request), and in
 * auth mode with a policy — two roles with different tool lists, rows isolated by the role's
 * where, a write the policy refuses as a tool error, `anonymous` without a token, and no token
 * where `anonymous` is granted nothing.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type mysql from 'mysql2/promise';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { signUpAs, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SHOP = `
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
CREATE TABLE products (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,2) NOT NULL,
  cost DECIMAL(10,2) NOT NULL);
CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, customer_id INT NULL, owner BIGINT UNSIGNED NULL,
  placed DATETIME(3) NOT NULL DEFAULT '2024-01-01 00:00:00.000', note VARCHAR(100) NULL,
  FOREIGN KEY (customer_id) REFERENCES customers (id));
INSERT INTO customers VALUES (1, 'Ann'), (2, 'Bob');
INSERT INTO products VALUES (1, 'tea', 12.50, 4.00), (2, 'cup', 3.00, 1.10), (3, 'pot', 30.10, 9.99);
CREATE PROCEDURE cheaper_than(IN most DECIMAL(10,2), OUT found INT) COMMENT 'Products under a price'
BEGIN
  SELECT id, name FROM products WHERE price < most ORDER BY id;
  SELECT COUNT(*) INTO found FROM products WHERE price < most;
END;
CREATE FUNCTION with_tax(p DECIMAL(10,2)) RETURNS DECIMAL(10,2) DETERMINISTIC
BEGIN
  IF p < 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'A price is never negative'; END IF;
  RETURN p * 1.2;
END;
`;

/** Every tool, in the order they are listed. */
const ALL_TOOLS = [
  'list_tables',
  'read_rows',
  'aggregate_rows',
  'create_rows',
  'update_rows',
  'delete_rows',
  'call_routine',
];

type Tool = { content: { type: string; text: string }[]; isError?: boolean };

/** The Inspector's command, as its package's bin names it. */
const INSPECTOR = path.resolve(
  'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
);

/** A command's standard output; it fails with its standard error. */
function run(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

async function connect(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'tablegate-test', version: '1.0.0' });
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }),
  );
  return client;
}

async function tool(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as Tool;
  expect(result.content).toHaveLength(1);
  return { error: result.isError === true, body: JSON.parse(result.content[0]?.text ?? 'null') };
}

const toolNames = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase(SHOP);
});
afterAll(async () => {
  await db?.drop();
});

describe('open mode', () => {
  let gw: TestGateway;
  let client: Client;

  beforeAll(async () => {
    gw = await startTestGateway(db.name, { mcpMaxRows: 2 });
    client = await connect(gw.url);
  });
  afterAll(async () => {
    await client?.close();
    await gw?.close();
  });

  test('the server names itself and offers every tool', async () => {
    expect(client.getServerVersion()?.name).toBe('tablegate');
    expect(await toolNames(client)).toEqual(ALL_TOOLS);
    const { tools } = await client.listTools();
    for (const t of tools) {
      expect(t.description?.length).toBeGreaterThan(40);
      expect(t.inputSchema.type).toBe('object');
    }
  });

  test('list_tables: columns with types, keys, relations and actions', async () => {
    const { error, body } = await tool(client, 'list_tables');
    expect(error).toBe(false);
    const orders = body.tables.find((t: { name: string }) => t.name === 'orders');
    expect(orders).toEqual({
      name: 'orders',
      kind: 'table',
      primaryKey: ['id'],
      columns: [
        { name: 'id', type: 'int(11)', nullable: false, hasDefault: true },
        { name: 'customer_id', type: 'int(11)', nullable: true, hasDefault: true },
        { name: 'owner', type: 'bigint(20) unsigned', nullable: true, hasDefault: true },
        { name: 'placed', type: 'datetime(3)', nullable: false, hasDefault: true },
        { name: 'note', type: 'varchar(100)', nullable: true, hasDefault: true },
      ],
      relations: [{ name: 'customer', target: 'customers', kind: 'to-one' }],
      actions: ['read', 'create', 'update', 'delete'],
    });
    expect(body.routines).toEqual([
      {
        name: 'cheaper_than',
        kind: 'procedure',
        parameters: [
          { name: 'most', mode: 'in', type: 'decimal(10,2)' },
          { name: 'found', mode: 'out', type: 'int(11)' },
        ],
        description: 'Products under a price',
      },
      {
        name: 'with_tax',
        kind: 'function',
        parameters: [{ name: 'p', mode: 'in', type: 'decimal(10,2)' }],
        returns: 'decimal(10,2)',
      },
    ]);
  });

  test('aggregate_rows answers what the REST $apply answers, at most --mcp-max-rows groups', async () => {
    const apply = 'groupby((name),aggregate(price with sum as total,$count as n))';
    const rest = await (
      await fetch(
        `${gw.url}/table/products/read?$apply=${encodeURIComponent(apply)}&$orderby=name&$top=2`,
      )
    ).text();
    const { error, body } = await tool(client, 'aggregate_rows', {
      table: 'products',
      apply,
      orderby: 'name',
    });
    expect(error).toBe(false);
    expect(body.rows).toEqual(JSON.parse(rest));
    expect(body.rows).toEqual([
      { name: 'cup', total: 3.0, n: 1 },
      { name: 'pot', total: 30.1, n: 1 },
    ]);
    expect(body).toMatchObject({
      more: true,
      note: 'More groups exist: read the next ones with skip 2; at most 2 groups are answered per call.',
    });
    const all = await tool(client, 'aggregate_rows', {
      table: 'products',
      apply: 'aggregate(cost with max as dearest)',
      filter: 'price lt 20',
    });
    expect(all).toEqual({ error: false, body: { rows: [{ dearest: 4.0 }], more: false } });
    expect(await tool(client, 'aggregate_rows', { table: 'products', apply: 'sum(x)' })).toEqual({
      error: true,
      body: {
        success: false,
        message: expect.stringMatching(/^Invalid \$apply at position 1: /),
        code: 'APPLY_SYNTAX',
      },
    });
    expect((await tool(client, 'aggregate_rows', { table: 'products' })).body).toEqual({
      success: false,
      message: "The argument 'apply' is required",
      code: 'INVALID_BODY',
    });
  });

  test('call_routine calls a procedure or a function as POST /rpc does', async () => {
    const rest = await (
      await fetch(`${gw.url}/rpc/cheaper_than`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ most: 20 }),
      })
    ).json();
    const procedure = await tool(client, 'call_routine', {
      name: 'cheaper_than',
      arguments: { most: 20 },
    });
    expect(procedure).toEqual({ error: false, body: rest });
    expect(procedure.body).toEqual({
      success: true,
      results: [
        [
          { id: 1, name: 'tea' },
          { id: 2, name: 'cup' },
        ],
      ],
      out: { found: 2 },
    });
    expect(
      await tool(client, 'call_routine', { name: 'with_tax', arguments: { p: '10.00' } }),
    ).toEqual({ error: false, body: { success: true, value: 12.0 } });
    for (const [args, code, message] of [
      [{ name: 'nope' }, 'UNKNOWN_ROUTINE', "Routine 'nope' does not exist"],
      [{ name: 'with_tax', arguments: { p: -1 } }, 'ROUTINE_ERROR', 'A price is never negative'],
      [
        { name: 'with_tax', arguments: { q: 1 } },
        'UNKNOWN_PARAMETER',
        "Routine 'with_tax' has no parameter 'q' to send",
      ],
    ] as const) {
      expect(await tool(client, 'call_routine', args)).toEqual({
        error: true,
        body: { success: false, message, code },
      });
    }
  });

  test('read_rows answers what the REST read answers, at most --mcp-max-rows rows, and says when more exist', async () => {
    const rest = await (
      await fetch(`${gw.url}/table/products/read?$orderby=price%20desc&$top=2`)
    ).text();
    const { error, body } = await tool(client, 'read_rows', {
      table: 'products',
      orderby: 'price desc',
      count: true,
    });
    expect(error).toBe(false);
    expect(body.rows).toEqual(JSON.parse(rest));
    expect(body).toMatchObject({ count: 3, more: true });
    expect(body.note).toBe(
      'More rows exist: read the next ones with skip 2; at most 2 rows are answered per call.',
    );
    const rest2 = await tool(client, 'read_rows', {
      table: 'products',
      orderby: 'price desc',
      skip: 2,
    });
    expect(rest2.body).toEqual({
      rows: [{ id: 2, name: 'cup', price: 3.0, cost: 1.1 }],
      more: false,
    });
    // DECIMAL digits exactly as stored, in the text an agent reads.
    const { content } = (await client.callTool({
      name: 'read_rows',
      arguments: { table: 'products', filter: 'id eq 3', select: 'price' },
    })) as Tool;
    expect(content[0]?.text).toBe('{"rows":[{"price":30.10}],"more":false}');
  });

  test('the same filter language, expand and errors as REST', async () => {
    const expanded = await tool(client, 'read_rows', {
      table: 'orders',
      select: 'id',
      filter: "customer/name eq 'nobody'",
      expand: 'customer',
    });
    expect(expanded).toEqual({ error: false, body: { rows: [], more: false } });
    for (const [args, code, message] of [
      [{ table: 'nope' }, 'UNKNOWN_TABLE', "Table 'nope' does not exist"],
      [
        { table: 'products', filter: 'nope eq 1' },
        'UNKNOWN_COLUMN',
        "Column 'nope' does not exist in table 'products': did you mean 'name'?",
      ],
      [
        { table: 'products', filter: 'price eq' },
        'FILTER_SYNTAX',
        'Invalid $filter at position 9: expected a column or a value, found end of filter',
      ],
      [
        { table: 'products', top: -1 },
        'INVALID_BODY',
        "The argument 'top' must be a non-negative integer",
      ],
    ] as const) {
      expect(await tool(client, 'read_rows', args)).toEqual({
        error: true,
        body: { success: false, message, code },
      });
    }
    const unknown = await tool(client, 'read_rows', { table: 'products', where: 'x' });
    expect(unknown.error).toBe(true);
    expect(unknown.body.code).toBe('INVALID_BODY');
    expect(unknown.body.message).toMatch(
      /^Unknown argument 'where'; read_rows takes table, select/,
    );
  });

  test('create_rows, update_rows and delete_rows write as REST does', async () => {
    const created = await tool(client, 'create_rows', {
      table: 'orders',
      rows: [{ customer_id: 1, note: "O'Brien, Jo" }, { customer_id: 2 }],
    });
    expect(created).toEqual({
      error: false,
      body: {
        success: true,
        message: 'Data inserted successfully',
        insertId: expect.any(Number),
        affectedRows: 2,
      },
    });
    const first = created.body.insertId as number;
    expect(
      await tool(client, 'update_rows', {
        table: 'orders',
        key: 'note',
        value: "'O''Brien, Jo'",
        values: { note: 'renamed' },
      }),
    ).toEqual({
      error: false,
      body: { success: true, message: 'Data updated successfully', affectedRows: 1 },
    });
    const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
      'SELECT id, note FROM orders WHERE id >= ? ORDER BY id',
      [first],
    );
    expect(rows.map((r) => ({ ...r }))).toEqual([
      { id: first, note: 'renamed' },
      { id: first + 1, note: null },
    ]);
    expect(
      await tool(client, 'delete_rows', { table: 'orders', key: 'id', value: String(first + 1) }),
    ).toEqual({
      error: false,
      body: { success: true, message: 'Data deleted successfully', affectedRows: 1 },
    });
    // By filter instead of key, as REST's update?$filter=…
    expect(
      await tool(client, 'update_rows', {
        table: 'orders',
        filter: `id eq ${first} and note eq 'renamed'`,
        values: { note: 'again' },
      }),
    ).toEqual({
      error: false,
      body: { success: true, message: 'Data updated successfully', affectedRows: 1 },
    });
    expect(
      (
        await tool(client, 'delete_rows', {
          table: 'orders',
          key: 'id',
          value: '1',
          filter: 'id eq 1',
        })
      ).body,
    ).toEqual({
      success: false,
      message: 'delete_rows takes either key and value, or filter; not both',
      code: 'INVALID_BODY',
    });
    const bad = await tool(client, 'create_rows', { table: 'orders', rows: { nope: 1 } });
    expect(bad).toEqual({
      error: true,
      body: {
        success: false,
        message: "Column 'nope' does not exist in table 'orders': did you mean 'note'?",
        code: 'UNKNOWN_COLUMN',
      },
    });
  });

  test('hostile arguments are refused, tables intact', async () => {
    for (const args of [
      { table: 'products; DROP TABLE products' },
      { table: 'products', filter: "name eq 'x' or '1'='1'" },
      { table: 'products', select: 'id, (SELECT 1)' },
      { table: 'products', orderby: 'id; DROP TABLE products' },
    ]) {
      const { error } = await tool(client, 'read_rows', args);
      expect(error).toBe(true);
    }
    const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
      'SELECT COUNT(*) AS n FROM products',
    );
    expect(Number(rows[0]?.n)).toBe(3);
  });

  test('the MCP Inspector (its CLI mode) lists the tools and calls read_rows', async () => {
    const inspect = (...args: string[]) =>
      run(process.execPath, [INSPECTOR, '--cli', `${gw.url}/mcp`, '--transport', 'http', ...args]);
    const listed = JSON.parse(await inspect('--method', 'tools/list'));
    expect(listed.tools.map((t: { name: string }) => t.name)).toEqual(ALL_TOOLS);
    const called = JSON.parse(
      await inspect(
        '--method',
        'tools/call',
        '--tool-name',
        'read_rows',
        '--tool-arg',
        'table=products',
        '--tool-arg',
        'filter=id eq 1',
      ),
    );
    expect(called.content[0].text).toBe(
      '{"rows":[{"id":1,"name":"tea","price":12.50,"cost":4.00}],"more":false}',
    );
  });

  test('GET and DELETE /mcp answer 405 (stateless: no stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${gw.url}/mcp`, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(await response.json()).toEqual({
        success: false,
        message: `${method} is not allowed here; this path answers POST`,
        code: 'METHOD_NOT_ALLOWED',
      });
    }
  });
});

describe('auth mode with a policy', () => {
  let gw: TestGateway;
  let dir: string;
  const tokens: Record<string, string> = {};
  const ids: Record<string, string> = {};
  const PASSWORD = 'correct horse battery';

  const POLICY = {
    roles: {
      anonymous: { tables: { products: { read: { columns: ['id', 'name', 'price'] } } } },
      user: {
        tables: {
          products: { read: true },
          customers: { read: true },
          orders: {
            read: { where: 'owner eq @user.id' },
            create: { where: 'owner eq @user.id' },
          },
        },
        routines: { with_tax: true },
      },
      viewer: { tables: { products: { read: true } } },
      clerk: { tables: { orders: { read: true, update: { columns: ['note'] } } } },
    },
  };

  async function signUp(name: string, role: string): Promise<void> {
    const email = `${name}@shop.example`;
    const user = await signUpAs(gw.url, db.admin, { email, password: PASSWORD }, role);
    tokens[name] = user.token;
    ids[name] = user.id;
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-mcp-'));
    const file = path.join(dir, `${randomBytes(4).toString('hex')}-policy.json`);
    await writeFile(file, JSON.stringify(POLICY));
    gw = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: 'mcp-test-secret-0123456789abcdefghijklmnop',
      policyFile: file,
    });
    await signUp('ann', 'user');
    await signUp('bob', 'user');
    await signUp('vic', 'viewer');
    await signUp('nat', 'nobody');
    await signUp('cal', 'clerk');
    await db.admin.query(
      'INSERT INTO orders (customer_id, owner, note) VALUES (1, ?, ?), (2, ?, ?)',
      [ids.ann, 'ann’s', ids.bob, 'bob’s'],
    );
  });
  afterAll(async () => {
    await gw?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('each role is offered the tools it can use', async () => {
    const user = await connect(gw.url, tokens.ann);
    const viewer = await connect(gw.url, tokens.vic);
    const anonymous = await connect(gw.url);
    try {
      expect(await toolNames(user)).toEqual([
        'list_tables',
        'read_rows',
        'aggregate_rows',
        'create_rows',
        'call_routine',
      ]);
      expect(await toolNames(viewer)).toEqual(['list_tables', 'read_rows', 'aggregate_rows']);
      expect(await toolNames(anonymous)).toEqual(['list_tables', 'read_rows', 'aggregate_rows']);
      expect((await tool(user, 'list_tables')).body.routines).toEqual([
        {
          name: 'with_tax',
          kind: 'function',
          parameters: [{ name: 'p', mode: 'in', type: 'decimal(10,2)' }],
          returns: 'decimal(10,2)',
        },
      ]);
      const listed = await tool(anonymous, 'list_tables');
      expect(listed.body).toEqual({
        tables: [
          {
            name: 'products',
            kind: 'table',
            primaryKey: ['id'],
            columns: [
              { name: 'id', type: 'int(11)', nullable: false },
              { name: 'name', type: 'varchar(40)', nullable: false },
              { name: 'price', type: 'decimal(10,2)', nullable: false },
            ],
            relations: [],
            actions: ['read'],
          },
        ],
        routines: [],
      });
    } finally {
      await Promise.all([user.close(), viewer.close(), anonymous.close()]);
    }
  });

  test('read_rows sees only the role’s rows and columns', async () => {
    const ann = await connect(gw.url, tokens.ann);
    const anonymous = await connect(gw.url);
    try {
      const mine = await tool(ann, 'read_rows', { table: 'orders', select: 'note' });
      expect(mine.body).toEqual({ rows: [{ note: 'ann’s' }], more: false });
      const hidden = await tool(anonymous, 'read_rows', { table: 'products', select: 'cost' });
      expect(hidden).toEqual({
        error: true,
        body: {
          success: false,
          message: "Column 'cost' does not exist in table 'products'",
          code: 'UNKNOWN_COLUMN',
        },
      });
      const unreadable = await tool(anonymous, 'read_rows', { table: 'orders' });
      expect(unreadable.body).toEqual({
        success: false,
        message: "Table 'orders' does not exist",
        code: 'UNKNOWN_TABLE',
      });
    } finally {
      await Promise.all([ann.close(), anonymous.close()]);
    }
  });

  test('a write the policy refuses is a tool error, and nothing is written', async () => {
    const ann = await connect(gw.url, tokens.ann);
    const vic = await connect(gw.url, tokens.vic);
    try {
      const other = await tool(ann, 'create_rows', {
        table: 'orders',
        rows: { owner: Number(ids.bob), note: 'sneaky' },
      });
      expect(other.error).toBe(true);
      expect(other.body.code).toBe('POLICY_VIOLATION');
      // A routine the role may not call is unknown, as in REST.
      expect((await tool(ann, 'call_routine', { name: 'cheaper_than' })).body).toEqual({
        success: false,
        message: "Routine 'cheaper_than' does not exist",
        code: 'UNKNOWN_ROUTINE',
      });
      // Its "did you mean" names only routines the role may call.
      expect((await tool(ann, 'call_routine', { name: 'with_taxx' })).body).toEqual({
        success: false,
        message: "Routine 'with_taxx' does not exist: did you mean 'with_tax'?",
        code: 'UNKNOWN_ROUTINE',
      });
      expect((await tool(ann, 'call_routine', { name: 'cheaper_thn' })).body).toEqual({
        success: false,
        message: "Routine 'cheaper_thn' does not exist",
        code: 'UNKNOWN_ROUTINE',
      });
      // A tool the role is not offered is not there to call.
      await expect(
        vic.callTool({ name: 'create_rows', arguments: { table: 'products', rows: { id: 9 } } }),
      ).rejects.toThrow(/Unknown tool: create_rows/);
      const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
        "SELECT COUNT(*) AS n FROM orders WHERE note = 'sneaky'",
      );
      expect(Number(rows[0]?.n)).toBe(0);
    } finally {
      await Promise.all([ann.close(), vic.close()]);
    }
  });

  test('a column the role may not write is a tool error naming it, as in REST', async () => {
    const cal = await connect(gw.url, tokens.cal);
    try {
      const refused = await tool(cal, 'update_rows', {
        table: 'orders',
        key: 'note',
        value: "'ann’s'",
        values: { note: 'renamed', owner: 1 },
      });
      expect(refused).toEqual({
        error: true,
        body: {
          success: false,
          message:
            "Forbidden: this role's policy for update on 'orders' does not let it write column 'owner'",
          code: 'FORBIDDEN',
        },
      });
      const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
        "SELECT COUNT(*) AS n FROM orders WHERE note = 'renamed' AND owner = 1",
      );
      expect(Number(rows[0]?.n)).toBe(0);
    } finally {
      await cal.close();
    }
  });

  test('a role granted nothing is refused the endpoint: 403, and /openapi.json leaves it out', async () => {
    const response = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.nat}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      success: false,
      message: 'Forbidden',
      code: 'FORBIDDEN',
    });
    const described = (await (
      await fetch(`${gw.url}/openapi.json`, { headers: { authorization: `Bearer ${tokens.nat}` } })
    ).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(described.paths)).not.toContain('/mcp');
    const user = (await (
      await fetch(`${gw.url}/openapi.json`, { headers: { authorization: `Bearer ${tokens.vic}` } })
    ).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(user.paths)).toContain('/mcp');
  });

  test('a bad token is 401, as for REST', async () => {
    const response = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer nope',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });
});

describe('auth mode where anonymous is granted nothing', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: 'mcp-test-secret-0123456789abcdefghijklmnop',
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  test('no token: 401 Access Denied', async () => {
    const response = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      success: false,
      message: 'Access Denied',
      code: 'ACCESS_DENIED',
    });
  });
});
