/**
 * `/openapi.json` as each role sees it, on a shop whose anonymous catalogue hides the products'
 * cost and supplier, whose users own their orders and tickets, and whose support role may
 * change prices and orders: every path, operation, parameter, key enum and schema property is
 * compared exactly per role, and no hidden column, unreadable table or database name appears
 * anywhere in any of the documents (nor in /docs/json and /docs/yaml).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { USERS_TABLE } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { signUpAs, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SHOP = `
CREATE TABLE products (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,2) NOT NULL,
  cost_price DECIMAL(10,2) NOT NULL, supplier_secret VARCHAR(40) NULL);
CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, customer_id BIGINT UNSIGNED NOT NULL,
  status ENUM('open', 'paid', 'cancelled') NOT NULL DEFAULT 'open', note VARCHAR(100) NULL,
  internal_note VARCHAR(100) NULL);
CREATE TABLE tickets (id INT AUTO_INCREMENT PRIMARY KEY, owner_email VARCHAR(254) NOT NULL,
  subject VARCHAR(100) NOT NULL);
CREATE TABLE audit_trail (id INT PRIMARY KEY, what TEXT);
`;

const POLICY = {
  roles: {
    anonymous: { tables: { products: { read: { columns: ['id', 'name', 'price'] } } } },
    user: {
      tables: {
        products: { read: { columns: ['id', 'name', 'price'] } },
        orders: {
          read: {
            where: 'customer_id eq @user.id',
            columns: ['id', 'customer_id', 'status', 'note'],
          },
          create: { where: 'customer_id eq @user.id', columns: ['customer_id', 'note'] },
          update: { where: "customer_id eq @user.id and status eq 'open'", columns: ['note'] },
        },
        tickets: {
          read: { where: 'owner_email eq @user.email' },
          create: { where: 'owner_email eq @user.email' },
        },
      },
      files: { upload: true, download: true },
    },
    support: {
      tables: {
        products: {
          read: { columns: ['id', 'name', 'price'] },
          update: { columns: ['price'] },
        },
        orders: {
          read: { columns: ['id', 'customer_id', 'status', 'note'] },
          update: { where: "status ne 'cancelled'", columns: ['status', 'note'] },
        },
        tickets: { read: true, delete: true },
      },
      files: { download: true },
    },
  },
};

/** What must appear in no document of any role. */
const HIDDEN = ['cost_price', 'supplier_secret', 'internal_note', 'audit_trail', USERS_TABLE];
const PASSWORD = 'correct horse battery';

let db: TestDatabase;
let gw: TestGateway;
let dir: string;
const tokens: Record<string, string> = {};

async function signUp(role: string): Promise<void> {
  const email = `${role}@shop.example`;
  tokens[role] = (await signUpAs(gw.url, db.admin, { email, password: PASSWORD }, role)).token;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-docs-views-'));
  const policyFile = path.join(dir, 'policy.json');
  await writeFile(policyFile, JSON.stringify(POLICY));
  db = await createTestDatabase(SHOP);
  gw = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: 'docs-views-secret-0123456789abcdefghij',
    policyFile,
  });
  await signUp('user');
  await signUp('support');
  // Roles the policy does not name: granted nothing.
  await signUp('visitor');
  await signUp('stranger');
});
afterAll(async () => {
  await gw?.close();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

type Json = Record<string, unknown>;

async function fetchText(url: string, role: string): Promise<string> {
  const headers: Record<string, string> = {};
  if (role !== 'anonymous') headers.authorization = `Bearer ${tokens[role]}`;
  const response = await fetch(`${gw.url}${url}`, { headers });
  expect(response.status).toBe(200);
  return response.text();
}

/** `value` with every `$ref` put in place, so that each operation reads as its own. */
function resolved(doc: Json, value: unknown, depth = 0): unknown {
  if (depth > 20) throw new Error('a $ref cycle');
  if (Array.isArray(value)) return value.map((item) => resolved(doc, item, depth + 1));
  if (typeof value !== 'object' || value === null) return value;
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') {
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (node as Json)[key], doc);
    return resolved(doc, target, depth + 1);
  }
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, resolved(doc, v, depth + 1)]),
  );
}

const propertiesOf = (schema: unknown): string[] =>
  Object.keys(((schema as Json | undefined)?.properties as Json | undefined) ?? {});

/**
 * One line per operation: method, path, parameters (a key with its enum), the body's
 * properties and the 200 answer's row properties.
 */
