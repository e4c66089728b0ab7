/**
 * The attacks a penetration test of a multi-tenant shop policy (docs/policies.md) found, each
 * replayed against a running gateway: ENUM positions and other stored-value conversions past the
 * check after a write, collation-equal users, hidden columns probed through type errors, hidden and
 * missing names told apart by their answers or their timing, table names in the metrics, and
 * two writes racing the check of an update's where.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import { USERS_TABLE } from '../../src/db/schema.js';
import type { TableInfo } from '../../src/db/schema-types.js';
import { planInsert, planUpdate } from '../../src/plan/write-plan.js';
import {
  type Access,
  createdRowViolation,
  guardInsert,
  guardUpdate,
  updatedRowViolation,
} from '../../src/policy/stage.js';
import { parseKeyValue } from '../../src/query/key-value.js';
import {
  compileInsertBatches,
  compileInsertGuard,
  compileUpdate,
  compileUpdateGuard,
} from '../../src/sql/compile-write.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SHOP = `
CREATE TABLE products (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,2) NOT NULL,
  cost_price DECIMAL(10,2) NOT NULL, supplier_secret VARCHAR(40) NOT NULL, released DATE NULL);
INSERT INTO products VALUES (1, 'apple', 1.50, 0.40, 'orchard', '2024-01-02'),
  (2, 'pear', 2.00, 0.90, 'grove', NULL);
CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, customer_id BIGINT UNSIGNED NOT NULL,
  status ENUM('open','paid','shipped','cancelled') NOT NULL DEFAULT 'open', note VARCHAR(100) NULL);
INSERT INTO orders (id, customer_id, status, note) VALUES (6, 1, 'open', 'six'), (7, 1, 'paid', NULL);
CREATE TABLE parcels (id INT AUTO_INCREMENT PRIMARY KEY,
  code CHAR(6) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL, note VARCHAR(40) NULL);
INSERT INTO parcels (id, code) VALUES (1, 'BOX'), (2, 'BAG');
CREATE TABLE tickets (id INT AUTO_INCREMENT PRIMARY KEY,
  owner_email VARCHAR(254) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL,
  subject VARCHAR(100) NOT NULL);
INSERT INTO tickets (id, owner_email, subject) VALUES (1, 'alice@shop.test', 'alice 1'),
  (2, 'alice@shop.test ', 'trailing space'), (3, 'ALICE@shop.test', 'upper case'),
  (4, 'alicé@shop.test', 'accent'), (5, 'bob@shop.test', 'bob 1');
CREATE TABLE notes (id INT AUTO_INCREMENT PRIMARY KEY,
  owner_email VARCHAR(254) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,
  body VARCHAR(100) NOT NULL);
INSERT INTO notes (id, owner_email, body) VALUES (1, 'alice@shop.test', 'alice''s note');
CREATE TABLE secrets (id INT PRIMARY KEY, v TEXT);
CREATE TABLE jobs (id INT PRIMARY KEY, status ENUM('open','cancelled') NOT NULL, note VARCHAR(40) NULL);
INSERT INTO jobs VALUES (1, 'open', 'start');
`;

const POLICY = {
  roles: {
    anonymous: {
      tables: { products: { read: { columns: ['id', 'name', 'price', 'released'] } } },
    },
    user: {
      tables: {
        notes: { read: { where: 'owner_email eq @user.email' } },
        tickets: {
          read: { where: 'owner_email eq @user.email' },
          create: { where: 'owner_email eq @user.email' },
          update: { where: 'owner_email eq @user.email' },
          delete: { where: 'owner_email eq @user.email' },
        },
      },
    },
    // The same tickets through `in`, `ne` and a match function on @user.
    listed: {
      tables: { tickets: { read: { where: "owner_email in (@user.email, 'bob@shop.test')" } } },
    },
    others: { tables: { tickets: { read: { where: 'owner_email ne @user.email' } } } },
    prefix: { tables: { tickets: { read: { where: 'startswith(owner_email, @user.email)' } } } },
    support: {
      tables: {
        orders: {
          read: { where: "status ne 'cancelled'" },
          create: { where: "status ne 'cancelled'" },
          update: { where: "status ne 'cancelled'" },
        },
        parcels: {
          read: true,
          create: { where: "code ne 'VOID'" },
          update: { where: "code ne 'VOID'" },
        },
        jobs: { read: true, update: { where: "status ne 'cancelled'" } },
      },
    },
    // Reads the catalogue without its cost columns, and edits some of what it reads.
    editor: {
      tables: {
        products: {
          read: { columns: ['id', 'name', 'price', 'released'] },
          create: { columns: ['id', 'name', 'price'] },
          update: { columns: ['name', 'price'] },
          delete: true,
        },
      },
    },
    viewer: { tables: { '*': { read: true }, secrets: { read: false } } },
    admin: {
      tables: {
        '*': { read: true, create: true, update: true, delete: true },
        secrets: { read: false },
      },
    },
  },
};

const SECRET = 'policy-attacks-secret-0123456789abcdefghijklmnop';
const PASSWORD = 'correct horse battery';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

async function call(
  method: string,
  url: string,
  options: { json?: unknown; raw?: string; token?: string; base?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.json !== undefined || options.raw !== undefined) {
    headers['content-type'] = 'application/json';
    body = options.raw ?? JSON.stringify(options.json);
  }
  const response = await fetch(`${options.base ?? gw.url}${url}`, { method, headers, body });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: text ? JSON.parse(text) : null,
  };
}

let db: TestDatabase;
let gw: TestGateway;
let dir: string;
const tokens: Record<string, string> = {};

/** Registers for real (POST /auth/register, the default role), then sets the role and logs in. */
async function signUp(name: string, email: string, role = 'user'): Promise<void> {
  const registered = await call('POST', '/auth/register', { json: { email, password: PASSWORD } });
  expect(registered.body).toEqual({ success: true, message: 'User register succesful' });
  if (role !== 'user') {
    await db.admin.query(`UPDATE ${USERS_TABLE} SET role = ? WHERE email = ?`, [role, email]);
  }
  const login = await call('POST', '/auth/login', { json: { email, password: PASSWORD } });
  tokens[name] = (login.body as { token: string }).token;
}

