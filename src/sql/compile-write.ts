/**
 * Write plans → `{ sql, params }` for INSERT, UPDATE and DELETE. Names enter the text only
 * through quoteIdent (and only names the plan resolved against the schema); every value is a `?`
 * parameter; a column an inserted row leaves out is the SQL keyword DEFAULT. Knows no HTTP.
 */

import type { ColumnInfo } from '../db/schema-types.js';
import type { PlannedFilter } from '../plan/read-plan.js';
import type {
  DeletePlan,
  InsertPlan,
  KeyMatch,
  PlannedCell,
  UpdatePlan,
} from '../plan/write-plan.js';
import { compileFilter, compileValue } from './compile-read.js';
import type { CompiledQuery } from './compiled-query.js';
import { quoteIdent } from './quote.js';

/** The most `?` a prepared statement may have (the protocol counts them in 16 bits). */
export const MAX_PLACEHOLDERS = 65_535;

/** One multi-row INSERT of every row of the plan. */
export function compileInsert(plan: InsertPlan): CompiledQuery {
  return insertStatement(plan, plan.rows);
}

/**
 * The plan's rows as as few INSERTs as the placeholder limit allows, in row order: one statement
 * unless rows × columns exceeds `maxPlaceholders`. Run them in one transaction.
 */
export function compileInsertBatches(
  plan: InsertPlan,
  maxPlaceholders = MAX_PLACEHOLDERS,
): CompiledQuery[] {
  const statements: CompiledQuery[] = [];
  let batch: (readonly PlannedCell[])[] = [];
  let placeholders = 0;
  for (const row of plan.rows) {
    const count = row.filter((cell) => cell.kind === 'value').length;
    if (batch.length > 0 && placeholders + count > maxPlaceholders) {
      statements.push(insertStatement(plan, batch));
      batch = [];
      placeholders = 0;
    }
    batch.push(row);
    placeholders += count;
  }
  if (batch.length > 0) statements.push(insertStatement(plan, batch));
  return statements;
}

function insertStatement(
  plan: InsertPlan,
  rows: readonly (readonly PlannedCell[])[],
): CompiledQuery {
  const params: unknown[] = [];
  const columns = plan.columns.map((column) => quoteIdent(column.name)).join(', ');
  const tuples = rows.map((row) => {
    const cells = row.map((cell) => {
      if (cell.kind === 'default') return 'DEFAULT';
      params.push(cell.value);
      return '?';
    });
    return `(${cells.join(', ')})`;
  });
  const sql = `INSERT INTO ${quoteIdent(plan.table.name)} (${columns}) VALUES ${tuples.join(', ')}`;
  return { sql, params };
}

/** `UPDATE … SET … WHERE <key>`: with the pool's CLIENT_FOUND_ROWS, affectedRows counts matched rows. */
export function compileUpdate(plan: UpdatePlan): CompiledQuery {
  const params: unknown[] = [];
  const set = plan.set.map(({ column, value }) => {
    params.push(value);
    return `${quoteIdent(column.name)} = ?`;
  });
  const where = compileWhere(plan.where, plan.condition, params);
  return {
    sql: `UPDATE ${quoteIdent(plan.table.name)} SET ${set.join(', ')} WHERE ${where}`,
    params,
  };
}

/**
 * A policy's check after an update (`plan.recheck`): a SELECT that returns a row exactly when a
 * row the UPDATE wrote no longer satisfies `plan.condition`, run in the same transaction. The
 * written rows are found by the key (unless the SET changes its column) and by the values just
 * set, compared null-safely; a row found that the UPDATE did not write (one that already held
 * those values and failed the condition) can only make the check refuse, never pass. Null when
 * there is nothing to check.
 */
export function compileUpdateRecheck(plan: UpdatePlan): CompiledQuery | null {
  if (!plan.recheck || !plan.condition) return null;
  const params: unknown[] = [];
  const parts: string[] = [];
  if (!plan.set.some(({ column }) => column.name === plan.where.column.name)) {
    parts.push(compileKeyMatch(plan.where, params));
  }
  for (const { column, value } of plan.set) {
    params.push(value);
    parts.push(`${quoteIdent(column.name)} <=> ?`);
  }
  parts.push(`(${compileFilter(plan.condition, params)}) IS NOT TRUE`);
  return {
    sql: `SELECT 1 FROM ${quoteIdent(plan.table.name)} WHERE ${parts.join(' AND ')} LIMIT 1`,
    params,
  };
}

/**
 * A policy's check after a create (`plan.recheck`): SELECTs that return a row exactly when an
 * inserted row does not satisfy `plan.condition`, run in the same transaction. The inserted rows
 * are found by the values they were given, compared null-safely (columns left to their default
 * are not compared; the condition sees their stored default); a row found that this INSERT did
 * not write can only make the check refuse. As many SELECTs as the placeholder limit needs.
 */
export function compileInsertRechecks(
  plan: InsertPlan,
  maxPlaceholders = MAX_PLACEHOLDERS,
): CompiledQuery[] {
  const condition = plan.condition;
  if (!plan.recheck || !condition) return [];
  const conditionParams: unknown[] = [];
  const conditionSql = compileFilter(condition, conditionParams);
  const checks: CompiledQuery[] = [];
  let rows: string[] = [];
  let params: unknown[] = [];
  const flush = () => {
    if (rows.length === 0) return;
    checks.push({
      sql: `SELECT 1 FROM ${quoteIdent(plan.table.name)} WHERE (${rows.join(' OR ')}) AND (${conditionSql}) IS NOT TRUE LIMIT 1`,
      params: [...params, ...conditionParams],
    });
    rows = [];
    params = [];
  };
  for (const row of plan.rows) {
    const values = row.flatMap((cell, at) =>
      cell.kind === 'value' ? [{ column: plan.columns[at] as ColumnInfo, value: cell.value }] : [],
    );
    if (params.length + values.length + conditionParams.length > maxPlaceholders) flush();
    rows.push(`(${values.map(({ column }) => `${quoteIdent(column.name)} <=> ?`).join(' AND ')})`);
    params.push(...values.map(({ value }) => value));
  }
  flush();
  return checks;
}

export function compileDelete(plan: DeletePlan): CompiledQuery {
  const params: unknown[] = [];
  const where = compileWhere(plan.where, plan.condition, params);
  return { sql: `DELETE FROM ${quoteIdent(plan.table.name)} WHERE ${where}`, params };
}

/** The key, and a policy's row condition when there is one (parenthesised by compileFilter). */
function compileWhere(
  key: KeyMatch,
  condition: PlannedFilter | null | undefined,
  params: unknown[],
): string {
  const match = compileKeyMatch(key, params);
  return condition ? `${match} AND ${compileFilter(condition, params)}` : match;
}

/** A number goes through the read compiler's compileValue, which keeps it exact (see there). */
function compileKeyMatch(match: KeyMatch, params: unknown[]): string {
  const column = quoteIdent(match.column.name);
  if (match.kind === 'isNull') return `${column} IS NULL`;
  const { value } = match;
  if (value.kind === 'number') {
    return `${column} = ${compileValue({ kind: 'number', text: value.text }, params)}`;
  }
  params.push(value.value);
  return `${column} = ?`;
}
