/**
 * Policies end to end on the worked example of docs/policies.md (a shop): `anonymous` reads
 * products, `user` reads and creates only its own orders and edits only the note of its open
 * ones, `admin` does everything. Hostile requests, each checked against what the DATABASE holds
 * afterwards; registration, roles in tokens, the user CLI, the read-only gateway, start-up
 * checks of the policy, the users-table migration and a least-privilege MySQL user.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { hashPassword } from '../../src/auth/users.js';
import { USERS_TABLE } from '../../src/db/schema.js';
import { StartupError } from '../../src/main.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testServer } from '../helpers/mysql-url.js';

const SHOP = `
CREATE TABLE products (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,2) NOT NULL,
  cost DECIMAL(10,2) NOT NULL);
INSERT INTO products VALUES (1, 'apple', 1.50, 0.40), (2, 'pear', 2.00, 0.90);
CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, customer_id BIGINT UNSIGNED NOT NULL,
  status VARCHAR(10) NOT NULL DEFAULT 'open', note VARCHAR(100) NULL);
CREATE TABLE secrets (id INT PRIMARY KEY, v TEXT);
INSERT INTO secrets VALUES (1, 'the formula');
`;

const SHOP_POLICY = {
  roles: {
    anonymous: {
      tables: { products: { read: { columns: ['id', 'name', 'price'] } } },
    },
    user: {
      tables: {
        products: { read: true },
        orders: {
          read: { where: 'customer_id eq @user.id' },
          create: { where: 'customer_id eq @user.id', columns: ['customer_id', 'note'] },
          update: { where: "customer_id eq @user.id and status eq 'open'", columns: ['note'] },
          delete: false,
        },
      },
      files: { upload: true, download: true },
    },
    clerk: {
      tables: {
        orders: {
          read: { where: 'customer_id eq @user.id' },
          update: { where: 'customer_id eq @user.id' },
          delete: { where: 'customer_id eq @user.id' },
        },
      },
    },
    editor: {
      tables: {
        orders: {
          read: { where: 'customer_id eq @user.id' },
          update: { where: "customer_id eq @user.id and (note ne 'locked' or note eq null)" },
          create: { where: "customer_id eq @user.id and (note ne 'locked' or note eq null)" },
        },
      },
    },
    admin: {
      tables: { '*': { read: true, create: true, update: true, delete: true } },
      files: { upload: true, download: true },
    },
  },
};

const SECRET = 'policy-test-secret-0123456789abcdefghijklmnop';
const PASSWORD = 'correct horse battery';
const ACCESS_DENIED = { success: false, message: 'Access Denied', code: 'ACCESS_DENIED' };
const FORBIDDEN = { success: false, message: 'Forbidden', code: 'FORBIDDEN' };
/** A create or update naming columns the role reads but may not write: they are named. */
const forbiddenColumns = (why: string) => ({
  success: false,
  message: `Forbidden: ${why}`,
  code: 'FORBIDDEN',
});
const noTable = (t: string) => ({
  success: false,
  message: `Table '${t}' does not exist`,
  code: 'UNKNOWN_TABLE',
});
const noColumn = (c: string, t: string) => ({
  success: false,
  message: `Column '${c}' does not exist in table '${t}'`,
  code: 'UNKNOWN_COLUMN',
});

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

async function call(
  base: string,
  method: string,
  url: string,
  options: { json?: unknown; token?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(`${base}${url}`, { method, headers, body });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : null,
  };
}

let db: TestDatabase;
let gw: TestGateway;
let dir: string;
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};

async function policyFile(policy: unknown, name = 'policy.json'): Promise<string> {
  const file = path.join(dir, `${randomBytes(4).toString('hex')}-${name}`);
  await writeFile(file, typeof policy === 'string' ? policy : JSON.stringify(policy));
  return file;
}

async function login(base: string, email: string): Promise<Answer> {
  return call(base, 'POST', '/auth/login', { json: { email, password: PASSWORD } });
}

async function signUp(base: string, name: string, role: string): Promise<void> {
  const email = `${name}@shop.example`;
  expect(
    (await call(base, 'POST', '/auth/register', { json: { email, password: PASSWORD } })).status,
  ).toBe(200);
  await db.admin.query(`UPDATE ${USERS_TABLE} SET role = ? WHERE email = ?`, [role, email]);
  const answer = await login(base, email);
  tokens[name] = (answer.body as { token: string }).token;
  const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
    `SELECT id FROM ${USERS_TABLE} WHERE email = ?`,
    [email],
  );
  ids[name] = String(rows[0]?.id);
}

