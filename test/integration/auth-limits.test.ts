/**
 * Per-address bounds on the argon2 work one client can cause (issue 4's follow-up): more than 60
 * registrations, or more than 100 failed logins over any emails, in a minute from one IP → 429.
 * Each test has a gateway of its own, so the counters start at zero.
 */
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway } from '../helpers/gateway.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
});
afterAll(async () => {
  await db.drop();
});

async function post(url: string, path: string, email: string, password: string) {
  const response = await fetch(url + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

test('the 61st registration in a minute from one address is refused with 429', async () => {
  const gw = await startTestGateway(db.name, { mode: 'auth', jwtSecret: 'r'.repeat(32) });
  try {
    for (let i = 0; i < 60; i++) {
      expect(
        (await post(gw.url, '/auth/register', `reg${i}@example.com`, 'long enough')).status,
      ).toBe(200);
    }
    const refused = await post(gw.url, '/auth/register', 'reg60@example.com', 'long enough');
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(refused.body).toEqual({
      success: false,
      message: `Too many registrations or failed logins from this address; retry in ${retryAfter} seconds`,
      code: 'TOO_MANY_REQUESTS',
    });
    // Invalid input is a 400 and not counted; logins are not affected.
    expect((await post(gw.url, '/auth/register', 'bad', 'x')).status).toBe(400);
    expect((await post(gw.url, '/auth/login', 'reg1@example.com', 'long enough')).status).toBe(200);
  } finally {
    await gw.close();
  }
});

test('more than 100 failed logins over many emails from one address: 429 before any password check', async () => {
  const gw = await startTestGateway(db.name, { mode: 'auth', jwtSecret: 'f'.repeat(32) });
  try {
    for (let i = 0; i < 100; i++) {
      const answer = await post(gw.url, '/auth/login', `nobody${i}@example.com`, 'wrong password');
      expect(answer.status).toBe(401);
    }
    const refused = await post(gw.url, '/auth/login', 'nobody-else@example.com', 'wrong password');
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('TOO_MANY_REQUESTS');
  } finally {
    await gw.close();
  }
});
