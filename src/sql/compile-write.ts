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

/** What one statement of a write answered. */
export interface StatementResult {
  /** Rows inserted; for an UPDATE (the pool sets CLIENT_FOUND_ROWS) the rows it matched. */
  readonly affectedRows: number;
  /** The first AUTO_INCREMENT id it made: a number, its digits beyond 2^53, or null. */
  readonly insertId: number | string | null;
}

/** What a check after a write is made from, once the write's statements ran. */
export interface WriteOutcome {
  /** The rows of the check's lookup, as arrays in select order; none without a lookup. */
  readonly found: readonly (readonly unknown[])[];
  /** Each statement's answer, in order. */
  readonly results: readonly StatementResult[];
}

/**
 * A policy's check after a write (`plan.recheck`, plan/written-rows.ts), run in the write's
 * transaction: `lookup` before the statements, then the SELECTs `queries` makes of what the
 * lookup and the statements answered. Each SELECT returns a row exactly when a written row does
 * not satisfy `plan.condition` or is not found where it must be; `queries` gives null when the
 * statements did not write the rows it expected. Either way the write is rolled back and refused.
 */
export interface CompiledGuard {
  readonly lookup: CompiledQuery | null;
  readonly queries: (outcome: WriteOutcome) => readonly CompiledQuery[] | null;
}

/**
 * The check of an INSERT: its rows found by the primary key values they give, or by the
 * AUTO_INCREMENT ids each statement made (its first id and row count, stepping by the session's
 * auto_increment_increment). As many SELECTs as the placeholder limit needs. Null when there is
 * nothing to check.
 */
export function compileInsertGuard(
  plan: InsertPlan,
  maxPlaceholders = MAX_PLACEHOLDERS,
): CompiledGuard | null {
  const { recheck, condition } = plan;
  if (!recheck || !condition) return null;
  const check = conditionOf(condition);
  if (recheck.kind === 'auto-increment') {
    const column = quoteIdent(recheck.column.name);
    return {
      lookup: null,
      queries: ({ results }) => {
        let inserted = 0;
        const queries: CompiledQuery[] = [];
        for (const { insertId, affectedRows } of results) {
          if (insertId === null) return null;
          inserted += affectedRows;
          const params: unknown[] = [];
          const first = () => compileValue({ kind: 'number', text: String(insertId) }, params);
          // first, first + step, …, first + (n - 1) × step: a range on the key, then the step.
          const range = `${column} BETWEEN ${first()} AND ${first()} + CAST(? AS UNSIGNED) * @@auto_increment_increment`;
          params.push(String(affectedRows - 1));
          const step = `MOD(${column}, @@auto_increment_increment) = MOD(${first()}, @@auto_increment_increment)`;
          queries.push(
            checkQuery(plan.table.name, `${range} AND ${step}`, params, affectedRows, check),
          );
        }
        return inserted === plan.rows.length ? queries : null;
      },
    };
  }
  const at = recheck.key.map((key) => plan.columns.findIndex(({ name }) => name === key.name));
  const keys = plan.rows.map((row) =>
    at.map((index) => {
      const cell = row[index];
      return cell?.kind === 'value' ? cell.value : undefined;
    }),
  );
  const queries = keyChecks(plan.table.name, recheck.key, keys, check, maxPlaceholders);
  return { lookup: null, queries: () => queries };
}

/**
 * The check of an UPDATE. By its key when that is the primary key (`update(id,6)`): the row at
 * that key, when the UPDATE matched one. Otherwise by the primary keys a SELECT … FOR UPDATE
 * with the UPDATE's own WHERE read just before it: locked, those rows are the ones it matches,
 * which its matched-row count confirms (a row that came in between would show in it). Null when
 * there is nothing to check.
 */
export function compileUpdateGuard(
  plan: UpdatePlan,
  maxPlaceholders = MAX_PLACEHOLDERS,
): CompiledGuard | null {
  const { recheck, condition } = plan;
  if (!recheck || !condition) return null;
  const check = conditionOf(condition);
  const table = plan.table.name;
  if (recheck.kind === 'key') {
    return {
      lookup: null,
      queries: ({ results }) => {
        const matched = results[0]?.affectedRows ?? 0;
        if (matched === 0) return [];
        const params: unknown[] = [];
        const key = compileKeyMatch(plan.where, params);
        return [checkQuery(table, key, params, matched, check)];
      },
    };
  }
  const params: unknown[] = [];
  const where = compileWhere(plan.where, condition, params);
  const columns = recheck.key.map((column) => quoteIdent(column.name)).join(', ');
  return {
    lookup: {
      sql: `SELECT ${columns} FROM ${quoteIdent(table)} WHERE ${where} FOR UPDATE`,
      params,
    },
    queries: ({ found, results }) =>
      (results[0]?.affectedRows ?? 0) === found.length
        ? keyChecks(table, recheck.key, found, check, maxPlaceholders)
        : null,
  };
}

/** A row condition compiled once, its text and parameters reused by every SELECT of a check. */
interface Condition {
  readonly sql: string;
  readonly params: readonly unknown[];
}

function conditionOf(condition: PlannedFilter): Condition {
  const params: unknown[] = [];
  return { sql: compileFilter(condition, params), params };
}

/**
 * `SELECT COUNT(*) … WHERE <rows> HAVING …`: one row back (the aggregate's only group) exactly
 * when the rows found are not `count` or one of them does not satisfy the condition.
 */
function checkQuery(
  table: string,
  rows: string,
  rowParams: readonly unknown[],
  count: number,
  condition: Condition,
): CompiledQuery {
  return {
    sql: `SELECT COUNT(*) FROM ${quoteIdent(table)} WHERE ${rows} HAVING COUNT(*) <> ? OR SUM((${condition.sql}) IS NOT TRUE) > 0`,
    params: [...rowParams, count, ...condition.params],
  };
}

/** The checks of rows found by their primary key values, as few as the placeholder limit allows. */
function keyChecks(
  table: string,
  key: readonly ColumnInfo[],
  rows: readonly (readonly unknown[])[],
  condition: Condition,
  maxPlaceholders: number,
): CompiledQuery[] {
  const perRow = key.length;
  const room = Math.max(1, Math.floor((maxPlaceholders - 1 - condition.params.length) / perRow));
  const checks: CompiledQuery[] = [];
  for (let start = 0; start < rows.length; start += room) {
    const chunk = rows.slice(start, start + room);
    const params: unknown[] = [];
    let match: string;
    if (perRow === 1) {
      const column = key[0] as ColumnInfo;
      const values = chunk.map((values) => keyValue(column, values[0], params));
      match = `${quoteIdent(column.name)} IN (${values.join(', ')})`;
    } else {
      const each = chunk.map(
        (values) =>
          `(${key.map((column, k) => `${quoteIdent(column.name)} = ${keyValue(column, values[k], params)}`).join(' AND ')})`,
      );
      match = `(${each.join(' OR ')})`;
    }
    checks.push(checkQuery(table, match, params, chunk.length, condition));
  }
  return checks;
}

/**
 * A primary key value as a placeholder: a number exactly, as reads compare numbers
 * (compileValue: a string parameter would be compared as a double, wrong beyond 2^53); anything
 * else as it was written or read (text, a date as text, bytes).
 */
function keyValue(column: ColumnInfo, value: unknown, params: unknown[]): string {
  if (
    (column.kind === 'integer' || column.kind === 'decimal' || column.kind === 'year') &&
    (typeof value === 'number' || typeof value === 'string')
  ) {
    return compileValue({ kind: 'number', text: String(value) }, params);
  }
  params.push(value ?? null);
  return '?';
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