async function orders(): Promise<mysql.RowDataPacket[]> {
  const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
    'SELECT id, customer_id, status, note FROM orders ORDER BY id',
  );
  return rows;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-policy-'));
  db = await createTestDatabase(SHOP);
  gw = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: SECRET,
    policyFile: await policyFile(SHOP_POLICY),
  });
  await signUp(gw.url, 'ann', 'user');
  await signUp(gw.url, 'bob', 'user');
  await signUp(gw.url, 'cat', 'clerk');
  await signUp(gw.url, 'root', 'admin');
  await signUp(gw.url, 'dan', 'editor');
  await db.admin.query(
    `INSERT INTO orders (customer_id, status, note) VALUES
      (?, 'open', 'ann 1'), (?, 'closed', 'ann 2'), (?, 'open', 'bob 1'), (?, 'open', 'bob 2'),
      (?, 'open', 'cat 1'), (?, 'open', NULL)`,
    [ids.ann, ids.ann, ids.bob, ids.bob, ids.cat, ids.bob],
  );
});

afterAll(async () => {
  await gw?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('anonymous: the public catalogue', () => {
  test('reads products without a token, only the granted columns', async () => {
    const answer = await call(gw.url, 'GET', '/table/products/read?$orderby=id');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([
      { id: 1, name: 'apple', price: 1.5 },
      { id: 2, name: 'pear', price: 2 },
    ]);
  });

  test.each([
    ['$select=id,cost'],
    ['$filter=cost gt 0'],
    ['$filter=id eq 1 or cost gt 0'],
    ['$orderby=cost'],
  ])('a hidden column named in %s is 400 as if unknown', async (query) => {
    const answer = await call(gw.url, 'GET', `/table/products/read?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(noColumn('cost', 'products'));
  });

  test.each([
    ['GET', '/table/orders/read'],
    ['GET', '/table/secrets/read'],
    ['POST', '/table/products/create'],
    ['POST', '/upload'],
    ['GET', '/@/x.png'],
    ['GET', '/no/such/route'],
  ])('%s %s without a token is 401', async (method, url) => {
    const answer = await call(gw.url, method, url);
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(ACCESS_DENIED);
  });

  test('a token that is given must be valid, even for what anonymous may read', async () => {
    const answer = await call(gw.url, 'GET', '/table/products/read', { token: 'garbage' });
    expect(answer.status).toBe(401);
  });
});

describe('user: own orders only', () => {
  const hostile = [
    '',
    '$filter=customer_id eq BOB',
    '$filter=customer_id eq BOB or 1 eq 1',
    '$filter=not (customer_id eq ANN)',
    '$filter=(customer_id ne ANN) or (id gt 0)',
    '$filter=customer_id in (ANN, BOB) or id ge 0',
    '$filter=note eq null or note ne null',
    "$filter=contains(note, 'o') or 1 eq 1",
    "$filter=startswith(note, 'bob') or not (id eq 0)",
    '$filter=(1 eq 1) or (customer_id eq BOB)',
  ];
  test.each(hostile)('GET orders?%s never shows another customer', async (query) => {
    const q = query.replaceAll('ANN', ids.ann as string).replaceAll('BOB', ids.bob as string);
    const answer = await call(gw.url, 'GET', `/table/orders/read?$count=true&${encodeURI(q)}`, {
      token: tokens.ann,
    });
    expect(answer.status).toBe(200);
    const rows = answer.body as { customer_id: number }[];
    for (const row of rows) expect(String(row.customer_id)).toBe(ids.ann);
    expect(Number(answer.headers.get('x-total-count'))).toBe(rows.length);
    expect(rows.length).toBeLessThanOrEqual(2);
  });

  test('$top, $skip and $count stay exact', async () => {
    const answer = await call(
      gw.url,
      'GET',
      '/table/orders/read?$orderby=id&$top=1&$skip=1&$count=true&$select=note',
      { token: tokens.ann },
    );
    expect(answer.body).toEqual([{ note: 'ann 2' }]);
    expect(answer.headers.get('x-total-count')).toBe('2');
  });

  test('a table the role cannot read is 404 as if absent; the users table always', async () => {
    for (const table of ['secrets', USERS_TABLE, 'nope']) {
      const answer = await call(gw.url, 'GET', `/table/${table}/read?$filter=((`, {
        token: tokens.ann,
      });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(noTable(table));
    }
    const admin = await call(gw.url, 'GET', `/table/${USERS_TABLE}/read`, { token: tokens.root });
    expect(admin.body).toEqual(noTable(USERS_TABLE));
  });

  test('delete is 403 FORBIDDEN and deletes nothing', async () => {
    const before = await orders();
    const answer = await call(gw.url, 'DELETE', '/table/orders/delete(id,1)', {
      token: tokens.ann,
    });
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual(FORBIDDEN);
    expect(await orders()).toEqual(before);
  });

  test("update by a key outside the where changes nothing (bob's order, ann's closed one)", async () => {
    const before = await orders();
    for (const key of ['id,3', 'id,2', `customer_id,${ids.bob}`, 'status,closed']) {
      const answer = await call(gw.url, 'PUT', `/table/orders/update(${key})`, {
        token: tokens.ann,
        json: { note: 'hacked' },
      });
      expect(answer.status).toBe(200);
      expect((answer.body as { affectedRows: number }).affectedRows).toBe(0);
    }
    expect(await orders()).toEqual(before);
  });

  test('update of the note of an own open order works; other columns are 403', async () => {
    const ok = await call(gw.url, 'PUT', '/table/orders/update(id,1)', {
      token: tokens.ann,
      json: { note: 'ann 1, edited' },
    });
    expect(ok.body).toEqual({
      success: true,
      message: 'Data updated successfully',
      affectedRows: 1,
    });
    const before = await orders();
    expect(before[0]?.note).toBe('ann 1, edited');
    for (const [json, refused] of [
      [{ customer_id: ids.bob }, "column 'customer_id'"],
      [{ status: 'closed' }, "column 'status'"],
      [{ note: 'x', status: 'x' }, "column 'status'"],
      [{ status: 'x', customer_id: ids.bob }, "columns 'status', 'customer_id'"],
    ] as const) {
      const answer = await call(gw.url, 'PUT', '/table/orders/update(id,1)', {
        token: tokens.ann,
        json,
      });
      expect(answer.status).toBe(403);
      expect(answer.body).toEqual(
        forbiddenColumns(
          `this role's policy for update on 'orders' does not let it write ${refused}`,
        ),
      );
    }
    expect(await orders()).toEqual(before);
  });

  test("create with another customer's id inserts nothing; in a batch none of the rows", async () => {
    const before = await orders();
    const bad = await call(gw.url, 'POST', '/table/orders/create', {
      token: tokens.ann,
      json: { customer_id: ids.bob, note: 'on bob' },
    });
    expect(bad.status).toBe(403);
    expect((bad.body as { code: string }).code).toBe('POLICY_VIOLATION');
    const batch = await call(gw.url, 'POST', '/table/orders/create', {
      token: tokens.ann,
      json: [
        { customer_id: ids.ann, note: 'mine' },
        { customer_id: Number(ids.bob), note: 'not mine' },
        { customer_id: ids.ann, note: 'mine too' },
      ],
    });
    expect(batch.status).toBe(403);
    expect(batch.body).toEqual({
      success: false,
      message:
        "The new row would not satisfy this role's policy for create on 'orders': row 2, column 'customer_id'",
      code: 'POLICY_VIOLATION',
    });
    const missing = await call(gw.url, 'POST', '/table/orders/create', {
      token: tokens.ann,
      json: { note: 'no customer' },
    });
    expect(missing.status).toBe(403);
    const column = await call(gw.url, 'POST', '/table/orders/create', {
      token: tokens.ann,
      json: { customer_id: ids.ann, status: 'closed' },
    });
    expect([column.status, column.body]).toEqual([
      403,
      forbiddenColumns(
        "this role's policy for create on 'orders' does not let it write column 'status'",
      ),
    ]);
    expect(await orders()).toEqual(before);
  });

  test('create of own orders works (number or string id)', async () => {
    const answer = await call(gw.url, 'POST', '/table/orders/create', {
      token: tokens.ann,
      json: [
        { customer_id: Number(ids.ann), note: 'new 1' },
        { customer_id: ids.ann, note: 'new 2' },
      ],
    });
    expect(answer.status).toBe(200);
    const rows = (await orders()).filter((r) => String(r.note).startsWith('new'));
    expect(rows.map((r) => [String(r.customer_id), r.status])).toEqual([
      [ids.ann, 'open'],
      [ids.ann, 'open'],
    ]);
    await db.admin.query("DELETE FROM orders WHERE note LIKE 'new %'");
  });
});

describe('clerk: update and delete under a where, every column', () => {
  test('an update moving a row out of the where changes nothing', async () => {
    const before = await orders();
    const answer = await call(gw.url, 'PUT', '/table/orders/update(id,5)', {
      token: tokens.cat,
      json: { customer_id: ids.bob },
    });
    expect(answer.status).toBe(403);
    expect((answer.body as { code: string }).code).toBe('POLICY_VIOLATION');
    expect(await orders()).toEqual(before);
    const same = await call(gw.url, 'PUT', '/table/orders/update(id,5)', {
      token: tokens.cat,
      json: { customer_id: ids.cat, status: 'done' },
    });
    expect((same.body as { affectedRows: number }).affectedRows).toBe(1);
    expect((await orders()).find((r) => r.id === 5)?.status).toBe('done');
  });

  test('delete by a key outside the where deletes nothing', async () => {
    const before = await orders();
    const answer = await call(gw.url, 'DELETE', `/table/orders/delete(customer_id,${ids.bob})`, {
      token: tokens.cat,
    });
    expect((answer.body as { affectedRows: number }).affectedRows).toBe(0);
    expect(await orders()).toEqual(before);
  });

  test('files are 403 for a role without them', async () => {
    const answer = await call(gw.url, 'GET', '/@/x.png', { token: tokens.cat });
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual(FORBIDDEN);
  });
});

describe('editor: a where that is not only col eq value, checked after the update', () => {
  test('an update that takes its row out of the where is rolled back; one that keeps it in is not', async () => {
    await db.admin.query(
      "INSERT INTO orders (id, customer_id, status, note) VALUES (100, ?, 'open', 'draft')",
      [ids.dan],
    );
    try {
      const before = await orders();
      const locked = await call(gw.url, 'PUT', '/table/orders/update(id,100)', {
        token: tokens.dan,
        json: { note: 'locked', status: 'paid' },
      });
      expect(locked.status).toBe(403);
      expect(locked.body).toEqual({
        success: false,
        message:
          "The updated row would not satisfy this role's policy for update on 'orders'; nothing was changed",
        code: 'POLICY_VIOLATION',
      });
      expect(await orders()).toEqual(before);
      const ok = await call(gw.url, 'PUT', '/table/orders/update(id,100)', {
        token: tokens.dan,
        json: { note: 'final', status: 'paid' },
      });
      expect((ok.body as { affectedRows: number }).affectedRows).toBe(1);
      const row = (await orders()).find((r) => r.id === 100);
      expect([row?.note, row?.status]).toEqual(['final', 'paid']);
      // Someone else's order: the key matches nothing, nothing is checked or changed.
      const other = await call(gw.url, 'PUT', '/table/orders/update(id,1)', {
        token: tokens.dan,
        json: { note: 'mine now' },
      });
      expect((other.body as { affectedRows: number }).affectedRows).toBe(0);
      expect((await orders()).find((r) => r.id === 1)?.note).not.toBe('mine now');
    } finally {
      await db.admin.query('DELETE FROM orders WHERE id = 100');
    }
  });
});

describe('editor: a create where beyond col eq value, checked after the INSERT', () => {
  test('a batch with one row outside the where inserts none; a good batch inserts all', async () => {
    const before = await orders();
    const bad = await call(gw.url, 'POST', '/table/orders/create', {
      token: tokens.dan,
      json: [
        { customer_id: ids.dan, note: 'fine' },
        { customer_id: ids.dan, note: 'locked' },
        { customer_id: ids.dan },
      ],
    });
    expect(bad.status).toBe(403);
    expect(bad.body).toEqual({
      success: false,
      message:
        "A new row would not satisfy this role's policy for create on 'orders'; nothing was inserted",
      code: 'POLICY_VIOLATION',
    });
    expect(await orders()).toEqual(before);
    const good = await call(gw.url, 'POST', '/table/orders/create', {
      token: tokens.dan,
      json: [{ customer_id: ids.dan, note: 'fine' }, { customer_id: ids.dan }],
    });
    expect((good.body as { affectedRows: number }).affectedRows).toBe(2);
    const added = (await orders()).filter((r) => String(r.customer_id) === ids.dan);
    expect(added.map((r) => r.note)).toEqual(['fine', null]);
    await db.admin.query('DELETE FROM orders WHERE customer_id = ?', [ids.dan]);
  });
});

describe('admin and the description', () => {
  test('admin reads every order and secrets', async () => {
    const answer = await call(gw.url, 'GET', '/table/orders/read', { token: tokens.root });
    expect((answer.body as unknown[]).length).toBe((await orders()).length);
    expect((await call(gw.url, 'GET', '/table/secrets/read', { token: tokens.root })).status).toBe(
      200,
    );
  });

  test('/openapi.json shows each caller only what its role may use', async () => {
    const pathsOf = async (token?: string) =>
      Object.keys(
        ((await call(gw.url, 'GET', '/openapi.json', { token })).body as { paths: object }).paths,
      ).filter((p) => p.startsWith('/table') || p === '/upload');
    // The change feed of a table is listed with its reads (docs/changes.md).
    expect(await pathsOf()).toEqual([
      '/table/products/read',
      '/table/products/read({key},{value})',
      '/table/products/changes',
    ]);
    expect(await pathsOf(tokens.ann)).toEqual([
      '/table/orders/read',
      '/table/orders/read({key},{value})',
      '/table/orders/changes',
      '/table/orders/create',
      '/table/orders/update({key},{value})',
      '/table/orders/update',
      '/table/products/read',
      '/table/products/read({key},{value})',
      '/table/products/changes',
      '/upload',
    ]);
    expect((await pathsOf(tokens.root)).length).toBe(25); // 22, and each of 3 tables' change feed
    const anonymous = (await call(gw.url, 'GET', '/openapi.json')).body as {
      components: { schemas: Record<string, { properties: object }> };
    };
    expect(Object.keys(anonymous.components.schemas.products?.properties ?? {})).toEqual([
      'id',
      'name',
      'price',
    ]);
  });
});

describe('registration and roles', () => {
  test('a register body cannot choose its role', async () => {
    const email = 'climber@shop.example';
    await call(gw.url, 'POST', '/auth/register', {
      json: { email, password: PASSWORD, role: 'admin' },
    });
    const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
      `SELECT role FROM ${USERS_TABLE} WHERE email = ?`,
      [email],
    );
    expect(rows[0]?.role).toBe('user');
    const token = ((await login(gw.url, email)).body as { token: string }).token;
    const claims = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString());
    expect(claims.role).toBe('user');
    expect((await call(gw.url, 'GET', '/table/secrets/read', { token })).status).toBe(404);
  });

  test('a token whose role claim was edited is 401', async () => {
    const [header, payload, signature] = (tokens.ann as string).split('.');
    const claims = JSON.parse(Buffer.from(payload as string, 'base64url').toString());
    const edited = Buffer.from(JSON.stringify({ ...claims, role: 'admin' })).toString('base64url');
    const answer = await call(gw.url, 'GET', '/table/secrets/read', {
      token: `${header}.${edited}.${signature}`,
    });
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(ACCESS_DENIED);
  });

  test('closed registration: 403 REGISTRATION_CLOSED and nothing created; --default-role', async () => {
    const closed = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: SECRET,
      registration: 'closed',
    });
    const other = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: SECRET,
      defaultRole: 'guest',
    });
    try {
      const answer = await call(closed.url, 'POST', '/auth/register', {
        json: { email: 'late@shop.example', password: PASSWORD },
      });
      expect(answer.status).toBe(403);
      expect(answer.body).toEqual({
        success: false,
        message: 'Registration is closed',
        code: 'REGISTRATION_CLOSED',
      });
      await call(other.url, 'POST', '/auth/register', {
        json: { email: 'guest@shop.example', password: PASSWORD },
      });
      const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
        `SELECT email, role FROM ${USERS_TABLE} WHERE email IN ('late@shop.example', 'guest@shop.example')`,
      );
      expect(rows).toEqual([{ email: 'guest@shop.example', role: 'guest' }]);
      expect((await login(closed.url, 'ann@shop.example')).status).toBe(200);
    } finally {
      await closed.close();
      await other.close();
    }
  });
});

