/**
 * The gateway's own users beyond register and login: `GET /auth/me`, `POST /auth/password`
 * (the old password checked, failures counted as failed logins, a new token in the answer), and
 * revocation across gateways: a token of a user removed, given another role or a new password
 * on one gateway is refused by every gateway of the database within 10 s.
 */
import type mysql from 'mysql2/promise';
import { USERS_TABLE } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SECRET = 'own-users-secret-0123456789abcdefghijklmn';
const PASSWORD = 'correct horse battery';
const ACCESS_DENIED = { success: false, message: 'Access Denied', code: 'ACCESS_DENIED' };

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
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}${url}`, {
    method,
    headers,
    body: options.json === undefined ? undefined : JSON.stringify(options.json),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : null,
  };
}

let db: TestDatabase;
let one: TestGateway;
let two: TestGateway;
let counter = 0;

async function signUp(): Promise<{ email: string; id: string; token: string }> {
  const email = `user-${++counter}-${Date.now()}@example.com`;
  expect(
    (await call(one.url, 'POST', '/auth/register', { json: { email, password: PASSWORD } })).status,
  ).toBe(200);
  const login = await call(one.url, 'POST', '/auth/login', { json: { email, password: PASSWORD } });
  const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
    `SELECT id FROM ${USERS_TABLE} WHERE email = ?`,
    [email],
  );
  return { email, id: String(rows[0]?.id), token: (login.body as { token: string }).token };
}

const me = (base: string, token?: string) => call(base, 'GET', '/auth/me', { token });
const changePassword = (token: string, json: unknown) =>
  call(one.url, 'POST', '/auth/password', { token, json });

/** Milliseconds until `token` is refused on `base`; polled every 100 ms for at most 12 s. */
async function msUntilRefused(base: string, token: string): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < 12_000) {
    const answer = await me(base, token);
    if (answer.status === 401) {
      expect([answer.headers.get('www-authenticate'), answer.body]).toEqual([
        'Bearer',
        ACCESS_DENIED,
      ]);
      return performance.now() - start;
    }
    expect(answer.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Number.POSITIVE_INFINITY;
}

beforeAll(async () => {
  db = await createTestDatabase('CREATE TABLE items (id INT PRIMARY KEY);');
  // Two gateways of one database, sharing the secret: as behind a load balancer.
  one = await startTestGateway(db.name, { mode: 'auth', jwtSecret: SECRET });
  two = await startTestGateway(db.name, { mode: 'auth', jwtSecret: SECRET });
});
afterAll(async () => {
  await one?.close();
  await two?.close();
  await db?.drop();
});

describe('GET /auth/me', () => {
  test('the caller as the token says: id, email, role — on any gateway', async () => {
    const user = await signUp();
    for (const base of [one.url, two.url]) {
      const answer = await me(base, user.token);
      expect([answer.status, answer.body]).toEqual([
        200,
        { id: user.id, email: user.email, role: 'user' },
      ]);
    }
  });

  test('without a token, or with a bad one: 401 Access Denied', async () => {
    for (const token of [undefined, 'garbage', `${(await signUp()).token}x`]) {
      const answer = await me(one.url, token);
      expect([answer.status, answer.headers.get('www-authenticate'), answer.body]).toEqual([
        401,
        'Bearer',
        ACCESS_DENIED,
      ]);
    }
  });
});

describe('POST /auth/password', () => {
  test('changes the password and answers a new token; the old token stops at once here, within 10 s elsewhere', async () => {
    const user = await signUp();
    // Seen by the second gateway before the change, so it holds the user's state.
    expect((await me(two.url, user.token)).status).toBe(200);
    const changed = await changePassword(user.token, {
      old_password: PASSWORD,
      new_password: 'a brand new passphrase',
    });
    expect(changed.status).toBe(200);
    expect(Object.keys(changed.body as object)).toEqual(['success', 'message', 'token']);
    expect(changed.body).toMatchObject({ success: true, message: 'Password changed' });
    const fresh = (changed.body as { token: string }).token;

    expect((await me(one.url, user.token)).status).toBe(401);
    expect(await msUntilRefused(two.url, user.token)).toBeLessThan(10_000);
    for (const base of [one.url, two.url]) {
      expect((await me(base, fresh)).body).toEqual({
        id: user.id,
        email: user.email,
        role: 'user',
      });
    }
    const login = (password: string) =>
      call(one.url, 'POST', '/auth/login', { json: { email: user.email, password } });
    expect((await login(PASSWORD)).status).toBe(401);
    expect((await login('a brand new passphrase')).status).toBe(200);
  });

  test('a wrong old password: 403 WRONG_PASSWORD, nothing changed', async () => {
    const user = await signUp();
    const answer = await changePassword(user.token, {
      old_password: 'not my password',
      new_password: 'another new passphrase',
    });
    expect([answer.status, answer.body]).toEqual([
      403,
      {
        success: false,
        message: "'old_password' is not the user's password",
        code: 'WRONG_PASSWORD',
      },
    ]);
    expect((await me(one.url, user.token)).status).toBe(200);
    const login = await call(one.url, 'POST', '/auth/login', {
      json: { email: user.email, password: PASSWORD },
    });
    expect(login.status).toBe(200);
  });

  const bad = (message: string) => ({ success: false, message, code: 'INVALID_BODY' });
  test.each<[string, unknown, unknown]>([
    [
      'a short new password',
      { old_password: PASSWORD, new_password: 'short' },
      bad("'new_password' must be 8 to 1024 characters long"),
    ],
    ['no old password', { new_password: 'long enough now' }, bad("'old_password' is required")],
    [
      'a numeric new password',
      { old_password: PASSWORD, new_password: 123456789 },
      bad("'new_password' must be a string"),
    ],
    [
      'an array',
      [],
      bad("Request body must be a JSON object with 'old_password' and 'new_password'"),
    ],
  ])('%s: 400', async (_name, json, expected) => {
    const user = await signUp();
    const answer = await changePassword(user.token, json);
    expect([answer.status, answer.body]).toEqual([400, expected]);
  });

  test('without a token: 401', async () => {
    const answer = await call(one.url, 'POST', '/auth/password', {
      json: { old_password: PASSWORD, new_password: 'whatever it is' },
    });
    expect([answer.status, answer.body]).toEqual([401, ACCESS_DENIED]);
  });

  test('wrong old passwords count as failed logins: the 11th in a minute is 429', async () => {
    const user = await signUp();
    for (let i = 0; i < 10; i++) {
      const answer = await changePassword(user.token, {
        old_password: `guess ${i} of many`,
        new_password: 'another new passphrase',
      });
      expect(answer.status).toBe(403);
    }
    const blocked = await changePassword(user.token, {
      old_password: PASSWORD,
      new_password: 'another new passphrase',
    });
    expect([blocked.status, (blocked.body as { code: string }).code]).toEqual([
      429,
      'TOO_MANY_ATTEMPTS',
    ]);
  });
});

describe('revocation across gateways', () => {
  test('a user removed through one gateway’s database is refused by both within 10 s', async () => {
    const user = await signUp();
    expect((await me(one.url, user.token)).status).toBe(200);
    expect((await me(two.url, user.token)).status).toBe(200);
    await db.admin.query(`DELETE FROM ${USERS_TABLE} WHERE id = ?`, [user.id]);
    const [first, second] = await Promise.all([
      msUntilRefused(one.url, user.token),
      msUntilRefused(two.url, user.token),
    ]);
    expect(first).toBeLessThan(10_000);
    expect(second).toBeLessThan(10_000);
  }, 30_000);

  test('a role changed in the table: the token stops; the next login carries the new role', async () => {
    const user = await signUp();
    expect((await me(two.url, user.token)).status).toBe(200);
    await db.admin.query(`UPDATE ${USERS_TABLE} SET role = 'admin' WHERE id = ?`, [user.id]);
    expect(await msUntilRefused(two.url, user.token)).toBeLessThan(10_000);
    const login = await call(two.url, 'POST', '/auth/login', {
      json: { email: user.email, password: PASSWORD },
    });
    expect((await me(two.url, (login.body as { token: string }).token)).body).toMatchObject({
      role: 'admin',
    });
  }, 30_000);

  test('a token first seen after its user was removed is refused at once', async () => {
    const user = await signUp();
    await db.admin.query(`DELETE FROM ${USERS_TABLE} WHERE id = ?`, [user.id]);
    // The second gateway never saw this user: it reads them before trusting the token.
    expect((await me(two.url, user.token)).status).toBe(401);
  });
});