function summary(doc: Json): string[] {
  const lines: string[] = [];
  for (const [url, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(resolved(doc, item) as Json)) {
      const operation = op as Json;
      const parameters = ((operation.parameters as Json[] | undefined) ?? []).map((p) => {
        const values = (p.schema as Json).enum as string[] | undefined;
        return values ? `${p.name}=${values.join('|')}` : String(p.name);
      });
      const body = (operation.requestBody as Json | undefined)?.content as Json | undefined;
      let bodySchema = (body?.['application/json'] as Json | undefined)?.schema as Json | undefined;
      if (bodySchema?.oneOf) bodySchema = (bodySchema.oneOf as Json[])[0];
      const ok = ((operation.responses as Json)['200'] as Json).content as Json | undefined;
      const okSchema = (ok?.['application/json'] as Json | undefined)?.schema as Json | undefined;
      // A read's items: a row or (with `$apply`) a group; the row's properties.
      let items = okSchema?.items as Json | undefined;
      if (items?.anyOf) items = (items.anyOf as Json[])[0];
      const rows = okSchema?.type === 'array' ? propertiesOf(items) : [];
      lines.push(
        [
          `${method.toUpperCase()} ${url}`,
          parameters.length > 0 ? `(${parameters.join(', ')})` : '',
          bodySchema ? `body {${propertiesOf(bodySchema).join(', ')}}` : '',
          rows.length > 0 ? `rows {${rows.join(', ')}}` : '',
        ]
          .filter((part) => part !== '')
          .join(' '),
      );
    }
  }
  return lines;
}

const READ_OPTIONS =
  '$filter, $orderby, $top, $skip, $skiptoken, $count, $apply, Accept, If-None-Match';
// No foreign keys here: no $expand on any read.
const KEY_READ = '(key=id, value, $select, Accept, If-None-Match)';
const COMMON = ['GET /', 'GET /live', 'GET /health', 'GET /openapi.json'];
// Without a token the index is 401 whatever the policy grants: not described either.
const PUBLIC = COMMON.filter((line) => line !== 'GET /');
const AUTH = [
  'POST /auth/register body {email, password}',
  'POST /auth/login body {email, password}',
];
/** With a token, also who it says the caller is, and the password change. */
const SIGNED_IN = [
  ...AUTH,
  'GET /auth/me',
  'POST /auth/password body {old_password, new_password}',
];

/** The MCP endpoint, for every role granted anything (its tools are listed over MCP itself). */
const MCP = 'POST /mcp body {}';
/** The OData service (docs/odata.md), offered where MCP is; its sets are in its `$metadata`. */
const ODATA = [
  'GET /odata',
  'GET /odata/$metadata',
  'GET /odata/{resource} (resource, If-None-Match)',
  'POST /odata/{resource} (resource)',
  'PATCH /odata/{resource} (resource, If-Match)',
  'PUT /odata/{resource} (resource, If-Match)',
  'DELETE /odata/{resource} (resource, If-Match)',
  'POST /odata/$batch',
];

