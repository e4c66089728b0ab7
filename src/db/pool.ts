/**
 * The MySQL connection pool. Every connection is put into the same session state before its
 * first query: UTC time zone (TIMESTAMP values are read and written in UTC, never shifted),
 * strict SQL mode (a value that does not fit is an error, never silently changed) and utf8mb4.
 * Values come back as exact text where JavaScript numbers would round (DECIMAL, BIGINT, dates).
 */
import mysql, { type Pool, type PoolOptions } from 'mysql2';

export interface DbConfig {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly database: string;
  readonly poolSize: number;
}

/** STRICT_ALL_TABLES makes bad values errors even in multi-row inserts (STRICT_TRANS_TABLES does not for non-transactional tables). */
export const SESSION_SQL_MODE =
  'STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION';

export function poolOptions(config: DbConfig): PoolOptions {
  return {
    host: config.host,
    port: config.port,
    user: config.user,
    password: config.password,
    database: config.database,
    connectionLimit: config.poolSize,
    maxIdle: config.poolSize,
    waitForConnections: true,
    connectTimeout: 5000,
    enableKeepAlive: true,
    charset: 'utf8mb4_unicode_ci',
    timezone: 'Z',
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    decimalNumbers: false,
    jsonStrings: true,
    multipleStatements: false,
    // Prepared statements are per connection and the server's total (max_prepared_stmt_count,
    // 16382 by default) is shared by every client; mysql2 closes the least recently used past this.
    maxPreparedStatements: 256,
  };
}

export function createPool(config: DbConfig): Pool {
  const pool = mysql.createPool(poolOptions(config));
  pool.on('connection', (connection) => {
    // Queued on the connection before anything the pool hands it out for.
    connection.query(`SET time_zone = '+00:00', sql_mode = '${SESSION_SQL_MODE}', NAMES utf8mb4`);
  });
  return pool;
}