describe('tablegate user', () => {
  const CLI = path.resolve('dist/cli.js');
  const server = testServer();
  function cli(args: string[], env: Record<string, string> = {}, input = '') {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          CLI,
          'user',
          ...args,
          '-h',
          server.host,
          '-u',
          server.user,
          '-P',
          String(server.port),
          '-D',
          db.name,
        ],
        { env: { PATH: process.env.PATH, TABLEGATE_DB_PASSWORD: server.password, ...env } },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(input);
    });
  }

  /**
   * Milliseconds until `token` is refused (401 Access Denied) for a table it could read: it must
   * be within 10 s of the change (docs/auth.md). Polled every 100 ms for at most 12 s.
   */
  async function msUntilRefused(token: string): Promise<number> {
    const start = performance.now();
    while (performance.now() - start < 12_000) {
      const answer = await call(gw.url, 'GET', '/table/products/read?$top=1', { token });
      if (answer.status === 401) {
        expect(answer.body).toEqual(ACCESS_DENIED);
        expect(answer.headers.get('www-authenticate')).toBe('Bearer');
        return performance.now() - start;
      }
      expect(answer.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return Number.POSITIVE_INFINITY;
  }

  test('add (password from stdin or the environment), set-role, remove: tokens stop working within 10 s', async () => {
    const added = await cli(['add', 'Dee@Shop.example', '--role', 'admin'], {}, `${PASSWORD}\n`);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/^added dee@shop\.example \(id \d+, role admin\)\n$/);
    const first = (await login(gw.url, 'dee@shop.example')).body as { token: string };
    expect((await call(gw.url, 'GET', '/table/secrets/read', { token: first.token })).status).toBe(
      200,
    );

    const setRole = await cli(['set-role', 'dee@shop.example', 'user']);
    expect([setRole.code, setRole.stdout]).toEqual([
      0,
      'dee@shop.example now has the role user; tokens they hold stop working within 10 s (they log in again)\n',
    ]);
    // The token signed for the old role stops working; the next login has the new one.
    expect(await msUntilRefused(first.token)).toBeLessThan(10_000);
    const second = (await login(gw.url, 'dee@shop.example')).body as { token: string };
    expect((await call(gw.url, 'GET', '/table/secrets/read', { token: second.token })).status).toBe(
      404,
    );

    const list = await cli(['list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/\tdee@shop\.example\tuser\t/);
    expect(list.stdout).not.toMatch(/argon2/);

    expect((await cli(['remove', 'dee@shop.example'])).code).toBe(0);
    expect((await login(gw.url, 'dee@shop.example')).status).toBe(401);
    // A removed user's token: refused within 10 s (measured: 3 s at most, the refresh interval).
    const removedAfter = await msUntilRefused(second.token);
    expect(removedAfter).toBeLessThan(10_000);

    const env = await cli(['add', 'eve@shop.example'], { TABLEGATE_USER_PASSWORD: PASSWORD });
    expect(env.code).toBe(0);
    expect((await login(gw.url, 'eve@shop.example')).status).toBe(200);
    // Each CLI run starts Node and connects to MySQL: seconds on a loaded machine.
  }, 90_000);

  test('set-password: the new password logs in, the old does not, and old tokens stop within 10 s', async () => {
    const added = await cli(['add', 'fay@shop.example'], { TABLEGATE_USER_PASSWORD: PASSWORD });
    expect(added.code).toBe(0);
    const old = (await login(gw.url, 'fay@shop.example')).body as { token: string };
    const changed = await cli(['set-password', 'FAY@shop.example'], {}, 'a new long passphrase\n');
    expect([changed.code, changed.stdout, changed.stderr]).toEqual([
      0,
      'fay@shop.example has a new password; tokens they hold stop working within 10 s\n',
      '',
    ]);
    expect((await login(gw.url, 'fay@shop.example')).status).toBe(401);
    const fresh = await call(gw.url, 'POST', '/auth/login', {
      json: { email: 'fay@shop.example', password: 'a new long passphrase' },
    });
    expect(fresh.status).toBe(200);
    expect(await msUntilRefused(old.token)).toBeLessThan(10_000);
    const token = (fresh.body as { token: string }).token;
    expect((await call(gw.url, 'GET', '/table/products/read', { token })).status).toBe(200);

    const nobody = await cli(['set-password', 'nobody@shop.example'], {}, `${PASSWORD}\n`);
    expect([nobody.code, nobody.stderr]).toEqual([
      1,
      'tablegate: no user has the email nobody@shop.example\n',
    ]);
    const short = await cli(['set-password', 'fay@shop.example'], {}, 'short\n');
    expect(short.code).toBe(2);
    // Nothing changed: the password set above still logs in.
    expect(
      (
        await call(gw.url, 'POST', '/auth/login', {
          json: { email: 'fay@shop.example', password: 'a new long passphrase' },
        })
      ).status,
    ).toBe(200);
    // Each CLI run starts Node and connects to MySQL: seconds on a loaded machine.
  }, 90_000);

  test('with --policy (or TABLEGATE_POLICY), a role the policy does not define is refused: exit 2, nothing changed', async () => {
    const file = await policyFile(SHOP_POLICY);
    const typo = await cli(['set-role', 'ann@shop.example', 'admn', '--policy', file]);
    expect(typo.code).toBe(2);
    expect(typo.stderr.split('\n')[0]).toBe(
      `tablegate: role 'admn' is not defined by the policy ${file} (it defines 'anonymous', 'user', 'clerk', 'editor', 'admin'): did you mean 'admin'?`,
    );
    const added = await cli(['add', 'gus@shop.example', '--role', 'boss'], {
      TABLEGATE_USER_PASSWORD: PASSWORD,
      TABLEGATE_POLICY: file,
    });
    expect([added.code, added.stderr.split('\n')[0]]).toEqual([
      2,
      `tablegate: role 'boss' is not defined by the policy ${file} (it defines 'anonymous', 'user', 'clerk', 'editor', 'admin')`,
    ]);
    const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
      `SELECT email, role FROM ${USERS_TABLE} WHERE email IN ('ann@shop.example', 'gus@shop.example')`,
    );
    expect(rows.map((row) => [row.email, row.role])).toEqual([['ann@shop.example', 'user']]);
    // A role it defines is fine, and so is the default role `user`.
    const ok = await cli(['add', 'gus@shop.example'], {
      TABLEGATE_USER_PASSWORD: PASSWORD,
      TABLEGATE_POLICY: file,
    });
    expect(ok.code).toBe(0);
    const unreadable = await cli([
      'set-role',
      'gus@shop.example',
      'admin',
      '--policy',
      `${file}.missing`,
    ]);
    expect([unreadable.code, unreadable.stderr.split('\n')[0]]).toEqual([
      2,
      `tablegate: --policy ${file}.missing: cannot read it: ENOENT`,
    ]);
    // Each CLI run starts Node and connects to MySQL: seconds on a loaded machine.
  }, 90_000);

  test.each<[string[], string, number, RegExp]>([
    [
      ['set-role', 'nobody@shop.example', 'admin'],
      '',
      1,
      /no user has the email nobody@shop\.example/,
    ],
    [['remove', 'nobody@shop.example'], '', 1, /no user has the email/],
    [['add', 'ann@shop.example'], PASSWORD, 1, /already exists/],
    [['add', 'short@shop.example'], 'short', 2, /password/],
    [['add', 'empty@shop.example'], '', 2, /password/],
    [['add', 'not-an-email'], PASSWORD, 2, /email/],
    [['frobnicate'], '', 2, /unknown subcommand 'user frobnicate'/],
    // -p/--password is the MySQL password, as for run: a wrong one is a MySQL problem.
    [['add', 'x@shop.example', '--password', 'abc'], PASSWORD, 1, /MySQL at .*Access denied/],
  ])('user %j → exit %#', async (args, input, code, message) => {
    const outcome = await cli(args, {}, input);
    expect(outcome.code).toBe(code);
    expect(outcome.stderr).toMatch(message);
    // One line; a usage error adds the usage line.
    expect(outcome.stderr.trim().split('\n')).toHaveLength(code === 2 ? 2 : 1);
    const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
      `SELECT COUNT(*) AS n FROM ${USERS_TABLE} WHERE email IN ('short@shop.example', 'empty@shop.example', 'x@shop.example')`,
    );
    expect(Number(rows[0]?.n)).toBe(0);
  });
});

