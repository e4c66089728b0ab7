import {
  allHosts,
  connectionOptions,
  hostLabel,
  hostsLabel,
  poolOptions,
  type ReadConsistency,
  SESSION_SQL_MODE,
  type ServerKind,
  sessionSetup,
} from '../../../src/db/pool.js';

const server = { host: 'h', port: 3306, user: 'u', password: '', database: 'd' };

// 256 statements a connection × --pool-size 64 passed MariaDB's server-wide
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

describe('session setup: the time limit, then --read-consistency where there is something to set', () => {
  const base = `SET time_zone = '+00:00', sql_mode = '${SESSION_SQL_MODE}', NAMES utf8mb4, group_concat_max_len = 1073741824`;
  test.each<[ServerKind['flavour'], ServerKind['cluster'], ReadConsistency, string]>([
    ['mariadb', 'single', 'eventual', `${base}, max_statement_time = 30`],
    ['mariadb', 'single', 'session', `${base}, max_statement_time = 30`],
    ['mariadb', 'single', 'strict', `${base}, max_statement_time = 30`],
    ['mariadb', 'galera', 'eventual', `${base}, max_statement_time = 30`],
    ['mariadb', 'galera', 'session', `${base}, max_statement_time = 30, wsrep_sync_wait = 1`],
    ['mariadb', 'galera', 'strict', `${base}, max_statement_time = 30, wsrep_sync_wait = 7`],
    ['mysql', 'single', 'session', `${base}, max_execution_time = 30000`],
    ['mysql', 'group-replication', 'eventual', `${base}, max_execution_time = 30000`],
    [
      'mysql',
      'group-replication',
      'session',
      `${base}, max_execution_time = 30000, group_replication_consistency = 'BEFORE'`,
    ],
    [
      'mysql',
      'group-replication',
      'strict',
      `${base}, max_execution_time = 30000, group_replication_consistency = 'BEFORE_AND_AFTER'`,
    ],
  ])('%s, %s, %s', (flavour, cluster, level, sql) => {
    expect(sessionSetup({ flavour, cluster }, 30_000, level)).toBe(sql);
  });

  test('eventual when not given', () => {
    expect(sessionSetup({ flavour: 'mariadb', cluster: 'galera' }, 1500)).toBe(
      `${base}, max_statement_time = 1.5`,
    );
  });
});

test('the hosts of -h, and how messages name them', () => {
  const config = {
    ...server,
    poolSize: 1,
    otherHosts: [
      { host: '::1', port: 3307 },
      { host: 'db2', port: 3308 },
    ],
  };
  expect(allHosts(config)).toEqual([
    { host: 'h', port: 3306 },
    { host: '::1', port: 3307 },
    { host: 'db2', port: 3308 },
  ]);
  expect(hostsLabel(config)).toBe('h:3306, [::1]:3307, db2:3308');
  expect(hostsLabel({ ...server, poolSize: 1 })).toBe('h:3306');
  expect(hostLabel({ host: 'fe80::1', port: 1 })).toBe('[fe80::1]:1');
});
