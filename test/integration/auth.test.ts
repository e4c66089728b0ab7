/**
 * Auth mode end to end (docs/auth.md): register, login, the guard in front of every route,
 * tokens that must be refused, the secret on disk, failed-login limits, the hidden users table,
 * and open mode without any of it. Real gateway, real MariaDB/MySQL, HTTP through fetch.
 */
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import type mysql from 'mysql2/promise';
import { ensureUsersTable } from '../../src/auth/users.js';
import { USERS_TABLE } from '../../src/db/schema.js';
import { openDatabase } from '../../src/execute/database.js';
import { StartupError } from '../../src/main.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testServer } from '../helpers/mysql-url.js';

const FIXTURE = `
CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
INSERT INTO items VALUES (1, 'first'), (2, 'second');
`;
const SECRET = 'integration-secret-0123456789abcdefghijklmnop';
const PASSWORD = 'correct horse battery';

const ACCESS_DENIED = { success: false, message: 'Access Denied', code: 'ACCESS_DENIED' };
const INVALID_CREDENTIALS = {
  success: false,
  message: 'Invalid email or password',
  code: 'INVALID_CREDENTIALS',
};
const REGISTERED = { success: true, message: 'User register succesful' };

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

async function call(
  base: string,
  method: string,
  url: string,
  options: { json?: unknown; body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  let body = options.body;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(`${base}${url}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

const register = (base: string, email: string, password = PASSWORD) =>
  call(base, 'POST', '/auth/register', { json: { email, password } });
const login = (base: string, email: string, password = PASSWORD) =>
  call(base, 'POST', '/auth/login', { json: { email, password } });

async function tokenFor(base: string, email: string): Promise<string> {
  const answer = await login(base, email);
  expect(answer.status).toBe(200);
  return (answer.body as { token: string }).token;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function expectDenied(answer: Answer): void {
  expect(answer.status).toBe(401);
  expect(answer.headers.get('www-authenticate')).toBe('Bearer');
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(answer.body).toEqual(ACCESS_DENIED);
}

let emailCounter = 0;
const freshEmail = (tag: string) => `${tag}-${++emailCounter}-${Date.now()}@example.com`;

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  gw = await startTestGateway(db.name, { mode: 'auth', jwtSecret: SECRET });
});
afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

describe('register → login → read', () => {
  test('a registered user logs in and reads a table with the token', async () => {
    const email = freshEmail('flow');
    const registered = await register(gw.url, email);
    expect(registered.status).toBe(200);
    expect(registered.body).toEqual(REGISTERED);

    const loggedIn = await login(gw.url, email);
    expect(loggedIn.status).toBe(200);
    expect(Object.keys(loggedIn.body as object)).toEqual(['success', 'token']);
    const { success, token } = loggedIn.body as { success: boolean; token: string };
    expect(success).toBe(true);

    const decoded = jwt.decode(token, { complete: true });
    expect(decoded?.header.alg).toBe('HS256');
    const payload = decoded?.payload as jwt.JwtPayload;
    const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
      `SELECT id FROM ${USERS_TABLE} WHERE email = ?`,
      [email],
    );
    expect(payload.sub).toBe(String(rows[0]?.id));
    expect(payload.email).toBe(email);
    expect(payload.exp).toBe((payload.iat ?? 0) + 3600);

    const read = await call(gw.url, 'GET', '/table/items/read?$orderby=id', {
      headers: bearer(token),
    });
    expect(read.status).toBe(200);
    expect(read.body).toEqual([
      { id: 1, name: 'first' },
      { id: 2, name: 'second' },
    ]);
  });

  test('the stored password is an argon2id PHC string, never the password', async () => {
    const email = freshEmail('hash');
    expect((await register(gw.url, email)).status).toBe(200);
    const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
      `SELECT * FROM ${USERS_TABLE} WHERE email = ?`,
      [email],
    );
    const row = rows[0] as Record<string, unknown>;
    expect(Object.keys(row)).toEqual(['id', 'email', 'password', 'role', 'created_at']);
    expect(row.password).toMatch(
      /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/,
    );
    expect(row.password).not.toContain(PASSWORD);
    expect(row.created_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });

  test('emails are trimmed and lower-cased on register and on login', async () => {
    const email = freshEmail('Case').replace('@example.com', '@Example.COM');
    expect((await register(gw.url, `  ${email} `)).body).toEqual(REGISTERED);
    const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
      `SELECT email FROM ${USERS_TABLE} WHERE email = ?`,
      [email.toLowerCase()],
    );
    expect(rows).toHaveLength(1);
    expect((await login(gw.url, email.toUpperCase())).status).toBe(200);
    const again = await register(gw.url, email.toLowerCase());
    expect(again.status).toBe(409);
  });
});

describe('POST /auth/register refusals', () => {
  test('an email already registered: 409 User already exists', async () => {
    const email = freshEmail('dup');
    expect((await register(gw.url, email)).status).toBe(200);
    const again = await register(gw.url, email, 'another password');
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      success: false,
      message: 'User already exists',
      code: 'USER_EXISTS',
    });
  });

  test('the same email registered five times at once: one 200, four 409 (the unique key decides)', async () => {
    const email = freshEmail('race');
    const answers = await Promise.all(Array.from({ length: 5 }, () => register(gw.url, email)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409]);
    const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
      `SELECT COUNT(*) AS n FROM ${USERS_TABLE} WHERE email = ?`,
      [email],
    );
    expect(Number(rows[0]?.n)).toBe(1);
  });

  const bad = (message: string) => ({ success: false, message, code: 'INVALID_BODY' });
  test.each<[string, unknown, unknown]>([
    [
      'a bad email',
      { email: 'not-an-email', password: PASSWORD },
      bad("'email' must be an email address"),
    ],
    [
      'an email over 254 characters',
      { email: `a@${'b'.repeat(250)}.com`, password: PASSWORD },
      bad("'email' must be at most 254 characters"),
    ],
    [
      'a short password',
      { email: 'short@example.com', password: '1234567' },
      bad("'password' must be 8 to 1024 characters long"),
    ],
    [
      'a long password',
      { email: 'long@example.com', password: 'p'.repeat(1025) },
      bad("'password' must be 8 to 1024 characters long"),
    ],
    ['no email', { password: PASSWORD }, bad("'email' is required")],
    ['no password', { email: 'nopass@example.com' }, bad("'password' is required")],
    ['a numeric email', { email: 12345, password: PASSWORD }, bad("'email' must be a string")],
    [
      'a numeric password',
      { email: 'num@example.com', password: 123456789 },
      bad("'password' must be a string"),
    ],
    [
      'a null password',
      { email: 'null@example.com', password: null },
      bad("'password' must be a string"),
    ],
    [
      'an array body',
      [{ email: 'arr@example.com', password: PASSWORD }],
      bad("Request body must be a JSON object with 'email' and 'password'"),
    ],
  ])('%s: 400', async (_name, json, expected) => {
    const answer = await call(gw.url, 'POST', '/auth/register', { json });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(expected);
  });

  test('a body that is not JSON: 400, or 415 for another media type', async () => {
    const broken = await call(gw.url, 'POST', '/auth/register', {
      body: '{"email": "a@b.co", ',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({
      success: false,
      message: 'Request body is not valid JSON',
      code: 'INVALID_JSON',
    });
    const form = await call(gw.url, 'POST', '/auth/register', {
      body: 'email=a@b.co&password=12345678',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(form.body).toEqual({
      success: false,
      message: "Content-Type must be 'application/json'",
      code: 'UNSUPPORTED_MEDIA_TYPE',
    });
    const empty = await call(gw.url, 'POST', '/auth/register');
    expect(empty.status).toBe(400);
    expect((empty.body as { success: boolean }).success).toBe(false);
  });

  test('nothing refused was stored', async () => {
    const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
      `SELECT email FROM ${USERS_TABLE} WHERE email IN ('short@example.com', 'long@example.com', 'nopass@example.com', 'num@example.com', 'null@example.com', 'arr@example.com')`,
    );
    expect(rows).toEqual([]);
  });
});

describe('POST /auth/login refusals', () => {
  test('a wrong password and an unknown email get the same 401', async () => {
    const email = freshEmail('wrong');
    await register(gw.url, email);
    const wrongPassword = await login(gw.url, email, 'not the password');
    const unknownEmail = await login(gw.url, freshEmail('nobody'));
    for (const answer of [wrongPassword, unknownEmail]) {
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(INVALID_CREDENTIALS);
      expect(answer.headers.get('www-authenticate')).toBeNull();
    }
    expect(wrongPassword.text).toBe(unknownEmail.text);
  });

  test('both take about the same time (the unknown email is verified against a dummy hash)', async () => {
    const email = freshEmail('timing');
    await register(gw.url, email);
    const timed = async (who: string) => {
      const start = performance.now();
      expect((await login(gw.url, who, 'not the password')).status).toBe(401);
      return performance.now() - start;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 6; i++) {
      known.push(await timed(email));
      unknown.push(await timed(freshEmail('ghost')));
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1] ?? 0;
    const ratio = median(unknown) / median(known);
    // Without the dummy hash an unknown email answers ~20 times faster than a wrong password.
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });

  test('malformed credentials are a 400, not a failed login', async () => {
    const answer = await call(gw.url, 'POST', '/auth/login', { json: { email: 'x', password: 1 } });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      success: false,
      message: "'password' must be a string",
      code: 'INVALID_BODY',
    });
  });
});

describe('failed-login limit', () => {
  test('more than 10 failures in a minute for one IP and email: 429 with Retry-After until the window passes', async () => {
    const email = freshEmail('brute');
    await register(gw.url, email);
    for (let i = 0; i < 10; i++) {
      const answer = await login(gw.url, email, `guess number ${i}`);
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(INVALID_CREDENTIALS);
    }
    const blocked = await login(gw.url, email, 'guess number 11');
    expect(blocked.status).toBe(429);
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(blocked.body).toEqual({
      success: false,
      message: `Too many failed login attempts; retry in ${retryAfter} seconds`,
      code: 'TOO_MANY_ATTEMPTS',
    });
    // Even the right password waits, and the email's case does not open a new counter.
    const right = await login(gw.url, email.toUpperCase());
    expect(right.status).toBe(429);
    expect(right.headers.get('retry-after')).toMatch(/^\d+$/);

    // Another email from the same client is not affected.
    const other = freshEmail('bystander');
    await register(gw.url, other);
    expect((await login(gw.url, other)).status).toBe(200);

    // When the window has passed, the right password works again.
    const realNow = Date.now;
    Date.now = () => realNow() + 61_000;
    try {
      expect((await login(gw.url, email)).status).toBe(200);
    } finally {
      Date.now = realNow;
    }
  });
});

describe('the guard', () => {
  let token: string;
  beforeAll(async () => {
    const email = freshEmail('guard');
    await register(gw.url, email);
    token = await tokenFor(gw.url, email);
  });

  test.each([
    ['GET', '/table/items/read'],
    ['GET', '/table/no_such_table/read'],
    ['GET', `/table/${USERS_TABLE}/read`],
    ['POST', '/table/items/create'],
    ['PUT', '/table/items/update(id,1)'],
    ['DELETE', '/table/items/delete(id,1)'],
    ['POST', '/upload'],
    ['GET', '/@/anything.png'],
    ['GET', '/openapi.json'],
    ['GET', '/no/such/route'],
    ['GET', '/auth/login'],
    ['POST', '/health'],
    ['PATCH', '/table/items/read'],
  ])('%s %s without a token: 401 Access Denied', async (method, url) => {
    expectDenied(await call(gw.url, method, url));
  });

  test('GET and HEAD /health need no token', async () => {
    const health = await call(gw.url, 'GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    expect((await call(gw.url, 'HEAD', '/health')).status).toBe(200);
  });

  const otherSecret = `${SECRET}-but-another`;
  const now = () => Math.floor(Date.now() / 1000);
  const claims = () => ({
    sub: '1',
    email: 'a@example.com',
    role: 'user',
    iat: now(),
    exp: now() + 600,
  });
  const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

  test.each<[string, () => Record<string, string>]>([
    ['no Authorization header', () => ({})],
    ['a garbage token', () => bearer('garbage')],
    ['a token signed with another secret', () => bearer(jwt.sign(claims(), otherSecret))],
    ['alg none', () => bearer(`${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims())}.`)],
    [
      'an HS512 token with our secret',
      () => bearer(jwt.sign(claims(), SECRET, { algorithm: 'HS512' })),
    ],
    ['an RS256 token', () => bearer(jwt.sign(claims(), privateKey, { algorithm: 'RS256' }))],
    [
      'an RS256 header over an HMAC with our secret',
      () => {
        const data = `${b64url({ alg: 'RS256', typ: 'JWT' })}.${b64url(claims())}`;
        return bearer(`${data}.${createHmac('sha256', SECRET).update(data).digest('base64url')}`);
      },
    ],
    [
      'an expired token signed with another secret (forged, not expired)',
      () => bearer(jwt.sign({ ...claims(), iat: now() - 120, exp: now() - 60 }, otherSecret)),
    ],
    ['a token without exp', () => bearer(jwt.sign({ sub: '1', email: 'a@example.com' }, SECRET))],
    [
      'Basic credentials',
      () => ({ authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }),
    ],
    ['Bearer with no token', () => ({ authorization: 'Bearer' })],
    ['Bearer and a space', () => ({ authorization: 'Bearer ' })],
    ['two tokens', () => ({ authorization: `Bearer ${token} ${token}` })],
    ['the token without a scheme', () => ({ authorization: token })],
    ['the token in another header', () => ({ 'x-access-token': token })],
  ])('refuses %s: 401 + WWW-Authenticate: Bearer + the exact body', async (_name, headers) => {
    expectDenied(await call(gw.url, 'GET', '/table/items/read', { headers: headers() }));
  });

  test('an expired token: the same 401 body, and RFC 6750 says it expired', async () => {
    const expired = jwt.sign({ ...claims(), iat: now() - 120, exp: now() - 60 }, SECRET);
    const answer = await call(gw.url, 'GET', '/table/items/read', { headers: bearer(expired) });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe(
      'Bearer error="invalid_token", error_description="The access token expired"',
    );
    expect(answer.body).toEqual(ACCESS_DENIED);
  });

  test('a valid token passes, and the scheme is case-insensitive (RFC 6750)', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const answer = await call(gw.url, 'GET', '/table/items/read?$top=1&$orderby=id', {
        headers: { authorization: `${scheme} ${token}` },
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual([{ id: 1, name: 'first' }]);
    }
  });

  test('with a valid token, an unknown route is the JSON 404', async () => {
    const answer = await call(gw.url, 'GET', '/no/such/route', { headers: bearer(token) });
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({
      success: false,
      message: 'No route for GET /no/such/route',
      code: 'NOT_FOUND',
    });
  });

  test('an unknown route with a JSON type and no body: 401 without a token, the 404 with one', async () => {
    const json = { 'content-type': 'application/json' };
    expectDenied(await call(gw.url, 'POST', '/no/such/route', { headers: json }));
    expectDenied(await call(gw.url, 'POST', '/no/such/route', { headers: json, body: '' }));
    for (const body of [undefined, '', '{']) {
      const answer = await call(gw.url, 'POST', '/no/such/route', {
        headers: { ...json, ...bearer(token) },
        body,
      });
      expect([answer.status, answer.body]).toEqual([
        404,
        { success: false, message: 'No route for POST /no/such/route', code: 'NOT_FOUND' },
      ]);
    }
  });

  test('the users table answers exactly as a table that does not exist, for every operation', async () => {
    const urls: [string, string][] = [
      ['GET', '/table/%s/read'],
      ['GET', '/table/%s/read?$select=email,password'],
      ['POST', '/table/%s/create'],
      ['PUT', '/table/%s/update(id,1)'],
      ['DELETE', '/table/%s/delete(id,1)'],
    ];
    for (const [method, pattern] of urls) {
      const json = method === 'POST' || method === 'PUT' ? { email: 'x@y.zz' } : undefined;
      const users = await call(gw.url, method, pattern.replace('%s', USERS_TABLE), {
        headers: bearer(token),
        json,
      });
      const missing = await call(gw.url, method, pattern.replace('%s', 'no_such_table'), {
        headers: bearer(token),
        json,
      });
      expect(missing.status).toBe(404);
      expect(users.status).toBe(404);
      expect(users.text).toBe(missing.text.replaceAll('no_such_table', USERS_TABLE));
      expect(users.text).not.toContain('argon2');
    }
  });
});

describe('the secret', () => {
  test('generated on first run into <stateDir>/jwt-secret with mode 0600, and reused after a restart', async () => {
    const stateDir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-auth-state-'));
    try {
      const email = freshEmail('restart');
      const first = await startTestGateway(db.name, { mode: 'auth', stateDir });
      let token: string;
      let secret: string;
      try {
        const file = path.join(stateDir, 'jwt-secret');
        expect((await stat(file)).mode & 0o777).toBe(0o600);
        secret = await readFile(file, 'utf8');
        expect(secret.trim()).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect((await register(first.url, email)).status).toBe(200);
        token = await tokenFor(first.url, email);
        // A token from the gateway with the configured secret is not valid here.
        expectDenied(
          await call(first.url, 'GET', '/table/items/read', {
            headers: bearer(jwt.sign(claims(), SECRET, { expiresIn: 600 })),
          }),
        );
      } finally {
        await first.close();
      }
      const second = await startTestGateway(db.name, { mode: 'auth', stateDir });
      try {
        expect(await readFile(path.join(stateDir, 'jwt-secret'), 'utf8')).toBe(secret);
        const read = await call(
          second.url,
          'GET',
          '/table/items/read?$select=id&$top=1&$orderby=id',
          {
            headers: bearer(token),
          },
        );
        expect(read.status).toBe(200);
        expect(read.body).toEqual([{ id: 1 }]);
      } finally {
        await second.close();
      }
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  const claims = () => ({ sub: '1', email: 'a@example.com' });

  test('a configured secret shorter than 32 bytes stops the start with one line', async () => {
    const attempt = startTestGateway(db.name, { mode: 'auth', jwtSecret: 'too-short' });
    await expect(attempt).rejects.toThrow(StartupError);
    await expect(
      startTestGateway(db.name, { mode: 'auth', jwtSecret: 'too-short' }),
    ).rejects.toThrow(
      'cannot set up authentication: the JWT secret (--jwt-secret / TABLEGATE_JWT_SECRET) must be at least 32 bytes; it is 9',
    );
  });

  test('--token-ttl sets exp', async () => {
    const short = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: SECRET,
      tokenTtlSeconds: 90,
    });
    try {
      const email = freshEmail('ttl');
      await register(short.url, email);
      const payload = jwt.decode(await tokenFor(short.url, email)) as jwt.JwtPayload;
      expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(90);
    } finally {
      await short.close();
    }
  });
});

describe('the users table', () => {
  test('has the columns docs/auth.md and docs/policies.md set', async () => {
    const [rows] = await db.admin.query<mysql.RowDataPacket[]>(
      `SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_KEY, EXTRA
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
        ORDER BY ORDINAL_POSITION`,
      [db.name, USERS_TABLE],
    );
    // MySQL 8 drops the display width MariaDB shows: bigint(20) unsigned.
    const type = (r: mysql.RowDataPacket) => String(r.COLUMN_TYPE).replace('bigint(20)', 'bigint');
    expect(rows.map((r) => [r.COLUMN_NAME, type(r), r.IS_NULLABLE, r.COLUMN_KEY])).toEqual([
      ['id', 'bigint unsigned', 'NO', 'PRI'],
      ['email', 'varchar(254)', 'NO', 'UNI'],
      ['password', 'varchar(255)', 'NO', ''],
      ['role', 'varchar(64)', 'NO', ''],
      ['created_at', 'timestamp', 'NO', ''],
    ]);
    expect(rows[0]?.EXTRA).toMatch(/auto_increment/i);
  });

  test('creating it twice, or from several instances at once, is harmless and keeps the users', async () => {
    const fresh = await createTestDatabase(FIXTURE);
    try {
      const gateways = await Promise.all(
        Array.from({ length: 3 }, () =>
          startTestGateway(fresh.name, { mode: 'auth', jwtSecret: SECRET }),
        ),
      );
      try {
        const email = freshEmail('concurrent');
        expect((await register(gateways[0]?.url ?? '', email)).status).toBe(200);
        expect((await register(gateways[1]?.url ?? '', email)).status).toBe(409);
        const db = await openDatabase(
          { ...testServer(), database: fresh.name, poolSize: 4 },
          { statementTimeoutMs: 30_000, stallTimeoutMs: 30_000 },
        );
        try {
          await Promise.all(Array.from({ length: 4 }, () => ensureUsersTable(db)));
          await ensureUsersTable(db);
        } finally {
          await db.close();
        }
        expect((await login(gateways[2]?.url ?? '', email)).status).toBe(200);
        const [tables] = await fresh.admin.query<mysql.RowDataPacket[]>(
          'SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME',
          [fresh.name],
        );
        expect(tables.map((t) => t.TABLE_NAME)).toEqual(['items', USERS_TABLE]);
      } finally {
        await Promise.all(gateways.map((g) => g.close()));
      }
    } finally {
      await fresh.drop();
    }
  });

  test('a table of that name without our columns stops the start with one line', async () => {
    const other = await createTestDatabase(
      `CREATE TABLE ${USERS_TABLE} (id INT PRIMARY KEY, name TEXT);`,
    );
    try {
      await expect(
        startTestGateway(other.name, { mode: 'auth', jwtSecret: SECRET }),
      ).rejects.toThrow(
        `cannot prepare table ${USERS_TABLE}: a table of that name exists without the column(s) email, password`,
      );
    } finally {
      await other.drop();
    }
  });
});

describe('open mode', () => {
  let open: TestGateway;
  let openDb: TestDatabase;
  beforeAll(async () => {
    openDb = await createTestDatabase(FIXTURE);
    open = await startTestGateway(openDb.name);
  });
  afterAll(async () => {
    await open?.close();
    await openDb?.drop();
  });

  test.each(['/auth/register', '/auth/login'])(
    'POST %s is the JSON 404 of an unknown route',
    async (url) => {
      const answer = await call(open.url, 'POST', url, {
        json: { email: 'a@b.co', password: PASSWORD },
      });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({
        success: false,
        message: `No route for POST ${url}`,
        code: 'NOT_FOUND',
      });
    },
  );

  test('no token is needed and the users table is not created', async () => {
    const read = await call(open.url, 'GET', '/table/items/read?$select=id&$orderby=id');
    expect(read.status).toBe(200);
    expect(read.body).toEqual([{ id: 1 }, { id: 2 }]);
    const [tables] = await openDb.admin.query<mysql.RowDataPacket[]>(
      'SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?',
      [openDb.name],
    );
    expect(tables.map((t) => t.TABLE_NAME)).toEqual(['items']);
  });
});