describe('open mode with a policy', () => {
  test('one line makes a read-only gateway', async () => {
    const file = await policyFile({ roles: { anonymous: { tables: { '*': { read: true } } } } });
    const open = await startTestGateway(db.name, { policyFile: file });
    try {
      expect((await call(open.url, 'GET', '/table/secrets/read')).status).toBe(200);
      const before = await orders();
      for (const [method, url] of [
        ['POST', '/table/orders/create'],
        ['PUT', '/table/orders/update(id,1)'],
        ['DELETE', '/table/orders/delete(id,1)'],
        ['POST', '/upload'],
        ['GET', '/@/x.png'],
      ] as const) {
        const answer = await call(open.url, method, url, {
          json: method === 'GET' ? undefined : { note: 'x' },
        });
        expect(answer.status).toBe(403);
        expect(answer.body).toEqual(FORBIDDEN);
      }
      expect(await orders()).toEqual(before);
    } finally {
      await open.close();
    }
  });

  test('YAML works too', async () => {
    const file = await policyFile(
      'roles:\n  anonymous:\n    tables:\n      products: { read: { where: "price lt 2" } }\n',
      'p.yaml',
    );
    const open = await startTestGateway(db.name, { policyFile: file });
    try {
      const answer = await call(open.url, 'GET', '/table/products/read?$select=name');
      expect(answer.body).toEqual([{ name: 'apple' }]);
      expect((await call(open.url, 'GET', '/table/orders/read')).body).toEqual(noTable('orders'));
    } finally {
      await open.close();
    }
  });
});

