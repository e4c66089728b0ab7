import { connectionOptions, poolOptions } from '../../../src/db/pool.js';

const server = { host: 'h', port: 3306, user: 'u', password: '', database: 'd' };

// Issue 13, item 7: 256 statements a connection × --pool-size 64 passed MariaDB's server-wide
// max_prepared_stmt_count (16,382), after which every PREPARE of every client fails.
test.each([1, 10, 16, 17, 64, 100, 1000])(
  'pool of %d: at most 4,096 prepared statements in all, 4 to 256 a connection',
  (poolSize) => {
    const perConnection = poolOptions({ ...server, poolSize }).maxPreparedStatements as number;
    expect(perConnection).toBeGreaterThanOrEqual(4);
    expect(perConnection).toBeLessThanOrEqual(256);
    if (poolSize <= 1024) expect(perConnection * poolSize).toBeLessThanOrEqual(4096);
  },
);

test('small pools keep the full cache', () => {
  expect(connectionOptions({ ...server, poolSize: 10 }).maxPreparedStatements).toBe(256);
  expect(connectionOptions({ ...server, poolSize: 64 }).maxPreparedStatements).toBe(64);
});