const EXPECTED: Record<string, string[]> = {
  anonymous: [
    ...AUTH,
    `GET /table/products/read ($select, ${READ_OPTIONS}) rows {id, name, price}`,
    `GET /table/products/read({key},{value}) ${KEY_READ}`,
    'GET /table/products/changes ($select, $filter, $since)',
    MCP,
    ...ODATA,
    ...PUBLIC,
  ],
  user: [
    ...SIGNED_IN,
    `GET /table/orders/read ($select, ${READ_OPTIONS}) rows {id, customer_id, status, note}`,
    `GET /table/orders/read({key},{value}) ${KEY_READ}`,
    'GET /table/orders/changes ($select, $filter, $since)',
    'POST /table/orders/create (Prefer) body {customer_id, note}',
    'PUT /table/orders/update({key},{value}) (key=id|customer_id|status|note, value, Prefer, If-Match) body {note}',
    'PUT /table/orders/update ($filter, Prefer, If-Match) body {note}',
    `GET /table/products/read ($select, ${READ_OPTIONS}) rows {id, name, price}`,
    `GET /table/products/read({key},{value}) ${KEY_READ}`,
    'GET /table/products/changes ($select, $filter, $since)',
    `GET /table/tickets/read ($select, ${READ_OPTIONS}) rows {id, owner_email, subject}`,
    `GET /table/tickets/read({key},{value}) ${KEY_READ}`,
    'GET /table/tickets/changes ($select, $filter, $since)',
    'POST /table/tickets/create (Prefer) body {id, owner_email, subject}',
    'POST /upload',
    'GET /@/{filename} (filename, Range)',
    MCP,
    ...ODATA,
    ...COMMON,
  ],
  support: [
    ...SIGNED_IN,
    `GET /table/orders/read ($select, ${READ_OPTIONS}) rows {id, customer_id, status, note}`,
    `GET /table/orders/read({key},{value}) ${KEY_READ}`,
    'GET /table/orders/changes ($select, $filter, $since)',
    'PUT /table/orders/update({key},{value}) (key=id|customer_id|status|note, value, Prefer, If-Match) body {status, note}',
    'PUT /table/orders/update ($filter, Prefer, If-Match) body {status, note}',
    `GET /table/products/read ($select, ${READ_OPTIONS}) rows {id, name, price}`,
    `GET /table/products/read({key},{value}) ${KEY_READ}`,
    'GET /table/products/changes ($select, $filter, $since)',
    'PUT /table/products/update({key},{value}) (key=id|name|price, value, Prefer, If-Match) body {price}',
    'PUT /table/products/update ($filter, Prefer, If-Match) body {price}',
    `GET /table/tickets/read ($select, ${READ_OPTIONS}) rows {id, owner_email, subject}`,
    `GET /table/tickets/read({key},{value}) ${KEY_READ}`,
    'GET /table/tickets/changes ($select, $filter, $since)',
    'DELETE /table/tickets/delete({key},{value}) (key=id|owner_email|subject, value, Prefer, If-Match)',
    'DELETE /table/tickets/delete ($filter, Prefer, If-Match)',
    'GET /@/{filename} (filename, Range)',
    MCP,
    ...ODATA,
    ...COMMON,
  ],
  visitor: [...SIGNED_IN, ...COMMON],
};

describe.each(Object.keys(EXPECTED))('%s', (role) => {
  test('exactly the operations, parameters, keys and columns of its grants', async () => {
    const doc = JSON.parse(await fetchText('/openapi.json', role)) as Json;
    expect(summary(doc)).toEqual(EXPECTED[role]);
    expect((doc.info as Json).title).toBe('tablegate');
  });

  test('no hidden column, unreadable table or database name anywhere, in any format', async () => {
    for (const url of ['/openapi.json', '/docs/json', '/docs/yaml']) {
      const text = await fetchText(url, role);
      if (url.endsWith('yaml'))
        expect(parse(text)).toEqual(JSON.parse(await fetchText('/openapi.json', role)));
      for (const word of [...HIDDEN, db.name])
        expect([url, word, text.includes(word)]).toEqual([url, word, false]);
    }
  });
});

test.each(['anonymous', 'user', 'support'])(
  '%s: $select names the readable columns only',
  async (role) => {
    const doc = JSON.parse(await fetchText('/openapi.json', role)) as Json;
    const read = resolved(doc, (doc.paths as Json)['/table/products/read']) as Json;
    const select = ((read.get as Json).parameters as Json[])[0];
    expect(select?.description).toBe(
      'Columns to return, comma-separated (default `*`): id, name, price',
    );
  },
);

test('roles with the same grants but other users share one description', async () => {
  const other = 'user2@shop.example';
  const body = JSON.stringify({ email: other, password: PASSWORD });
  const headers = { 'content-type': 'application/json' };
  await fetch(`${gw.url}/auth/register`, { method: 'POST', headers, body });
  const login = await fetch(`${gw.url}/auth/login`, { method: 'POST', headers, body });
  const token = ((await login.json()) as { token: string }).token;
  const mine = await fetch(`${gw.url}/openapi.json`, {
    headers: { authorization: `Bearer ${tokens.user}` },
  });
  const theirs = await fetch(`${gw.url}/openapi.json`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(theirs.headers.get('etag')).toBe(mine.headers.get('etag'));
  expect(await theirs.text()).toBe(await mine.text());
});

test('roles the policy does not name share the one description of nothing granted', async () => {
  const etags = new Set<string | null>();
  for (const role of ['visitor', 'stranger']) {
    const response = await fetch(`${gw.url}/openapi.json`, {
      headers: { authorization: `Bearer ${tokens[role]}` },
    });
    etags.add(response.headers.get('etag'));
  }
  expect(etags.size).toBe(1);
});
