/**
 * A statement under a time limit of its own instead of the session's (db/pool.ts sets the
 * session's to `--query-timeout`): MariaDB's `SET STATEMENT max_statement_time = s FOR …`, for
 * any statement; MySQL's MAX_EXECUTION_TIME optimizer hint, which like MySQL's session limit
 * applies to SELECT only (other statements are left as they are). The limit is a number of ours,
 * never text from a request.
 */
import type { ServerKind } from '../db/pool.js';
import type { CompiledQuery } from '../sql/compiled-query.js';

export function withTimeLimit(
  flavour: ServerKind['flavour'],
  query: CompiledQuery,
  ms: number,
): CompiledQuery {
  if (flavour === 'mariadb') {
    return {
      sql: `SET STATEMENT max_statement_time = ${ms / 1000} FOR ${query.sql}`,
      params: query.params,
    };
  }
  if (!query.sql.startsWith('SELECT ')) return query;
  return {
    sql: `SELECT /*+ MAX_EXECUTION_TIME(${Math.round(ms)}) */ ${query.sql.slice('SELECT '.length)}`,
    params: query.params,
  };
}
