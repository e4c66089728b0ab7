/** The pool in its two faces: callbacks for streamed reads, promises for everything else. */
import type { Pool } from 'mysql2';
import type { Pool as PromisePool } from 'mysql2/promise';
import { createPool, type DbConfig } from './pool.js';

export interface Database {
  readonly pool: Pool;
  readonly promise: PromisePool;
  close(): Promise<void>;
}

export function openDatabase(config: DbConfig): Database {
  const pool = createPool(config);
  const promise = pool.promise();
  return { pool, promise, close: () => promise.end() };
}
