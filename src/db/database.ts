/**
 * The pool in its two faces (callbacks for streamed reads, promises for everything else), the
 * server's flavour (MariaDB and MySQL differ in statement time limits and JSON), and a separate
 * control connection for KILL QUERY, so a kill never waits behind the pool it is freeing.
 */
import mysql, { type Pool, type RowDataPacket } from 'mysql2';
import type { Pool as PromisePool } from 'mysql2/promise';
import { connectionOptions, createPool, type DbConfig, poolOptions, sessionSetup } from './pool.js';

export type Flavour = 'mariadb' | 'mysql';

export interface Database {
  readonly pool: Pool;
  readonly promise: PromisePool;
  readonly flavour: Flavour;
  /** Stops the statement running on a connection (by its thread id). */
  killQuery(threadId: number): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** The server stops any statement running longer (504). */
  readonly statementTimeoutMs: number;
}

/** Asks the server what it is, on a connection of its own; also proves the login works. */
async function detectFlavour(config: DbConfig): Promise<Flavour> {
  const probe = mysql.createConnection(connectionOptions(config)).promise();
  try {
    const [rows] = await probe.query<RowDataPacket[]>('SELECT VERSION() AS version');
    return /mariadb/i.test(String(rows[0]?.version)) ? 'mariadb' : 'mysql';
  } finally {
    probe.destroy();
  }
}

/** Connects (rejecting with the driver's error when it cannot) and opens the pool. */
export async function openDatabase(config: DbConfig, options: DatabaseOptions): Promise<Database> {
  const flavour = await detectFlavour(config);
  const pool = createPool(config, sessionSetup(flavour, options.statementTimeoutMs));
  const promise = pool.promise();
  let control: PromisePool | null = null;
  return {
    pool,
    promise,
    flavour,
    killQuery: async (threadId) => {
      control ??= mysql
        .createPool({ ...poolOptions(config), connectionLimit: 1, maxIdle: 1 })
        .promise();
      await control.query('KILL QUERY ?', [threadId]);
    },
    close: async () => {
      await Promise.all([promise.end(), control?.end()]);
    },
  };
}