async function rows(sql: string): Promise<mysql.RowDataPacket[]> {
  const [found] = await db.admin.query<mysql.RowDataPacket[]>(sql);
  return found;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-attacks-'));
  const file = path.join(dir, 'policy.json');
  await writeFile(file, JSON.stringify(POLICY));
  db = await createTestDatabase(SHOP);
  gw = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: SECRET,
    policyFile: file,
    metricsPort: 0,
  });
  await signUp('alice', 'alice@shop.test');
  await signUp('alicé', 'alicé@shop.test');
  await signUp('support', 'support@shop.test', 'support');
  await signUp('admin', 'admin@shop.test', 'admin');
  await signUp('editor', 'editor@shop.test', 'editor');
  await signUp('viewer', 'viewer@shop.test', 'viewer');
});

afterAll(async () => {
  await gw?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('the check after a write finds the written rows by key, not by the values sent', () => {
  const members = "'open', 'paid', 'shipped', 'cancelled'";

  test('an ENUM position is refused by the codec on update, create and batch create', async () => {
    const before = await rows('SELECT * FROM orders ORDER BY id');
    const update = await call('PUT', '/table/orders/update(id,6)', {
      token: tokens.support,
      json: { status: '4' },
    });
    expect(update.status).toBe(400);
    expect(update.body).toEqual({
      success: false,
      message: `Column 'status' must be one of ${members}; MySQL would read '4' as the position of a member`,
      code: 'INVALID_VALUE',
    });
    const create = await call('POST', '/table/orders/create', {
      token: tokens.support,
      json: { customer_id: 1, status: 4 },
    });
    expect(create.status).toBe(400);
    expect((create.body as { code: string }).code).toBe('INVALID_VALUE');
    const batch = await call('POST', '/table/orders/create', {
      token: tokens.support,
      json: [
        { customer_id: 1, status: 'open' },
        { customer_id: 1, status: 4 },
      ],
    });
    expect(batch.status).toBe(400);
    expect(batch.body).toEqual({
      success: false,
      message: `Row 2, column 'status' must be one of ${members}; MySQL would read '4' as the position of a member`,
      code: 'INVALID_VALUE',
    });
    expect(await rows('SELECT * FROM orders ORDER BY id')).toEqual(before);
  });

  test('a CHAR under a NO PAD collation drops the trailing space it was sent: caught after the write', async () => {
    // 'VOID ' is stored as 'VOID', which the where refuses; looked up by the value sent
    // (`code <=> 'VOID '`, NO PAD) the row was not found and passed.
    const before = await rows('SELECT * FROM parcels ORDER BY id');
    const violation = (action: string) => ({
      success: false,
      message:
        action === 'update'
          ? "The updated row would not satisfy this role's policy for update on 'parcels'; nothing was changed"
          : "A new row would not satisfy this role's policy for create on 'parcels'; nothing was inserted",
      code: 'POLICY_VIOLATION',
    });
    const update = await call('PUT', '/table/parcels/update(id,1)', {
      token: tokens.support,
      json: { code: 'VOID ' },
    });
    expect([update.status, update.body]).toEqual([403, violation('update')]);
    const byOther = await call('PUT', "/table/parcels/update(code,'BAG')", {
      token: tokens.support,
      json: { code: 'VOID ' },
    });
    expect([byOther.status, byOther.body]).toEqual([403, violation('update')]);
    const create = await call('POST', '/table/parcels/create', {
      token: tokens.support,
      json: { code: 'VOID ' },
    });
    expect([create.status, create.body]).toEqual([403, violation('create')]);
    const batch = await call('POST', '/table/parcels/create', {
      token: tokens.support,
      json: [{ code: 'OK1' }, { code: 'VOID ' }, { code: 'OK2' }],
    });
    expect([batch.status, batch.body]).toEqual([403, violation('create')]);
    const given = await call('POST', '/table/parcels/create', {
      token: tokens.support,
      json: [
        { id: 50, code: 'OK3' },
        { id: 51, code: 'VOID ' },
      ],
    });
    expect([given.status, given.body]).toEqual([403, violation('create')]);
    expect(await rows('SELECT * FROM parcels ORDER BY id')).toEqual(before);

    // What the where allows still goes through, found by key the same way.
    const ok = await call('PUT', "/table/parcels/update(code,'BAG')", {
      token: tokens.support,
      json: { code: 'SACK ' },
    });
    expect(ok.body).toEqual({
      success: true,
      message: 'Data updated successfully',
      affectedRows: 1,
    });
    const made = await call('POST', '/table/parcels/create', {
      token: tokens.support,
      json: [{ code: 'OK1' }, { code: 'OK2 ' }],
    });
    expect((made.body as { affectedRows: number }).affectedRows).toBe(2);
    // A row the UPDATE matched but left as it was still counts as matched (CLIENT_FOUND_ROWS).
    const same = await call('PUT', "/table/parcels/update(code,'OK1')", {
      token: tokens.support,
      json: { code: 'OK1' },
    });
    expect((same.body as { affectedRows: number }).affectedRows).toBe(1);
    const none = await call('PUT', "/table/parcels/update(code,'NOPE')", {
      token: tokens.support,
      json: { code: 'VOID' },
    });
    expect((none.body as { affectedRows: number }).affectedRows).toBe(0);
    // (Rolled-back inserts used up ids: only the codes are compared.)
    expect(await rows('SELECT code FROM parcels ORDER BY id')).toEqual([
      { code: 'BOX' },
      { code: 'SACK' },
      { code: 'OK1' },
      { code: 'OK2' },
    ]);
  });

  test('a plan that carries an ENUM position past the codec is still caught by the check', async () => {
    const TRANSACTION = {
      mode: 'transaction',
      unprepare: false,
      maxAffected: null,
      readBack: null,
      generated: [],
    } as const;
    // As if the codec had let '4' through: the plan is made and guarded as the handler does,
    // then run on the gateway's own database handle.
    const table = (await gw.gateway.schema.require('orders')) as TableInfo;
    const status = table.columnsByName.get('status');
    const access: Access = {
      policy: gw.gateway.policy as NonNullable<typeof gw.gateway.policy>,
      role: 'support',
      user: { id: '3', email: 'support@shop.test', role: 'support' },
    };
    const before = await rows('SELECT * FROM orders ORDER BY id');

    const planned = planUpdate(table, parseKeyValue('id,6'), { note: 'x' });
    const update = guardUpdate(access, {
      ...planned,
      set: [{ column: status as NonNullable<typeof status>, value: '4' }],
    });
    const updateGuard = compileUpdateGuard(update);
    expect(updateGuard).not.toBeNull();
    await expect(
      gw.gateway.db.write({
        ...TRANSACTION,
        statements: [compileUpdate(update)],
        guards: [
          {
            ...(updateGuard as NonNullable<typeof updateGuard>),
            error: () => updatedRowViolation(table),
          },
        ],
      }),
    ).rejects.toMatchObject({ status: 403, code: 'POLICY_VIOLATION' });

    const made = planInsert(table, [{ customer_id: 1, note: 'a' }, { customer_id: 1 }]);
    const insert = guardInsert(access, {
      ...made,
      columns: [...made.columns, status as NonNullable<typeof status>],
      rows: made.rows.map((row) => [...row, { kind: 'value', value: '4' } as const]),
    });
    const insertGuard = compileInsertGuard(insert);
    await expect(
      gw.gateway.db.write({
        ...TRANSACTION,
        statements: compileInsertBatches(insert),
        guards: [
          {
            ...(insertGuard as NonNullable<typeof insertGuard>),
            error: () => createdRowViolation(table),
          },
        ],
      }),
    ).rejects.toMatchObject({ status: 403, code: 'POLICY_VIOLATION' });
    expect(await rows('SELECT * FROM orders ORDER BY id')).toEqual(before);
  });
});
describe('@user values match exactly: no collation, no pad space', () => {
  const subjects = (answer: Answer) => (answer.body as { subject: string }[]).map((r) => r.subject);

  test('reads: each registered user sees only the rows holding exactly their email', async () => {
    const read = (name: string) =>
      call('GET', '/table/tickets/read?$orderby=id', { token: tokens[name] });
    expect(subjects(await read('alice'))).toEqual(['alice 1']);
    expect(subjects(await read('alicé'))).toEqual(['accent']);
    // Their own filter cannot widen it either.
    const widened = await call(
      'GET',
      `/table/tickets/read?$filter=${encodeURIComponent("owner_email eq 'alice@shop.test' or id gt 0")}`,
      { token: tokens.alicé },
    );
    expect(subjects(widened)).toEqual(['accent']);
  });

  test("updates and deletes by alicé or on the trailing-space row never reach alice's rows", async () => {
    const before = await rows('SELECT * FROM tickets ORDER BY id');
    for (const [name, id] of [
      ['alicé', 1],
      ['alicé', 3],
      ['alice', 2],
      ['alice', 3],
      ['alice', 4],
    ] as const) {
      const update = await call('PUT', `/table/tickets/update(id,${id})`, {
        token: tokens[name],
        json: { subject: 'taken' },
      });
      expect([name, id, update.body]).toEqual([
        name,
        id,
        { success: true, message: 'Data updated successfully', affectedRows: 0 },
      ]);
      const deleted = await call('DELETE', `/table/tickets/delete(id,${id})`, {
        token: tokens[name],
      });
      expect([name, id, deleted.body]).toEqual([
        name,
        id,
        { success: true, message: 'Data deleted successfully', affectedRows: 0 },
      ]);
    }
    expect(await rows('SELECT * FROM tickets ORDER BY id')).toEqual(before);
    const own = await call('PUT', '/table/tickets/update(id,4)', {
      token: tokens.alicé,
      json: { subject: 'accent, edited' },
    });
    expect((own.body as { affectedRows: number }).affectedRows).toBe(1);
  });

  test('an email that differs by an invisible character, registered for real, is another user', async () => {
    // utf8mb4_unicode_ci ignores U+200B ZERO WIDTH SPACE: the two emails compare equal there.
    const invisible = 'alice@shop.test\u200b';
    await signUp('invisible', invisible);
    const answer = await call('GET', '/table/notes/read', { token: tokens.invisible });
    expect([answer.status, answer.body]).toEqual([200, []]);
    const own = await call('GET', '/table/notes/read', { token: tokens.alice });
    expect(own.body).toEqual([{ id: 1, owner_email: 'alice@shop.test', body: "alice's note" }]);
    // A trailing space cannot make another user: registration trims it (this is alice again).
    const spaced = await call('POST', '/auth/register', {
      json: { email: 'alice@shop.test ', password: PASSWORD },
    });
    expect([spaced.status, (spaced.body as { message: string }).message]).toEqual([
      409,
      'User already exists',
    ]);
  });

  test('creates: only a row with exactly the caller’s email', async () => {
    const before = await rows('SELECT * FROM tickets ORDER BY id');
    for (const owner of ['alice@shop.test', 'ALICE@shop.test', 'alicé@shop.test ']) {
      const answer = await call('POST', '/table/tickets/create', {
        token: tokens.alicé,
        json: { owner_email: owner, subject: 'mine?' },
      });
      expect([owner, answer.status]).toEqual([owner, 403]);
    }
    expect(await rows('SELECT * FROM tickets ORDER BY id')).toEqual(before);
    const mine = await call('POST', '/table/tickets/create', {
      token: tokens.alicé,
      json: { owner_email: 'alicé@shop.test', subject: 'new' },
    });
    expect(mine.status).toBe(200);
    await db.admin.query("DELETE FROM tickets WHERE subject = 'new'");
  });

  test('in, ne and startswith with @user are exact too', async () => {
    const read = async (name: string) =>
      subjects(await call('GET', '/table/tickets/read?$orderby=id', { token: tokens[name] }));
    const cases = [
      ['listed', 'listed-alicé', ['accent, edited', 'bob 1']],
      // Not alice's own row; every other one, the trailing space and upper case ones included.
      ['others', 'others-alice', ['trailing space', 'upper case', 'accent, edited', 'bob 1']],
      ['prefix', 'prefix-alicé', ['accent, edited']],
    ] as const;
    for (const [role, name, expected] of cases) {
      const email = role === 'others' ? 'alice@shop.test' : 'alicé@shop.test';
      // A token stops working once its user's role changes (revocation): read while it holds.
      await db.admin.query(`UPDATE ${USERS_TABLE} SET role = ? WHERE email = ?`, [role, email]);
      const login = await call('POST', '/auth/login', { json: { email, password: PASSWORD } });
      tokens[name] = (login.body as { token: string }).token;
      try {
        expect(await read(name)).toEqual(expected);
      } finally {
        await db.admin.query(`UPDATE ${USERS_TABLE} SET role = 'user' WHERE email = ?`, [email]);
        // The gateway still holds the role it read at the login above, and refuses the user's
        // earlier tokens (role user) until its next refresh, up to 3 s; the tests after this
        // one use them. A login reads the user's state again at once.
        const again = await call('POST', '/auth/login', { json: { email, password: PASSWORD } });
        expect(again.status).toBe(200);
      }
    }
  });
});

/**
 * A probe of a hidden name and the same probe of a name that does not exist (of the same
 * length): the answers must be the same bytes but for the name — status, the headers a client
 * could read anything from, and the body.
 */
async function expectSameAnswer(
  probe: (name: string) => Promise<Answer>,
  hidden: string,
  missing: string,
): Promise<void> {
  expect(missing).toHaveLength(hidden.length);
  const [a, b] = [await probe(hidden), await probe(missing)];
  const shown = (answer: Answer, name: string) => ({
    status: answer.status,
    type: answer.headers.get('content-type'),
    length: answer.headers.get('content-length'),
    allow: answer.headers.get('allow'),
    authenticate: answer.headers.get('www-authenticate'),
    text: answer.text.replaceAll(name, '<name>'),
  });
  expect(shown(a, hidden)).toEqual(shown(b, missing));
  expect(a.status).not.toBe(200);
}

describe('a hidden column answers byte for byte as a missing one', () => {
  const q = encodeURIComponent;
  test.each([
    ['$filter=year(NAME) eq 1'],
    ['$filter=NAME eq 2024-01-01'],
    ['$filter=NAME eq 2024-01-01T10:00:00Z'],
    ['$filter=NAME eq 10:00:00'],
    ["$filter=tolower(NAME) eq 'a'"],
    ['$filter=length(NAME) eq 1'],
    ['$filter=NAME in (2024-01-01)'],
    ["$filter=contains(NAME, '1')"],
    ["$filter=contains(year(NAME), '1')"],
    ['$filter=NAME gt 1&$count=true'],
    ['$filter=id eq 1 or NAME eq null'],
    ['$select=id,NAME'],
    ['$orderby=NAME desc'],
  ])('anonymous read with %s', async (query) => {
    for (const [hidden, missing] of [
      ['cost_price', 'cost_prize'],
      ['supplier_secret', 'supplier_secreT'],
    ]) {
      const probe = (name: string) => {
        const [key, ...rest] = query.replaceAll('NAME', name).split('&');
        const options = [key, ...rest].map((part) => {
          const at = (part as string).indexOf('=');
          return `${(part as string).slice(0, at)}=${q((part as string).slice(at + 1))}`;
        });
        return call('GET', `/table/products/read?${options.join('&')}`);
      };
      await expectSameAnswer(probe, hidden as string, missing as string);
    }
  });

  test('writes: a hidden column as the key of update/delete or in a body', async () => {
    const before = await rows('SELECT * FROM products ORDER BY id');
    const probes: ((name: string) => Promise<Answer>)[] = [
      (name) =>
        call('PUT', '/table/products/update(id,1)', {
          token: tokens.editor,
          json: { [name]: 'abc' },
        }),
      (name) =>
        call('PUT', `/table/products/update(${name},abc)`, {
          token: tokens.editor,
          json: { name: 'x' },
        }),
      (name) =>
        call('PUT', `/table/products/update(${name},1.5)`, {
          token: tokens.editor,
          json: { name: 'x' },
        }),
      (name) => call('DELETE', `/table/products/delete(${name},abc)`, { token: tokens.editor }),
      (name) =>
        call('POST', '/table/products/create', {
          token: tokens.editor,
          json: { id: 9, name: 'x', price: 1, [name]: 'abc' },
        }),
      (name) =>
        call('POST', '/table/products/create', {
          token: tokens.editor,
          json: [{ id: 9, name: 'x', price: 1 }, { [name]: { not: 'a value' } }],
        }),
    ];
    for (const probe of probes) {
      await expectSameAnswer(probe, 'cost_price', 'cost_prize');
      await expectSameAnswer(probe, 'supplier_secret', 'supplier_secreT');
    }
    // A column the role reads but may not write stays 403 FORBIDDEN, and is named.
    const readable = await call('PUT', '/table/products/update(id,1)', {
      token: tokens.editor,
      json: { released: '2024-05-05' },
    });
    expect([readable.status, readable.body]).toEqual([
      403,
      {
        success: false,
        message:
          "Forbidden: this role's policy for update on 'products' does not let it write column 'released'",
        code: 'FORBIDDEN',
      },
    ]);
    expect(await rows('SELECT * FROM products ORDER BY id')).toEqual(before);
    // What the role may write still works.
    const ok = await call('PUT', '/table/products/update(id,2)', {
      token: tokens.editor,
      json: { price: '2.10' },
    });
    expect((ok.body as { affectedRows: number }).affectedRows).toBe(1);
  });
});

describe('a table the role may not read answers as a missing one, whatever the request', () => {
  test.each([
    ['admin', 'GET', '/table/NAME/read?$filter=((', undefined],
    ['admin', 'PUT', '/table/NAME/update(id,1)', '{'],
    ['admin', 'POST', '/table/NAME/create', '{"id": 1}'],
    ['admin', 'DELETE', '/table/NAME/delete(nope,1)', undefined],
    ['viewer', 'PUT', '/table/NAME/update(id,1)', '{"v": 1}'],
    ['viewer', 'POST', '/table/NAME/create', 'not json'],
    ['alice', 'GET', '/table/NAME/read', undefined],
    ['alice', 'PUT', '/table/NAME/update(id,1)', '{'],
  ])('%s %s %s', async (who, method, url, raw) => {
    await expectSameAnswer(
      (name) => call(method, url.replace('NAME', name), { token: tokens[who], raw }),
      'secrets',
      'secretz',
    );
  });

  test('a table the role reads but may not write is 403 FORBIDDEN', async () => {
    const forbidden = await call('PUT', '/table/products/update(id,1)', {
      token: tokens.viewer,
      json: { name: 'x' },
    });
    expect([forbidden.status, forbidden.body]).toEqual([
      403,
      { success: false, message: 'Forbidden', code: 'FORBIDDEN' },
    ]);
  });
});

describe('hidden and missing names take the same time to answer', () => {
  /** Median milliseconds of each probe, sampled in turns so that load falls on both alike. */
  async function medians(
    probes: readonly (() => Promise<Answer>)[],
    rounds: number,
  ): Promise<number[]> {
    const times: number[][] = probes.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (const [i, probe] of probes.entries()) {
        const start = process.hrtime.bigint();
        await probe();
        (times[i] as number[]).push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    }
    return times.map((list) => {
      const sorted = [...list].sort((a, b) => a - b);
      return sorted[Math.floor(sorted.length / 2)] as number;
    });
  }

  // The test gateway re-reads the schema on every miss (schemaRefreshMs 0) where a production
  // one does at most once a second: the cost a miss may carry is paid on every probe here.
  test('a column and a table', async () => {
    const column = (name: string) => () =>
      call('GET', `/table/products/read?$filter=${encodeURIComponent(`year(${name}) eq 1`)}`);
    const table = (name: string) => () =>
      call('GET', `/table/${name}/read`, { token: tokens.viewer });
    const [hiddenColumn, missingColumn, hiddenTable, missingTable] = await medians(
      [column('cost_price'), column('cost_prize'), table('secrets'), table('secretz')],
      41,
    );
    const report = { hiddenColumn, missingColumn, hiddenTable, missingTable };
    // Generous: a re-read the one path has and the other not costs several times a plain answer.
    const close = (a: number, b: number) => Math.max(a, b) / Math.min(a, b) < 2;
    expect({ ...report, columns: close(hiddenColumn as number, missingColumn as number) }).toEqual({
      ...report,
      columns: true,
    });
    expect({ ...report, tables: close(hiddenTable as number, missingTable as number) }).toEqual({
      ...report,
      tables: true,
    });
  });
});

describe('metrics name only the tables the caller may read', () => {
  test('a 404 for a hidden table is counted without its name', async () => {
    const scrape = async () => (await fetch(gw.gateway.metricsUrl as string)).text();
    await call('GET', '/table/secrets/read', { token: tokens.admin });
    await call('GET', '/table/secrets/read');
    await call('GET', '/table/products/read', { token: tokens.admin });
    const text = await scrape();
    const counted = text
      .split('\n')
      .filter((line) => line.startsWith('tablegate_http_requests_total{'));
    expect(counted.some((line) => line.includes('table="products"'))).toBe(true);
    expect(counted.filter((line) => line.includes('secrets'))).toEqual([]);
    expect(counted.some((line) => line.includes('status="404"') && line.includes('table=""'))).toBe(
      true,
    );
  });
});

describe('the read caches stay exact per role', () => {
  const read = (query: string, token?: string) =>
    call('GET', `/table/products/read?${query}`, { token });
  const codes = (answers: Answer[]) =>
    answers.map((answer) => (answer.status === 200 ? 200 : (answer.body as { code: string }).code));

  test('a plan or shape cached for a role that sees a column never serves one that does not', async () => {
    const queries = [
      '$filter=cost_price%20gt%200&$orderby=id',
      '$filter=id%20eq%201%20and%20cost_price%20gt%200',
      '$filter=id%20eq%202%20and%20cost_price%20gt%200',
      '$select=*&$top=1',
      '$top=1',
    ];
    for (const query of queries) {
      // Seen, kept and found by the role that sees every column, then asked by one that does not,
      // in turns: each answer is what that role gets planned afresh.
      const turns: Answer[] = [];
      for (let i = 0; i < 3; i++) {
        turns.push(await read(query, tokens.admin));
        turns.push(await read(query));
      }
      const [admin, anonymous] = [
        turns.filter((_, i) => i % 2 === 0),
        turns.filter((_, i) => i % 2 === 1),
      ];
      for (const answer of admin) expect(answer.text).toBe(admin[0]?.text);
      for (const answer of anonymous) expect(answer.text).toBe(anonymous[0]?.text);
      if (query.includes('cost_price')) {
        expect([query, codes(admin), codes(anonymous)]).toEqual([
          query,
          [200, 200, 200],
          ['UNKNOWN_COLUMN', 'UNKNOWN_COLUMN', 'UNKNOWN_COLUMN'],
        ]);
      } else {
        expect(Object.keys(((admin[0]?.body ?? []) as object[])[0] ?? {})).toEqual([
          'id',
          'name',
          'price',
          'cost_price',
          'supplier_secret',
          'released',
        ]);
        expect(Object.keys(((anonymous[0]?.body ?? []) as object[])[0] ?? {})).toEqual([
          'id',
          'name',
          'price',
          'released',
        ]);
      }
    }
  });
});

describe('two writes racing a policy guard', () => {
  test('support never cancels a job, nor changes one an admin cancelled meanwhile', async () => {
    // Each round the job is open again; at once, the admin cancels it (and says so in the note),
    // support tries to cancel it, and support edits its note. Whatever the interleaving, support's
    // cancel changes nothing, and its note lands only before the admin's cancel — which then
    // writes its own note over it: the job always ends cancelled with the admin's note.
    for (let round = 0; round < 12; round++) {
      await db.admin.query("UPDATE jobs SET status = 'open', note = 'start' WHERE id = 1");
      const update = (token: string | undefined, json: object) =>
        call('PUT', '/table/jobs/update(id,1)', { token, json });
      const [admin, cancel, edit] = await Promise.all([
        update(tokens.admin, { status: 'cancelled', note: `admin-${round}` }),
        update(tokens.support, { status: 'cancelled' }),
        update(tokens.support, { note: `support-${round}` }),
      ]);
      expect(admin?.text).toBe(UPDATED_ONE);
      // Refused by the check after the write, or no row left that support may change.
      if (cancel?.status === 403) expect(cancel.body).toEqual(JOB_VIOLATION);
      else expect(cancel?.text).toBe(UPDATED_NONE);
      expect([UPDATED_NONE, UPDATED_ONE]).toContain(edit?.text);
      expect(await rows('SELECT status, note FROM jobs')).toEqual([
        { status: 'cancelled', note: `admin-${round}` },
      ]);
    }
  });
});

const UPDATED_ONE = '{"success":true,"message":"Data updated successfully","affectedRows":1}';
const UPDATED_NONE = '{"success":true,"message":"Data updated successfully","affectedRows":0}';
const JOB_VIOLATION = {
  success: false,
  message:
    "The updated row would not satisfy this role's policy for update on 'jobs'; nothing was changed",
  code: 'POLICY_VIOLATION',
};
