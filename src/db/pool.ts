/**
 * The MySQL connection pool. Every connection is put into the same session state before its
 * first query: UTC time zone (TIMESTAMP values are read and written in UTC, never shifted),
 * strict SQL mode (a value that does not fit is an error, never silently changed) and utf8mb4.
 * Values come back as exact text where JavaScript numbers would round (DECIMAL, BIGINT, dates).
 */
import mysql, { type ConnectionOptions, type Pool, type PoolOptions } from 'mysql2';
import {
  CONNECT_TIMEOUT_MS,
  MAX_PREPARED_STATEMENTS,
  MIN_PREPARED_STATEMENTS,
  PREPARED_STATEMENT_BUDGET,
} from '../limits.js';
import { useFasterBinaryDates } from './binary-dates.js';

/** One MySQL server's address. */
export interface DbHost {
  readonly host: string;
  readonly port: number;
}

export interface DbConfig extends DbHost {
  /**
   * `-h db1,db2:3307,…`: the hosts after the first (host, port), in order. The gateway uses one
   * host at a time and moves on when it stops answering (execute/hosts.ts).
   */
  readonly otherHosts?: readonly DbHost[];
  readonly user: string;
  readonly password: string;
  readonly database: string;
  readonly poolSize: number;
}

/** STRICT_ALL_TABLES makes bad values errors even in multi-row inserts (STRICT_TRANS_TABLES does not for non-transactional tables). */
export const SESSION_SQL_MODE =
  'STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION';

/**
 * The longest GROUP_CONCAT result (bytes): an expanded to-many relation's rows of one parent
 * row travel as one (sql/compile-read.ts). The default 1,024 would cut them; 1 GiB is the most
 * MariaDB takes (more is an error in strict mode). The real bound is the server's
 * max_allowed_packet, and a value cut short is refused (types/rows.ts).
 */
export const GROUP_CONCAT_MAX_LEN = 1_073_741_824;

/** This connection's share of PREPARED_STATEMENT_BUDGET (limits.ts). */
export function preparedStatementsPerConnection(poolSize: number): number {
  const share = Math.floor(PREPARED_STATEMENT_BUDGET / Math.max(1, poolSize));
  return Math.max(MIN_PREPARED_STATEMENTS, Math.min(MAX_PREPARED_STATEMENTS, share));
}

/** Every host of `-h`, in order: the first one, then the others. */
export function allHosts(config: DbConfig): DbHost[] {
  return [{ host: config.host, port: config.port }, ...(config.otherHosts ?? [])];
}

/** `db1:3306`, `[::1]:3306`: how a host is written in `-h` and named in messages. */
export function hostLabel({ host, port }: DbHost): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Every host of `-h` for a message: `db1:3306` or `db1:3306, db2:3306`. */
export function hostsLabel(config: DbConfig): string {
  return allHosts(config).map(hostLabel).join(', ');
}

/** Options of one connection (mysql2 warns about pool options given to a single connection). */
export function connectionOptions(config: DbConfig): ConnectionOptions {
  return {
    host: config.host,
    port: config.port,
    user: config.user,
    password: config.password,
    database: config.database,
    // A host that does not answer (a network partition) costs a request 2 s, then 503
    // (docs/errors.md).
    connectTimeout: CONNECT_TIMEOUT_MS,
    enableKeepAlive: true,
    charset: 'utf8mb4_unicode_ci',
    timezone: 'Z',
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    decimalNumbers: false,
    jsonStrings: true,
    multipleStatements: false,
    // mysql2 would capture a stack trace on every call, for errors we log without it.
    trace: false,
    // mysql2 closes a connection's least recently used statement past this.
    maxPreparedStatements: preparedStatementsPerConnection(config.poolSize),
  };
}

export function poolOptions(config: DbConfig): PoolOptions {
  return {
    ...connectionOptions(config),
    connectionLimit: config.poolSize,
    maxIdle: config.poolSize,
    waitForConnections: true,
  };
}

/** What a server is: its flavour, and the cluster it belongs to (execute/backend.ts asks). */
export interface ServerKind {
  readonly flavour: 'mariadb' | 'mysql';
  /** `galera`: MariaDB with wsrep_on; `group-replication`: MySQL with the plugin loaded. */
  readonly cluster: 'galera' | 'group-replication' | 'single';
}

/**
 * What the schema readers (schema.ts, routines.ts, schema-change.ts) ask of the database: a
 * small SELECT's rows as objects. execute/database.ts's `Database` is one; the readers name only
 * this, so db/ stays below execute/ and imports nothing of it.
 */
export interface RowReader {
  rows<T extends object = Record<string, unknown>>(query: {
    readonly sql: string;
    readonly params: readonly unknown[];
  }): Promise<T[]>;
}

/** `--read-consistency`: what a read waits for before it runs (see readConsistencySetting). */
export type ReadConsistency = 'eventual' | 'session' | 'strict';

/**
 * `--read-consistency` as a session variable, or null when there is nothing to set. Galera:
 * wsrep_sync_wait 1 makes a read wait until the node has applied every write the cluster
 * committed before it; 7 makes updates, deletes and inserts wait too. Group Replication:
 * group_replication_consistency BEFORE (reads), BEFORE_AND_AFTER (and a write returns only once
 * every member applied it). A single server always reads its own writes; `eventual` leaves the
 * server's own setting alone.
 */
export function readConsistencySetting(
  cluster: ServerKind['cluster'],
  level: ReadConsistency,
): string | null {
  if (level === 'eventual') return null;
  switch (cluster) {
    case 'galera':
      return `wsrep_sync_wait = ${level === 'session' ? 1 : 7}`;
    case 'group-replication':
      return `group_replication_consistency = '${level === 'session' ? 'BEFORE' : 'BEFORE_AND_AFTER'}'`;
    case 'single':
      return null;
  }
}

/**
 * The statements that put a new connection into our session state. The statement time limit is
 * the server's: MariaDB's max_statement_time (seconds, every statement) or MySQL's
 * max_execution_time (milliseconds, read-only SELECTs); past it the server stops the statement
 * and the request answers 504. Then `--read-consistency`, where the server has it to set.
 */
export function sessionSetup(
  server: ServerKind,
  statementTimeoutMs: number,
  readConsistency: ReadConsistency = 'eventual',
): string {
  const limit =
    server.flavour === 'mariadb'
      ? `max_statement_time = ${statementTimeoutMs / 1000}`
      : `max_execution_time = ${Math.round(statementTimeoutMs)}`;
  const consistency = readConsistencySetting(server.cluster, readConsistency);
  return `SET time_zone = '+00:00', sql_mode = '${SESSION_SQL_MODE}', NAMES utf8mb4, group_concat_max_len = ${GROUP_CONCAT_MAX_LEN}, ${limit}${consistency === null ? '' : `, ${consistency}`}`;
}

/**
 * The statement pool. Its rows come as arrays in select order (`rowsAsArray`): the row codec
 * reads them by position, and mysql2's plain `execute(sql, params)` then needs no options object
 * per statement (the object form copies and extends one on every call, as the hot path's profile
 * showed). Its dates are read by db/binary-dates.ts.
 */
export function createPool(config: DbConfig, setupSql: string): Pool {
  useFasterBinaryDates();
  const pool = mysql.createPool({ ...poolOptions(config), rowsAsArray: true });
  pool.on('connection', (connection) => {
    // Queued on the connection before anything the pool hands it out for.
    connection.query(setupSql);
  });
  return pool;
}
