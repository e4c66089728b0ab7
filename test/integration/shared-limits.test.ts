/**
 * With --redis-url (docs/operations.md) every gateway of one database counts a client together, so
 * failures spread over two gateways meet the limits at the documented count (docs/auth.md: 10 per
 * address and email, 100 failed logins and 60 registrations per address, 8 password hashes running
 * or waiting per address); without it each gateway counts alone. Two gateways, one database, one
 * Redis.
 */
import { Redis } from 'ioredis';
import { ARGON2_PER_CLIENT } from '../../src/limits.js';
import { KEY_PREFIX } from '../../src/throttle/redis-counter-store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postCredentials as post, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { deleteRedisKeys, testRedisUrl } from '../helpers/redis.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
});
afterAll(async () => {
  await deleteRedisKeys(db.name);
  await db.drop();
});

/** Two auth-mode gateways of the test database, sharing `redisUrl` when given. */
async function twoGateways(redisUrl: string | null): Promise<[TestGateway, TestGateway]> {
  const settings = { mode: 'auth' as const, jwtSecret: 's'.repeat(32), redisUrl };
  return [await startTestGateway(db.name, settings), await startTestGateway(db.name, settings)];
}

async function closeAll(gateways: TestGateway[]) {
  await Promise.all(gateways.map((gw) => gw.close()));
}

/** `count` requests one after another; their statuses. */
async function statuses(count: number, request: (i: number) => Promise<{ status: number }>) {
  const answers: number[] = [];
  for (let i = 0; i < count; i++) answers.push((await request(i)).status);
  return answers;
}

