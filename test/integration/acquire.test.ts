/**
 * The bound on waiting for a pool connection (src/execute/acquire.ts), on a real pool of one
 * connection to the test server: a live but busy server answers DATABASE_BUSY after the wait
 * limit, one that does not answer its ping DATABASE_UNAVAILABLE after the alive check, and a
 * connection that arrives after the wait was given up goes back to the pool.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import mysql, { type Pool, type PoolConnection } from 'mysql2';
import { Acquirer } from '../../src/execute/acquire.js';
import { ALIVE_CHECK_MS, WAIT_SWEEP_MS } from '../../src/limits.js';
import { testServer } from '../helpers/mysql-url.js';

let pool: Pool;

beforeAll(() => {
  pool = mysql.createPool({ ...testServer(), connectionLimit: 1, maxIdle: 1 });
});

afterAll(async () => {
  await pool.promise().end();
});

/** Acquirer.lend as a promise. */
function acquire(acquirer: Acquirer): Promise<PoolConnection> {
  return new Promise((resolve, reject) => {
    acquirer.lend((error, connection) => (connection ? resolve(connection) : reject(error)));
  });
}

function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'resolved',
    (error: { code?: string }) => String(error.code),
  );
}

test('an idle connection is handed over at once, and handed over again after release', async () => {
  const acquirer = new Acquirer(pool, { isAlive: async () => true, maxWaitMs: 5000 });
  for (let round = 0; round < 3; round++) {
    const started = Date.now();
    const connection = await acquire(acquirer);
    expect(Date.now() - started).toBeLessThan(WAIT_SWEEP_MS);
    connection.release();
  }
  acquirer.close();
});

test('a live but busy server: DATABASE_BUSY after the wait limit; the late connection goes back', async () => {
  let asked = 0;
  const acquirer = new Acquirer(pool, {
    isAlive: async () => {
      asked++;
      return true;
    },
    maxWaitMs: 300,
  });
  const held = await acquire(acquirer); // the pool's only connection
  const started = Date.now();
  expect(await codeOf(acquire(acquirer))).toBe('DATABASE_BUSY');
  const waited = Date.now() - started;
  expect(waited).toBeGreaterThanOrEqual(300);
  expect(waited).toBeLessThan(300 + 2 * WAIT_SWEEP_MS + 200);
  expect(asked).toBe(0); // 300 ms is under the alive check
  held.release(); // the given-up wait receives it now and must give it back
  const again = await acquire(acquirer);
  again.release();
  acquirer.close();
});

test('a server that does not answer its ping: DATABASE_UNAVAILABLE after the alive check, asked once', async () => {
  for (const isAlive of [async () => false, async () => Promise.reject(new Error('no answer'))]) {
    let asked = 0;
    const acquirer = new Acquirer(pool, {
      isAlive: () => {
        asked++;
        return isAlive();
      },
      maxWaitMs: 10_000,
    });
    const held = await acquire(acquirer); // the pool's only connection
    const started = Date.now();
    const waits = [acquire(acquirer), acquire(acquirer)];
    expect(await Promise.all(waits.map(codeOf))).toEqual([
      'DATABASE_UNAVAILABLE',
      'DATABASE_UNAVAILABLE',
    ]);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(ALIVE_CHECK_MS);
    expect(waited).toBeLessThan(ALIVE_CHECK_MS + 2 * WAIT_SWEEP_MS + 300);
    expect(asked).toBe(2); // once per wait, not once per sweep
    held.release();
    const again = await acquire(acquirer);
    again.release();
    acquirer.close();
  }
});

test('waits that began at different times each end after their own bound, in the order they began', async () => {
  const acquirer = new Acquirer(pool, { isAlive: async () => true, maxWaitMs: 300 });
  const held = await acquire(acquirer); // the pool's only connection
  const started = Date.now();
  const ended: number[] = [];
  const waits: Promise<string>[] = [];
  for (let i = 0; i < 4; i++) {
    waits.push(
      codeOf(acquire(acquirer)).then((code) => {
        ended.push(i);
        return `${code} after ${Date.now() - started >= 300 + i * 100 ? 'its bound' : 'too little'}`;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(await Promise.all(waits)).toEqual(Array(4).fill('DATABASE_BUSY after its bound'));
  expect(ended).toEqual([0, 1, 2, 3]);
  // Each given-up wait hands its late connection straight back: the next one gets it at once.
  held.release();
  const again = await acquire(acquirer);
  again.release();
  acquirer.close();
});
