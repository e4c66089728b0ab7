/**
 * The pool in its two faces (callbacks for streamed reads, promises for everything else), the
 * server's flavour (MariaDB and MySQL differ in statement time limits and JSON), and a separate
 * control connection for KILL QUERY, so a kill never waits behind the pool it is freeing.
 */
import mysql, { type Pool } from 'mysql2';
import type { Pool as PromisePool } from 'mysql2/promise';
import { createPool, type DbConfig, poolOptions } from './pool.js';

export type Flavour = 'mariadb' | 'mysql';

export interface Database {
  readonly pool: Pool;
  readonly promise: PromisePool;
  /** Known after `detectFlavour`; MySQL until then. */
  flavour: Flavour;
  /** Stops the statement running on a connection (by its thread id). */
  killQuery(threadId: number): Promise<void>;
  close(): Promise<void>;
}

export function openDatabase(config: DbConfig): Database {
  const pool = createPool(config);
  const promise = pool.promise();
  let control: PromisePool | null = null;
  const db: Database = {
    pool,
    promise,
    flavour: 'mysql',
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
  return db;
}

/** Asks the server what it is; call once after connecting. */
export async function detectFlavour(db: Database): Promise<Flavour> {
  const [rows] = await db.promise.query<mysql.RowDataPacket[]>('SELECT VERSION() AS version');
  db.flavour = /mariadb/i.test(String(rows[0]?.version)) ? 'mariadb' : 'mysql';
  return db.flavour;
}