describe('with --redis-url', () => {
  beforeEach(async () => {
    await deleteRedisKeys(db.name);
  });

  test('10 failed logins for one email spread over two gateways: the 11th is 429 on both', async () => {
    const gateways = await twoGateways(testRedisUrl());
    const [a, b] = gateways;
    try {
      const wrong = (url: string) => () =>
        post(url, '/auth/login', 'victim@example.com', 'wrong password');
      expect(await statuses(6, wrong(a.url))).toEqual(Array(6).fill(401));
      expect(await statuses(4, wrong(b.url))).toEqual(Array(4).fill(401));
      for (const gw of [b, a]) {
        const refused = await wrong(gw.url)();
        expect(refused.status).toBe(429);
        const retryAfter = Number(refused.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
        expect(refused.body).toEqual({
          success: false,
          message: `Too many failed login attempts; retry in ${retryAfter} seconds`,
          code: 'TOO_MANY_ATTEMPTS',
        });
      }
      // Another email from the same address is not held back by that one.
      expect((await post(a.url, '/auth/login', 'other@example.com', 'wrong password')).status).toBe(
        401,
      );
    } finally {
      await closeAll(gateways);
    }
  });

  test('a successful login takes its attempt back on every gateway', async () => {
    const gateways = await twoGateways(testRedisUrl());
    const [a, b] = gateways;
    try {
      expect((await post(a.url, '/auth/register', 'ok@example.com', 'the password')).status).toBe(
        200,
      );
      const login = (url: string, password: string) =>
        post(url, '/auth/login', 'ok@example.com', password);
      expect(await statuses(9, () => login(a.url, 'wrong password'))).toEqual(Array(9).fill(401));
      // Ten successes add nothing: the 10th failure is still allowed, the 11th is not.
      expect(await statuses(10, (i) => login(i % 2 ? a.url : b.url, 'the password'))).toEqual(
        Array(10).fill(200),
      );
      expect((await login(b.url, 'wrong password')).status).toBe(401);
      expect((await login(a.url, 'wrong password')).status).toBe(429);
    } finally {
      await closeAll(gateways);
    }
  });

  test('100 failed logins over many emails spread over two gateways: the 101st is 429', async () => {
    const gateways = await twoGateways(testRedisUrl());
    const [a, b] = gateways;
    try {
      const failures = await statuses(100, (i) =>
        post(i % 2 ? a.url : b.url, '/auth/login', `spread${i}@example.com`, 'wrong password'),
      );
      expect(failures).toEqual(Array(100).fill(401));
      const refused = await post(a.url, '/auth/login', 'one-more@example.com', 'wrong password');
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('TOO_MANY_REQUESTS');
    } finally {
      await closeAll(gateways);
    }
  }, 120_000);

  test('60 registrations spread over two gateways: the 61st is 429', async () => {
    const gateways = await twoGateways(testRedisUrl());
    const [a, b] = gateways;
    try {
      const made = await statuses(60, (i) =>
        post(i % 2 ? a.url : b.url, '/auth/register', `reg${i}@example.com`, 'long enough'),
      );
      expect(made).toEqual(Array(60).fill(200));
      const refused = await post(b.url, '/auth/register', 'reg60@example.com', 'long enough');
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('TOO_MANY_REQUESTS');
    } finally {
      await closeAll(gateways);
    }
  }, 120_000);
});

test('without --redis-url each gateway counts alone: 6 + 5 failures for one email, no 429', async () => {
  const gateways = await twoGateways(null);
  const [a, b] = gateways;
  try {
    const wrong = (url: string) => () =>
      post(url, '/auth/login', 'alone@example.com', 'wrong password');
    expect(await statuses(6, wrong(a.url))).toEqual(Array(6).fill(401));
    expect(await statuses(5, wrong(b.url))).toEqual(Array(5).fill(401));
    // Each still holds its own limit: B's 10th failure is allowed, its 11th is not.
    expect(await statuses(5, wrong(b.url))).toEqual(Array(5).fill(401));
    expect((await wrong(b.url)()).status).toBe(429);
  } finally {
    await closeAll(gateways);
  }
});

test('Redis gone while running: logins still answer, limited per gateway', async () => {
  // A gateway started with Redis whose connection is then cut is the store's own test
  // (redis-counter-store.test.ts); here the gateway's side: closing the store's connection.
  const [a, b] = await twoGateways(testRedisUrl());
  await b.close();
  try {
    await a.gateway.counters?.close();
    const wrong = () => post(a.url, '/auth/login', 'outage@example.com', 'wrong password');
    expect(await statuses(10, wrong)).toEqual(Array(10).fill(401));
    expect((await wrong()).status).toBe(429);
  } finally {
    await a.close();
  }
});

const CONCURRENT = {
  success: false,
  message: 'Too many requests from this address at once; retry in 1 second',
  code: 'TOO_MANY_CONCURRENT_REQUESTS',
};

/** The Redis counter of argon2 work for the test's address (0 when there is none). */
async function argon2Count(): Promise<number> {
  const client = new Redis(testRedisUrl());
  try {
    const keys = await client.keys(`${KEY_PREFIX}${db.name}:argon2*`);
    const values = await Promise.all(keys.map((key) => client.get(key)));
    return values.reduce((sum, value) => sum + Number(value ?? 0), 0);
  } finally {
    client.disconnect();
  }
}

/**
 * Logins held inside their argon2 slot: the users table is write-locked by the test, so each
 * login's user lookup (which runs inside the slot, before the hash) waits until `release()`.
 */
async function heldLogins(
  spread: [TestGateway, number][],
  counted: (sent: number) => Promise<void>,
): Promise<{ status: number; body: unknown }[]> {
  // Auth mode made the table at start.
  await db.admin.query('LOCK TABLES users_created_by_tablegate WRITE');
  const answers: Promise<{ status: number; body: unknown }>[] = [];
  try {
    for (const [gw, count] of spread) {
      for (let i = 0; i < count; i++) {
        answers.push(
          post(gw.url, '/auth/login', `held${answers.length}@example.com`, 'wrong password'),
        );
      }
      await counted(answers.length);
    }
    // The refused ones answer while the others still wait.
    await new Promise((resolve) => setTimeout(resolve, 300));
  } finally {
    await db.admin.query('UNLOCK TABLES');
  }
  return Promise.all(answers);
}

const statusesOf = (answers: { status: number }[]) =>
  answers.reduce<Record<number, number>>((tally, { status }) => {
    tally[status] = (tally[status] ?? 0) + 1;
    return tally;
  }, {});

test(`with --redis-url: ${ARGON2_PER_CLIENT} hashes per address across both gateways; 6 held on one, 6 more on the other: 4 are 429`, async () => {
  await deleteRedisKeys(db.name);
  const gateways = await twoGateways(testRedisUrl());
  const [a, b] = gateways;
  try {
    const answers = await heldLogins(
      [
        [a, 6],
        [b, 6],
      ],
      async (sent) => {
        // Wait until every login sent so far holds its share in Redis (at most the cap).
        const deadline = Date.now() + 5000;
        const want = Math.min(sent, ARGON2_PER_CLIENT);
        while ((await argon2Count()) < want && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      },
    );
    expect(statusesOf(answers)).toEqual({ 401: ARGON2_PER_CLIENT, 429: 12 - ARGON2_PER_CLIENT });
    for (const refused of answers.filter((answer) => answer.status === 429)) {
      expect(refused.body).toEqual(CONCURRENT);
    }
    // Every share was given back.
    expect(await argon2Count()).toBe(0);
  } finally {
    await closeAll(gateways);
  }
});

test('without --redis-url each gateway gives an address its own 8 hashes: 6 + 6 held, none refused', async () => {
  const gateways = await twoGateways(null);
  const [a, b] = gateways;
  try {
    const answers = await heldLogins(
      [
        [a, 6],
        [b, 6],
      ],
      () => new Promise((resolve) => setTimeout(resolve, 300)),
    );
    expect(statusesOf(answers)).toEqual({ 401: 12 });
  } finally {
    await closeAll(gateways);
  }
});
