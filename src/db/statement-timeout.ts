/**
 * Puts a time limit on a SELECT, enforced by the server (it stops the statement; the client
 * gets an error, mapped to 504). MariaDB: `SET STATEMENT max_statement_time=<s> FOR …` (seconds,
 * fractions allowed). MySQL: the optimizer hint `SELECT /*+ MAX_EXECUTION_TIME(<ms>) *\/ …`,
 * which applies to read-only SELECTs only. The limit comes from configuration, never a request.
 */
import type { CompiledQuery } from '../sql/compiled-query.js';
import type { Flavour } from './database.js';

export function withStatementTimeout(
  query: CompiledQuery,
  flavour: Flavour,
  timeoutMs: number,
): CompiledQuery {
  const ms = Math.max(1, Math.floor(timeoutMs));
  if (flavour === 'mariadb') {
    return {
      sql: `SET STATEMENT max_statement_time=${ms / 1000} FOR ${query.sql}`,
      params: query.params,
    };
  }
  return {
    sql: query.sql.replace(/^SELECT /, `SELECT /*+ MAX_EXECUTION_TIME(${ms}) */ `),
    params: query.params,
  };
}