describe('the policy is checked against the live schema at start', () => {
  test('tablegate run: one line naming the problem, exit 2', async () => {
    const file = await policyFile({ roles: { user: { tables: { nope: { read: true } } } } });
    const server = testServer();
    const outcome = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve) => {
        const child = spawn(
          process.execPath,
          [
            path.resolve('dist/cli.js'),
            'run',
            'auth',
            '-h',
            server.host,
            '-u',
            server.user,
            '-P',
            String(server.port),
            '-D',
            db.name,
            '-o',
            '0',
            '--policy',
            file,
          ],
          {
            env: {
              PATH: process.env.PATH,
              HOME: dir,
              TABLEGATE_DB_PASSWORD: server.password,
              TABLEGATE_JWT_SECRET: SECRET,
            },
          },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.on('exit', (code) => resolve({ code, stdout, stderr }));
      },
    );
    expect(outcome).toEqual({
      code: 2,
      stdout: '',
      stderr: `tablegate: policy ${file}: roles.user.tables.nope: table 'nope' does not exist\n`,
    });
  });

  test.each<[unknown, string]>([
    [
      { roles: { user: { table: {} } } },
      "roles.user: unknown role key 'table' (expected 'tables', 'files', 'routines')",
    ],
    [
      { roles: { user: { tables: { nope: { read: true } } } } },
      "roles.user.tables.nope: table 'nope' does not exist",
    ],
    [
      { roles: { user: { tables: { orders: { write: true } } } } },
      "roles.user.tables.orders: unknown action 'write' (expected 'read', 'create', 'update', 'delete')",
    ],
    [
      { roles: { user: { tables: { orders: { read: { columns: ['x'] } } } } } },
      "roles.user.tables.orders.read.columns: column 'x' does not exist in table 'orders'",
    ],
    [
      { roles: { user: { tables: { prodcts: { read: true } } } } },
      "roles.user.tables.prodcts: table 'prodcts' does not exist: did you mean 'products'?",
    ],
    [
      { roles: { user: { tables: { orders: { read: { columns: ['id', 'notes'] } } } } } },
      "roles.user.tables.orders.read.columns: column 'notes' does not exist in table 'orders': did you mean 'note'?",
    ],
    [
      { roles: { user: { tables: { orders: { read: { where: 'customer_id eq' } } } } } },
      'roles.user.tables.orders.read.where: invalid where at position 15: expected a column or a value, found end of filter',
    ],
    [
      { roles: { user: { tables: { orders: { read: { where: 'x eq 1' } } } } } },
      "roles.user.tables.orders.read.where: Column 'x' does not exist in table 'orders'",
    ],
    [
      { roles: { user: { tables: { orders: { read: { where: 'customer_id eq @user.name' } } } } } },
      "roles.user.tables.orders.read.where: unknown parameter '@user.name' at position 16; use @user.id, @user.email or @user.role",
    ],
    [
      {
        roles: {
          anonymous: { tables: { orders: { read: { where: 'customer_id eq @user.id' } } } },
        },
      },
      "roles.anonymous.tables.orders.read.where: 'anonymous' has no user, so its where cannot use @user.id, @user.email or @user.role",
    ],
    [
      { roles: { user: { files: { upload: 'yes' } } } },
      'roles.user.files.upload must be true or false',
    ],
    [{ rules: {} }, "the policy: unknown key 'rules' (expected 'roles')"],
  ])('%j', async (policy, message) => {
    const file = await policyFile(policy);
    const attempt = startTestGateway(db.name, { policyFile: file });
    await expect(attempt).rejects.toThrow(StartupError);
    await expect(startTestGateway(db.name, { policyFile: file })).rejects.toMatchObject({
      message: `policy ${file}: ${message}`,
      exitCode: 2,
    });
  });
});

