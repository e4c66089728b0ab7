/**
 * Per-address bounds on the argon2 work one client can cause (docs/auth.md): more than 60
 * registrations, or more than 100 failed logins over any emails, in a minute from one IP → 429.
 * Each test has a gateway of its own, so the counters start at zero.
 */
import { DEFAULTS } from '../../src/config.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postCredentials as post, startTestGateway } from '../helpers/gateway.js';
import { countStatuses, rawRequest } from '../helpers/raw-http.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
});
afterAll(async () => {
  await db.drop();
});

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

/**
 * The limits once held one request at a time but not for a parallel burst, which all
 * passed the check before any failure was counted (299 × 401 and the password found).
 */
describe('limits hold under a burst of parallel requests', () => {
  const login = (url: string, email: string, password: string, localAddress?: string) =>
    rawRequest(`${url}/auth/login`, { json: { email, password }, localAddress });

  /** Sequential wrong logins until the first 429; the number of 401s before it. */
  async function failuresUntilRefused(url: string, email: (i: number) => string) {
    for (let i = 0; ; i++) {
      const answer = await login(url, email(i), 'still the wrong password');
      if (answer.status === 429) return { failures: i, refusal: answer };
      expect(answer.status).toBe(401);
    }
  }

  test('300 parallel guesses for one email: at most 10 are checked, the rest are 429', async () => {
    const gw = await startTestGateway(db.name, { mode: 'auth', jwtSecret: 'b'.repeat(32) });
    try {
      expect(
        (await post(gw.url, '/auth/register', 'target@example.com', 'the password')).status,
      ).toBe(200);
      const answers = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          login(gw.url, 'target@example.com', i === 150 ? 'the password' : `wrong guess ${i}`),
        ),
      );
      const counts = countStatuses(answers);
      expect(Object.keys(counts).every((s) => ['200', '401', '429'].includes(s))).toBe(true);
      const failed = counts[401] ?? 0;
      expect(failed).toBeGreaterThanOrEqual(1);
      expect(failed).toBeLessThanOrEqual(10);
      expect(counts[429]).toBeGreaterThanOrEqual(289);
      // The burst and the requests after it together had exactly 10 failures checked.
      const after = await failuresUntilRefused(gw.url, () => 'target@example.com');
      expect(failed + after.failures).toBe(10);
      expect((after.refusal.body as { code: string }).code).toBe('TOO_MANY_ATTEMPTS');
    } finally {
      await gw.close();
    }
  });

  test('300 parallel failed logins over many emails from one address: at most 100 are checked', async () => {
    const gw = await startTestGateway(db.name, { mode: 'auth', jwtSecret: 'c'.repeat(32) });
    try {
      const answers = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          login(gw.url, `burst${i}@example.com`, 'wrong password'),
        ),
      );
      const counts = countStatuses(answers);
      const failed = counts[401] ?? 0;
      expect(failed + (counts[429] ?? 0)).toBe(300);
      expect(failed).toBeLessThanOrEqual(100);
      const after = await failuresUntilRefused(gw.url, (i) => `after${i}@example.com`);
      expect(failed + after.failures).toBe(100);
      expect((after.refusal.body as { code: string }).code).toBe('TOO_MANY_REQUESTS');
    } finally {
      await gw.close();
    }
  });

  /** Item 2: valid logins were never limited; 1,000 at once made another user wait 14 s. */
  test('1,000 parallel valid logins from one address: most refused at once, another user still logs in', async () => {
    const gw = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: 'd'.repeat(32),
      maxClientRequests: DEFAULTS.maxClientRequests,
    });
    try {
      for (const email of ['busy@example.com', 'bystander@example.com']) {
        expect((await post(gw.url, '/auth/register', email, 'the password')).status).toBe(200);
      }
      let answered = 0;
      const flood = Array.from({ length: 1000 }, () =>
        login(gw.url, 'busy@example.com', 'the password').then((answer) => {
          answered++;
          return answer;
        }),
      );
      const other = await login(gw.url, 'bystander@example.com', 'the password', '127.0.0.2');
      const answers = await Promise.all(flood);
      expect(other.status).toBe(200);
      const counts = countStatuses(answers);
      expect((counts[200] ?? 0) + (counts[429] ?? 0)).toBe(1000);
      // Refused without any argon2 work: far more than could have been hashed meanwhile.
      expect(counts[429]).toBeGreaterThan(500);
      const refused = answers.find((a) => a.status === 429);
      expect(['TOO_MANY_ATTEMPTS', 'TOO_MANY_CONCURRENT_REQUESTS']).toContain(
        (refused?.body as { code?: string } | undefined)?.code,
      );
      expect(answered).toBe(1000);
    } finally {
      await gw.close();
    }
  });
});
