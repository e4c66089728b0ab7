/**
 * Basic authentication on `/odata/` (docs/odata-batch.md, "Basic authentication"): an own
 * user's email and password let a BI tool in on OData routes only; a wrong password is the
 * login's 401 and counts as a failed login (429 past the limit); a 401 on `/odata/` offers
 * Basic; a verified credential is remembered (it passes while the login itself is throttled,
 * so no password check ran) and forgotten when the user's password changes;
 * `--odata-basic off` refuses it.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postCredentials, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SCHEMA = 'CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(20) NULL);';
const SECRET = 'odata-basic-secret-0123456789abcdefghijklmn';
const PASSWORD = 'correct horse battery';

let db: TestDatabase;
let gw: TestGateway;
let off: TestGateway;

const basic = (email: string, password: string) =>
  `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`;

const CREATE = JSON.stringify({
  requests: [
    { id: '1', method: 'POST', url: 'orders', body: { note: 'basic' }, atomicityGroup: 'g' },
  ],
});

async function batch(on: TestGateway, authorization?: string) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (authorization !== undefined) headers.Authorization = authorization;
  const response = await fetch(`${on.url}/odata/$batch`, { method: 'POST', headers, body: CREATE });
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    body: (await response.json()) as Record<string, unknown>,
  };
}

beforeAll(async () => {
  db = await createTestDatabase(SCHEMA);
  gw = await startTestGateway(db.name, { mode: 'auth', jwtSecret: SECRET });
  off = await startTestGateway(db.name, { mode: 'auth', jwtSecret: SECRET, odataBasic: 'off' });
  for (const email of ['ann@example.com', 'bo@example.com', 'cy@example.com']) {
    const made = await postCredentials(gw.url, '/auth/register', email, PASSWORD);
    expect(made.status).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await off?.close();
  await gw?.close();
  await db?.drop();
});

describe('Basic on /odata/', () => {
  test('the right password lets the request in; its change set runs as the user', async () => {
    const answer = await batch(gw, basic('ann@example.com', PASSWORD));
    expect(answer.status).toBe(200);
    const [first] = answer.body.responses as { status: number }[];
    expect(first?.status).toBe(201);
  });

  test('a wrong password is the login 401, offering Basic; no credential offers it too', async () => {
    const wrong = await batch(gw, basic('ann@example.com', 'not the password'));
    expect(wrong).toEqual({
      status: 401,
      challenge: 'Basic realm="tablegate", Bearer',
      body: { error: { code: 'INVALID_CREDENTIALS', message: 'Invalid email or password' } },
    });
    const unknown = await batch(gw, basic('nobody@example.com', PASSWORD));
    expect(unknown.status).toBe(401);
    expect((unknown.body.error as { code: string }).code).toBe('INVALID_CREDENTIALS');
    const none = await batch(gw);
    expect(none).toEqual({
      status: 401,
      challenge: 'Basic realm="tablegate", Bearer',
      body: { error: { code: 'ACCESS_DENIED', message: 'Access Denied' } },
    });
    const malformed = await batch(gw, 'Basic !!!');
    expect(malformed.status).toBe(401);
  });

  test('never accepted on another route', async () => {
    const response = await fetch(`${gw.url}/table/orders/read`, {
      headers: { Authorization: basic('ann@example.com', PASSWORD) },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(await response.json()).toEqual({
      success: false,
      message: 'Access Denied',
      code: 'ACCESS_DENIED',
    });
  });

  test('failures count as failed logins: past 10, 429 — and a remembered credential still passes', async () => {
    // bo's right password once: remembered.
    expect((await batch(gw, basic('bo@example.com', PASSWORD))).status).toBe(200);
    for (let i = 0; i < 10; i++) {
      expect((await batch(gw, basic('bo@example.com', `wrong ${i}`))).status).toBe(401);
    }
    const throttled = await batch(gw, basic('bo@example.com', 'wrong again'));
    expect(throttled.status).toBe(429);
    expect((throttled.body.error as { code: string }).code).toBe('TOO_MANY_ATTEMPTS');
    // The login itself is throttled for bo now, shared with /auth/login…
    const login = await postCredentials(gw.url, '/auth/login', 'bo@example.com', PASSWORD);
    expect(login.status).toBe(429);
    // …yet the remembered credential passes: no login (and no argon2) ran for it.
    expect((await batch(gw, basic('bo@example.com', PASSWORD))).status).toBe(200);
  });

  test('a new password forgets the remembered credential', async () => {
    expect((await batch(gw, basic('cy@example.com', PASSWORD))).status).toBe(200);
    const login = await postCredentials(gw.url, '/auth/login', 'cy@example.com', PASSWORD);
    const token = (login.body as { token: string }).token;
    const changed = await fetch(`${gw.url}/auth/password`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ old_password: PASSWORD, new_password: 'a brand new password' }),
    });
    expect(changed.status).toBe(200);
    const old = await batch(gw, basic('cy@example.com', PASSWORD));
    expect(old.status).toBe(401);
    expect((old.body.error as { code: string }).code).toBe('INVALID_CREDENTIALS');
    expect((await batch(gw, basic('cy@example.com', 'a brand new password'))).status).toBe(200);
  });

  test('--odata-basic off refuses Basic, offering Bearer only', async () => {
    const refused = await batch(off, basic('ann@example.com', PASSWORD));
    expect(refused).toEqual({
      status: 401,
      challenge: 'Bearer',
      body: { error: { code: 'ACCESS_DENIED', message: 'Access Denied' } },
    });
  });
});