describe('the users table from a release before roles', () => {
  test('is given its role column in place on start; every user is kept and can log in', async () => {
    const old = await createTestDatabase(`
CREATE TABLE ${USERS_TABLE} (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  email VARCHAR(254) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  password VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  UNIQUE KEY email (email)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;`);
    try {
      const hash = await hashPassword(PASSWORD);
      const emails = ['one@old.example', 'two@old.example', 'three@old.example'];
      for (const email of emails) {
        await old.admin.query(`INSERT INTO ${USERS_TABLE} (email, password) VALUES (?, ?)`, [
          email,
          hash,
        ]);
      }
      const [before] = await old.admin.query<mysql.RowDataPacket[]>(
        `SELECT id, email, password, created_at FROM ${USERS_TABLE} ORDER BY id`,
      );
      // Two instances at once: one adds the column, the other finds it there.
      const gateways = await Promise.all(
        [1, 2].map(() => startTestGateway(old.name, { mode: 'auth', jwtSecret: SECRET })),
      );
      try {
        const [after] = await old.admin.query<mysql.RowDataPacket[]>(
          `SELECT id, email, password, created_at, role FROM ${USERS_TABLE} ORDER BY id`,
        );
        expect(after).toEqual(before.map((row) => ({ ...row, role: 'user' })));
        for (const email of emails) {
          expect((await login(gateways[0]?.url ?? '', email)).status).toBe(200);
        }
      } finally {
        await Promise.all(gateways.map((g) => g.close()));
      }
    } finally {
      await old.drop();
    }
  });
});
