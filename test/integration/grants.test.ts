/**
 * The least-privilege grants the README prints under "Running in production" are true: read from
 * the README itself, given to a fresh MySQL user that has nothing else, they let the real gateway
 * serve what the README says — reads and writes in open mode; start, register, log in and restart
 * in auth mode; and with SELECT alone, every read while every write answers 403.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testServer } from '../helpers/mysql-url.js';

/** The README's placeholders, replaced by the test's own database and user. */
const README_DATABASE = '`shop`';
const README_ACCOUNT = "'tablegate'@'10.0.0.%'";

/** The GRANT statements of the README's grants block, in order. */
function readmeGrants(): string[] {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.split('\n## Running in production\n')[1]?.split('\n## ')[0] ?? '';
  const block = /```sql\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .filter((line) => line.startsWith('GRANT '))
    .map((line) => line.trim());
}

const GRANTS = readmeGrants();
const [READ_WRITE, AUTH_CREATE, READ_ONLY] = GRANTS as [string, string, string];

const FIXTURE = `
CREATE TABLE items (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(50) NOT NULL);
INSERT INTO items (name) VALUES ('first'), ('second');
CREATE VIEW named AS SELECT id, name FROM items WHERE name <> '';
`;

let db: TestDatabase;
const users: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
});
afterAll(async () => {
  for (const user of users) await db.admin.query(`DROP USER IF EXISTS ${user}`);
  await db.drop();
});

/** A new MySQL user that has exactly the given README grants, and its credentials. */
async function userWith(grants: readonly string[]): Promise<{ user: string; password: string }> {
  const name = `tg_${randomBytes(5).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  const account = `'${name}'@'%'`;
  users.push(account);
  await db.admin.query(`CREATE USER ${account} IDENTIFIED BY '${password}'`);
  for (const grant of grants) {
    await db.admin.query(
      grant.replaceAll(README_DATABASE, `\`${db.name}\``).replaceAll(README_ACCOUNT, account),
    );
  }
  const [rows] = await db.admin.query(`SHOW GRANTS FOR ${account}`);
  // Nothing else: USAGE (no privilege) on *.*, and the grants on this database alone.
  const shown = (rows as Record<string, string>[]).map((row) => Object.values(row)[0] as string);
  expect(shown.filter((line) => !line.startsWith('GRANT USAGE ON *.* TO '))).toEqual([
    expect.stringMatching(new RegExp(`^GRANT [A-Z, ]+ ON \`${db.name}\`\\.\\* TO `)),
  ]);
  return { user: name, password };
}

async function call(base: string, method: string, path: string, body?: unknown, token?: string) {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function gatewayAs(
  credentials: { user: string; password: string },
  mode: 'open' | 'auth',
): Promise<TestGateway> {
  return startTestGateway(db.name, {
    mode,
    db: { ...testServer(), ...credentials, database: db.name, poolSize: 4 },
    jwtSecret: mode === 'auth' ? 'grants-test-secret-0123456789abcdefghijkl' : null,
  });
}

test('the README prints three GRANT statements in the expected shape', () => {
  expect(GRANTS).toEqual([
    "GRANT SELECT, INSERT, UPDATE, DELETE ON `shop`.* TO 'tablegate'@'10.0.0.%';",
    "GRANT CREATE ON `shop`.* TO 'tablegate'@'10.0.0.%';",
    "GRANT SELECT ON `shop`.* TO 'tablegate'@'10.0.0.%';",
  ]);
});

test('open mode with SELECT, INSERT, UPDATE, DELETE: reads and every write', async () => {
  const gw = await gatewayAs(await userWith([READ_WRITE]), 'open');
  try {
    expect(await call(gw.url, 'GET', '/table/named/read?$orderby=id')).toEqual({
      status: 200,
      body: [
        { id: 1, name: 'first' },
        { id: 2, name: 'second' },
      ],
    });
    const created = await call(gw.url, 'POST', '/table/items/create', { name: 'third' });
    expect(created).toMatchObject({ status: 200, body: { success: true, insertId: 3 } });
    const updated = await call(gw.url, 'PUT', '/table/items/update(id,3)', { name: 'III' });
    expect(updated).toMatchObject({ status: 200, body: { affectedRows: 1 } });
    const deleted = await call(gw.url, 'DELETE', '/table/items/delete(id,3)');
    expect(deleted).toMatchObject({ status: 200, body: { affectedRows: 1 } });
    expect((await call(gw.url, 'GET', '/health')).status).toBe(200);
  } finally {
    await gw.close();
  }
});

test('auth mode with CREATE too: starts, registers, logs in, reads, and restarts', async () => {
  const credentials = await userWith([READ_WRITE, AUTH_CREATE]);
  let gw = await gatewayAs(credentials, 'auth');
  const account = { email: 'grants@example.com', password: 'grants test password' };
  try {
    expect(await call(gw.url, 'POST', '/auth/register', account)).toMatchObject({ status: 200 });
  } finally {
    await gw.close();
  }
  // A restart: the users table exists now.
  gw = await gatewayAs(credentials, 'auth');
  try {
    const login = await call(gw.url, 'POST', '/auth/login', account);
    expect(login.status).toBe(200);
    const read = await call(
      gw.url,
      'GET',
      '/table/items/read?$top=1',
      undefined,
      String(login.body.token),
    );
    expect(read).toEqual({ status: 200, body: [{ id: 1, name: 'first' }] });
  } finally {
    await gw.close();
  }
  // CREATE revoked: a start that finds the table right runs no DDL.
  const mysqlAccount = `'${credentials.user}'@'%'`;
  await db.admin.query(`REVOKE CREATE ON \`${db.name}\`.* FROM ${mysqlAccount}`);
  gw = await gatewayAs(credentials, 'auth');
  try {
    const login = await call(gw.url, 'POST', '/auth/login', account);
    expect(login.status).toBe(200);
    const other = { email: 'grants2@example.com', password: 'grants test password' };
    expect(await call(gw.url, 'POST', '/auth/register', other)).toMatchObject({ status: 200 });
  } finally {
    await gw.close();
  }
});

test('auth mode on a users table from before roles, without ALTER: one line naming it', async () => {
  const old = await createTestDatabase(`${FIXTURE}
CREATE TABLE users_created_by_tablegate (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  email VARCHAR(254) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  password VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, UNIQUE KEY email (email));`);
  const name = `tg_${randomBytes(5).toString('hex')}`;
  const account = `'${name}'@'%'`;
  await old.admin.query(`CREATE USER ${account} IDENTIFIED BY 'old-table-password'`);
  try {
    await old.admin.query(
      READ_WRITE.replaceAll(README_DATABASE, `\`${old.name}\``).replaceAll(README_ACCOUNT, account),
    );
    await expect(
      startTestGateway(old.name, {
        mode: 'auth',
        db: {
          ...testServer(),
          user: name,
          password: 'old-table-password',
          database: old.name,
          poolSize: 2,
        },
        jwtSecret: 'grants-test-secret-0123456789abcdefghijkl',
      }),
    ).rejects.toThrow(/^cannot prepare table users_created_by_tablegate: ALTER command denied/);
  } finally {
    await old.admin.query(`DROP USER IF EXISTS ${account}`);
    await old.drop();
  }
});

test('a read-only gateway with SELECT alone: reads work, every write answers 403', async () => {
  const gw = await gatewayAs(await userWith([READ_ONLY]), 'open');
  try {
    expect((await call(gw.url, 'GET', '/table/items/read')).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/table/items/create', { name: 'x' }],
      ['PUT', '/table/items/update(id,1)', { name: 'x' }],
      ['DELETE', '/table/items/delete(id,1)', undefined],
    ] as const) {
      const answer = await call(gw.url, method, path, body);
      expect({ method, status: answer.status, code: answer.body.code }).toEqual({
        method,
        status: 403,
        code: 'ER_TABLEACCESS_DENIED_ERROR',
      });
    }
    const [rows] = await db.admin.query('SELECT name FROM items ORDER BY id');
    expect(rows).toEqual([{ name: 'first' }, { name: 'second' }]);
  } finally {
    await gw.close();
  }
});
